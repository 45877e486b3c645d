/**
 * Which kernels the prover uses: the WASM build when it exists, else the TypeScript ones. Both give
 * identical proofs; the choice only changes speed.
 */
import type { Kernels } from "./Kernels.js"
import { typescriptKernels } from "./Typescript.js"
import { loadWasmKernels } from "./Wasm.js"

let loaded: Kernels | undefined

/** The fastest kernels available in this thread, loaded once. */
export const defaultKernels = (): Kernels => (loaded ??= loadWasmKernels() ?? typescriptKernels)

export { loadWasmKernels, typescriptKernels }
