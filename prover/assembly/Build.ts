/**
 * Compiles the kernels (`prover/assembly/Kernels.ts`, AssemblyScript) to `prover/kernels/kernels.wasm`:
 * `npm run build:wasm`, run by `npm ci` / `npm install` through `prepare`. Without AssemblyScript (a
 * production install omits dev dependencies) it only says so: the prover then runs its TypeScript
 * kernels, which give identical proofs, more slowly.
 */
import { renameSync } from "node:fs"
import { fileURLToPath } from "node:url"

export const KERNELS_SOURCE = fileURLToPath(new URL("./Kernels.ts", import.meta.url))
export const KERNELS_WASM = fileURLToPath(new URL("../kernels/kernels.wasm", import.meta.url))

interface Asc {
  readonly main: (argv: Array<string>, options?: object) => Promise<{ readonly error: Error | null }>
}

const loadAsc = async (): Promise<Asc | undefined> => {
  try {
    const module = (await import("assemblyscript/asc")) as unknown as { readonly default: Asc }
    return module.default
  } catch {
    return undefined
  }
}

/** Builds the module; `false` when AssemblyScript is not installed. Written to a temporary name, then renamed. */
export const buildWasm = async (target: string = KERNELS_WASM): Promise<boolean> => {
  const asc = await loadAsc()
  if (asc === undefined) return false
  const temporary = `${target}.${process.pid}.${Date.now()}.tmp`
  const errors: Array<string> = []
  const { error } = await asc.main([KERNELS_SOURCE, "--outFile", temporary, "-O3", "--runtime", "stub", "--noAssert"], {
    stderr: { write: (text: string) => errors.push(text) }
  })
  // A build script (npm run build:wasm), not part of the service: a thrown Error ends it with the compiler's output.
  if (error !== null) throw new Error(`asc failed: ${error.message}\n${errors.join("")}`)
  renameSync(temporary, target)
  return true
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const built = await buildWasm()
  console.log(
    built
      ? `built ${KERNELS_WASM}`
      : "assemblyscript is not installed: skipped the WASM kernels (the prover uses its TypeScript kernels)"
  )
}
