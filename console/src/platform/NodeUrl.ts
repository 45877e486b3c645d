/** node:url for the browser build: only `fileURLToPath`, which prover/kernels/Wasm.ts calls before it finds no file. */
export const fileURLToPath = (url: URL | string): string => new URL(url).pathname
