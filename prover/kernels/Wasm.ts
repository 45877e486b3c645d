/**
 * The kernels compiled from `prover/assembly/Kernels.ts`. The module is loaded synchronously (it is
 * a few KB), so a synchronous verifier can use it too. Vectors are copied into linear memory above
 * the module's heap base for each call and the result copied out: copies are memcpy-fast, and the
 * arithmetic stays inside WASM, where a per-element call from JS would cost more than the work.
 */
import { existsSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import type { Ext } from "../field/Cubic.js"
import type { BaseVec, ExtVec, Kernels } from "./Kernels.js"

export const KERNELS_WASM_URL = new URL("./kernels.wasm", import.meta.url)

/** The slice of the WebAssembly JS API used here (the project's `lib` has no DOM typings). */
interface WasmMemory {
  readonly buffer: ArrayBuffer
  readonly grow: (pages: number) => number
}
const WebAssemblyApi = (
  globalThis as unknown as {
    readonly WebAssembly: {
      readonly Module: new (bytes: Uint8Array) => object
      readonly Instance: new (module: object, imports: object) => { readonly exports: unknown }
    }
  }
).WebAssembly

interface Exports {
  readonly memory: WasmMemory
  readonly heapBase: () => number
  readonly ntt: (ptr: number, n: number, root: bigint, scratch: number) => void
  readonly powers: (dst: number, n: number, start: bigint, step: bigint) => void
  readonly add: (dst: number, a: number, b: number, n: number) => void
  readonly sub: (dst: number, a: number, b: number, n: number) => void
  readonly mul: (dst: number, a: number, b: number, n: number) => void
  readonly batchInverse: (dst: number, src: number, n: number) => void
  readonly extAxpy: (dst: number, acc: number, alpha: number, v: number, n: number) => void
  readonly extMulBase: (dst: number, a: number, v: number, n: number) => void
  readonly extMul: (dst: number, a: number, b: number, n: number) => void
  readonly extScale: (dst: number, a: number, k: number, n: number) => void
  readonly extBatchInverse: (dst: number, src: number, n: number) => void
  readonly extShift: (dst: number, xs: number, z: number, n: number) => void
  readonly friFold: (dst: number, layer: number, beta: number, inv2x: number, half: number) => void
  readonly evaluate: (dst: number, coefficients: number, n: number, z: number) => void
}

const PAGE = 65_536

const checkLength = (actual: number, expected: number): void => {
  if (actual !== expected) throw new RangeError(`vector length ${actual}, expected ${expected}`)
}

/** Kernels over one WASM instance. Not reentrant: one call at a time (each thread has its own instance). */
const kernelsOf = (wasm: Exports): Kernels => {
  const base = wasm.heapBase()

  /** Lays the inputs out from the heap base, then `outputs` zeroed regions; returns their byte offsets. */
  const arena = (inputs: ReadonlyArray<BigUint64Array>, outputs: ReadonlyArray<number>) => {
    let offset = base
    const place = (words: number) => {
      const at = offset
      offset += words * 8
      return at
    }
    const inputAt = inputs.map((v) => place(v.length))
    const outputAt = outputs.map((words) => place(words))
    const missing = offset - wasm.memory.buffer.byteLength
    if (missing > 0) wasm.memory.grow(Math.ceil(missing / PAGE))
    const memory = wasm.memory.buffer
    inputs.forEach((v, i) => new BigUint64Array(memory, inputAt[i]!, v.length).set(v))
    return { inputAt, outputAt }
  }
  const read = (at: number, words: number): BigUint64Array => new BigUint64Array(wasm.memory.buffer, at, words).slice()
  const ext = (e: Ext): BigUint64Array => BigUint64Array.of(e[0], e[1], e[2])

  const binary =
    (op: (dst: number, a: number, b: number, n: number) => void, width: number) =>
    (a: BigUint64Array, b: BigUint64Array): BigUint64Array => {
      checkLength(b.length, a.length)
      const { inputAt, outputAt } = arena([a, b], [a.length])
      op(outputAt[0]!, inputAt[0]!, inputAt[1]!, a.length / width)
      return read(outputAt[0]!, a.length)
    }

  return {
    name: "wasm",
    ntt: (coefficients: BaseVec, root: bigint): BaseVec => {
      const n = coefficients.length
      if (!Number.isInteger(Math.log2(n))) throw new RangeError(`NTT size ${n} is not a power of two`)
      const { inputAt, outputAt } = arena([coefficients], [Math.max(1, n / 2)])
      wasm.ntt(inputAt[0]!, n, root, outputAt[0]!)
      return read(inputAt[0]!, n)
    },
    powers: (start: bigint, step: bigint, n: number): BaseVec => {
      const { outputAt } = arena([], [n])
      wasm.powers(outputAt[0]!, n, start, step)
      return read(outputAt[0]!, n)
    },
    add: binary(wasm.add, 1),
    sub: binary(wasm.sub, 1),
    mul: binary(wasm.mul, 1),
    batchInverse: (a: BaseVec): BaseVec => {
      const { inputAt, outputAt } = arena([a], [a.length])
      wasm.batchInverse(outputAt[0]!, inputAt[0]!, a.length)
      return read(outputAt[0]!, a.length)
    },
    extAxpy: (acc: ExtVec, alpha: Ext, v: BaseVec): ExtVec => {
      checkLength(acc.length, 3 * v.length)
      const { inputAt, outputAt } = arena([acc, ext(alpha), v], [acc.length])
      wasm.extAxpy(outputAt[0]!, inputAt[0]!, inputAt[1]!, inputAt[2]!, v.length)
      return read(outputAt[0]!, acc.length)
    },
    extMulBase: (a: ExtVec, v: BaseVec): ExtVec => {
      checkLength(a.length, 3 * v.length)
      const { inputAt, outputAt } = arena([a, v], [a.length])
      wasm.extMulBase(outputAt[0]!, inputAt[0]!, inputAt[1]!, v.length)
      return read(outputAt[0]!, a.length)
    },
    extAdd: binary(wasm.add, 1),
    extSub: binary(wasm.sub, 1),
    extMul: binary(wasm.extMul, 3),
    extScale: (a: ExtVec, k: Ext): ExtVec => {
      const { inputAt, outputAt } = arena([a, ext(k)], [a.length])
      wasm.extScale(outputAt[0]!, inputAt[0]!, inputAt[1]!, a.length / 3)
      return read(outputAt[0]!, a.length)
    },
    extBatchInverse: (a: ExtVec): ExtVec => {
      const { inputAt, outputAt } = arena([a], [a.length])
      wasm.extBatchInverse(outputAt[0]!, inputAt[0]!, a.length / 3)
      return read(outputAt[0]!, a.length)
    },
    extShift: (xs: BaseVec, z: Ext): ExtVec => {
      const { inputAt, outputAt } = arena([xs, ext(z)], [3 * xs.length])
      wasm.extShift(outputAt[0]!, inputAt[0]!, inputAt[1]!, xs.length)
      return read(outputAt[0]!, 3 * xs.length)
    },
    friFold: (layer: ExtVec, beta: Ext, inv2x: BaseVec): ExtVec => {
      const half = layer.length / 6
      checkLength(inv2x.length, half)
      const { inputAt, outputAt } = arena([layer, ext(beta), inv2x], [3 * half])
      wasm.friFold(outputAt[0]!, inputAt[0]!, inputAt[1]!, inputAt[2]!, half)
      return read(outputAt[0]!, 3 * half)
    },
    evaluate: (coefficients: BaseVec, z: Ext): Ext => {
      const { inputAt, outputAt } = arena([coefficients, ext(z)], [3])
      wasm.evaluate(outputAt[0]!, inputAt[0]!, coefficients.length, inputAt[1]!)
      const [e0, e1, e2] = read(outputAt[0]!, 3)
      return [e0!, e1!, e2!]
    }
  }
}

/** The WASM kernels from `url`, or `undefined` when the module has not been built (`npm run build:wasm`). */
export const loadWasmKernels = (url: URL = KERNELS_WASM_URL): Kernels | undefined => {
  const path = fileURLToPath(url)
  if (!existsSync(path)) return undefined
  const module = new WebAssemblyApi.Module(readFileSync(path))
  const instance = new WebAssemblyApi.Instance(module, {
    env: {
      abort: () => {
        // AssemblyScript's abort import must throw to unwind the WASM stack; the prover's caller maps it.
        throw new Error("WASM kernel aborted")
      }
    }
  })
  return kernelsOf(instance.exports as unknown as Exports)
}
