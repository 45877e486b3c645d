import { beforeAll, describe, expect, it } from "@effect/vitest"
import { fileURLToPath } from "node:url"
import * as E from "../../prover/field/Cubic.js"
import * as F from "../../prover/field/Goldilocks.js"
import type { Kernels } from "../../prover/kernels/Kernels.js"
import { typescriptKernels as ts } from "../../prover/kernels/Typescript.js"
import { loadWasmKernels } from "../../prover/kernels/Wasm.js"
import { elements, wasmKernels } from "./Support.js"

let wasm: Kernels
beforeAll(async () => {
  wasm = await wasmKernels()
})

const ext = (g: ReturnType<typeof elements>): E.Ext => [g.next(), g.next(), g.next()]

describe("Goldilocks", () => {
  it("7 generates the multiplicative group", () => {
    for (const q of [2n, 3n, 5n, 17n, 257n, 65537n]) expect(F.pow(F.GENERATOR, (F.P - 1n) / q)).not.toBe(1n)
    expect(F.pow(F.GENERATOR, F.P - 1n)).toBe(1n)
  })

  it("roots of unity have exactly the order asked for", () => {
    for (const n of [2, 8, 1024, 2 ** 32]) {
      const w = F.rootOfUnity(n)
      expect(F.pow(w, BigInt(n))).toBe(1n)
      expect(F.pow(w, BigInt(n / 2))).toBe(F.P - 1n)
    }
    expect(() => F.rootOfUnity(12)).toThrow()
  })

  it("inverts every nonzero element and refuses zero", () => {
    const g = elements(1n)
    for (let i = 0; i < 200; i++) {
      const a = g.nonzero()
      expect(F.mul(a, F.inv(a))).toBe(1n)
    }
    expect(() => F.inv(0n)).toThrow()
  })
})

describe("cubic extension", () => {
  it("X³ − X − 1 is irreducible: squarefree, and X^(p²) ≠ X", () => {
    // discriminant of x³ + ax + b is −4a³ − 27b²; here a = b = −1: 4 − 27 = −23, nonzero mod p
    expect(F.sub(4n, 27n)).not.toBe(0n)
    const X: E.Ext = [0n, 1n, 0n]
    expect(E.equals(E.pow(X, F.P * F.P), X)).toBe(false)
    expect(E.equals(E.pow(X, F.P * F.P * F.P), X)).toBe(true)
  })

  it("X³ = X + 1", () => {
    expect(E.pow([0n, 1n, 0n], 3n)).toEqual([1n, 1n, 0n])
  })

  it("multiplies consistently and inverts", () => {
    const g = elements(2n)
    for (let i = 0; i < 200; i++) {
      const a = ext(g),
        b = ext(g),
        c = ext(g)
      expect(E.mul(E.mul(a, b), c)).toEqual(E.mul(a, E.mul(b, c)))
      expect(E.mul(a, E.add(b, c))).toEqual(E.add(E.mul(a, b), E.mul(a, c)))
      if (!E.equals(a, E.ZERO)) expect(E.mul(a, E.inv(a))).toEqual(E.ONE)
    }
  })
})

describe.each([["typescript"], ["wasm"]] as const)("%s kernels", (name) => {
  const k = (): Kernels => (name === "wasm" ? wasm : ts)

  it("NTT is the DFT, and the inverse root undoes it", () => {
    const g = elements(3n)
    for (const n of [1, 2, 8, 64]) {
      const a = g.vector(n)
      const w = F.rootOfUnity(n)
      const out = k().ntt(a, w)
      for (let i = 0; i < n; i++) {
        let sum = 0n
        for (let j = 0; j < n; j++) sum = F.add(sum, F.mul(a[j]!, F.pow(w, BigInt(i * j))))
        expect(out[i]).toBe(sum)
      }
      const back = k().ntt(out, F.inv(w))
      const nInv = F.inv(BigInt(n))
      expect(Array.from(back, (x) => F.mul(x, nInv))).toEqual(Array.from(a))
    }
  })

  it("inverts vectors in one pass", () => {
    const g = elements(4n)
    const a = BigUint64Array.from({ length: 100 }, () => g.nonzero())
    const inv = k().batchInverse(a)
    a.forEach((x, i) => expect(F.mul(x, inv[i]!)).toBe(1n))
    const e = BigUint64Array.from({ length: 150 }, () => g.nonzero())
    const einv = k().extBatchInverse(e)
    for (let i = 0; i < 50; i++) {
      const x: E.Ext = [e[3 * i]!, e[3 * i + 1]!, e[3 * i + 2]!]
      expect(E.mul(x, [einv[3 * i]!, einv[3 * i + 1]!, einv[3 * i + 2]!])).toEqual(E.ONE)
    }
  })

  it("does not modify its arguments", () => {
    const g = elements(5n)
    const a = g.vector(16),
      b = g.vector(16)
    const a0 = a.slice(),
      b0 = b.slice()
    k().mul(a, b)
    k().ntt(a, F.rootOfUnity(16))
    k().extMul(g.vector(48), g.vector(48))
    expect(a).toEqual(a0)
    expect(b).toEqual(b0)
  })

  it("refuses vectors of mismatched lengths", () => {
    expect(() => k().add(new BigUint64Array(4), new BigUint64Array(5))).toThrow(RangeError)
    expect(() => k().extMulBase(new BigUint64Array(9), new BigUint64Array(4))).toThrow(RangeError)
  })
})

describe("WASM and TypeScript kernels agree bit for bit", () => {
  const g = elements(6n)

  it("on base-field arithmetic, edge values included", () => {
    const a = g.vector(5000),
      b = g.vector(5000)
    expect(wasm.mul(a, b)).toEqual(ts.mul(a, b))
    expect(wasm.add(a, b)).toEqual(ts.add(a, b))
    expect(wasm.sub(a, b)).toEqual(ts.sub(a, b))
    const edges = [0n, 1n, F.P - 1n, F.P - 2n, 0xffff_ffffn, 0x1_0000_0000n, F.P - 0x1_0000_0000n, (F.P + 1n) / 2n]
    const x = BigUint64Array.from(edges.flatMap((e) => edges.map(() => e)))
    const y = BigUint64Array.from(edges.flatMap(() => edges))
    expect(wasm.mul(x, y)).toEqual(ts.mul(x, y))
    expect(wasm.add(x, y)).toEqual(ts.add(x, y))
    expect(wasm.sub(x, y)).toEqual(ts.sub(x, y))
  })

  it("on NTTs, powers and inversions", () => {
    for (const n of [1, 2, 16, 1024]) {
      const a = g.vector(n)
      expect(wasm.ntt(a, F.rootOfUnity(n))).toEqual(ts.ntt(a, F.rootOfUnity(n)))
    }
    expect(wasm.powers(7n, F.rootOfUnity(256), 256)).toEqual(ts.powers(7n, F.rootOfUnity(256), 256))
    const a = BigUint64Array.from({ length: 300 }, () => g.nonzero())
    expect(wasm.batchInverse(a)).toEqual(ts.batchInverse(a))
    expect(wasm.extBatchInverse(a)).toEqual(ts.extBatchInverse(a))
  })

  it("on extension arithmetic, folding and evaluation", () => {
    const n = 512
    const a = g.vector(3 * n),
      b = g.vector(3 * n),
      v = g.vector(n),
      z = ext(g),
      beta = ext(g)
    expect(wasm.extAxpy(a, z, v)).toEqual(ts.extAxpy(a, z, v))
    expect(wasm.extMulBase(a, v)).toEqual(ts.extMulBase(a, v))
    expect(wasm.extAdd(a, b)).toEqual(ts.extAdd(a, b))
    expect(wasm.extSub(a, b)).toEqual(ts.extSub(a, b))
    expect(wasm.extMul(a, b)).toEqual(ts.extMul(a, b))
    expect(wasm.extScale(a, z)).toEqual(ts.extScale(a, z))
    expect(wasm.extShift(v, z)).toEqual(ts.extShift(v, z))
    expect(wasm.friFold(a, beta, v.subarray(0, n / 2))).toEqual(ts.friFold(a, beta, v.subarray(0, n / 2)))
    expect(wasm.evaluate(v, z)).toEqual(ts.evaluate(v, z))
  })

  it("on vectors larger than the module's initial memory", () => {
    const a = g.vector(1 << 16),
      b = g.vector(1 << 16)
    expect(wasm.mul(a, b)).toEqual(ts.mul(a, b))
  })
})

describe("loading the WASM kernels", () => {
  it("is undefined when the module has not been built, so the TypeScript kernels are used", () => {
    expect(loadWasmKernels(new URL("./no-such-kernels.wasm", import.meta.url))).toBeUndefined()
    expect(fileURLToPath(new URL("./no-such-kernels.wasm", import.meta.url))).toMatch(/no-such-kernels/)
  })
})
