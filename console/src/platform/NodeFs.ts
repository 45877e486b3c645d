/**
 * node:fs for the browser build: the prover's verifier (prover/kernels/Wasm.ts) looks for its
 * compiled kernels on disk and falls back to the TypeScript kernels when they are absent, which is
 * what the browser gets. Nothing else of core/ or the verifier reads files.
 */
export const existsSync = (_path: string): boolean => false

export const readFileSync = (path: string): Uint8Array => {
  throw new Error(`${path}: there are no files in the browser build`)
}
