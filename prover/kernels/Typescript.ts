/**
 * The kernels in plain TypeScript over BigInt: the fallback when the WASM module has not been built,
 * and the reference the WASM kernels are tested against.
 */
import * as E from "../field/Cubic.js"
import * as F from "../field/Goldilocks.js"
import type { BaseVec, ExtVec, Kernels } from "./Kernels.js"

const { P } = F

const readExt = (v: ExtVec, i: number): E.Ext => [v[3 * i]!, v[3 * i + 1]!, v[3 * i + 2]!]

const writeExt = (v: ExtVec, i: number, e: E.Ext): void => {
  v[3 * i] = e[0]
  v[3 * i + 1] = e[1]
  v[3 * i + 2] = e[2]
}

const checkLength = (actual: number, expected: number): void => {
  if (actual !== expected) throw new RangeError(`vector length ${actual}, expected ${expected}`)
}

const bitReverse = (i: number, bits: number): number => {
  let r = 0
  for (let b = 0; b < bits; b++) r = (r << 1) | ((i >>> b) & 1)
  return r
}

const ntt = (coefficients: BaseVec, root: bigint): BaseVec => {
  const n = coefficients.length
  const bits = Math.log2(n)
  if (!Number.isInteger(bits)) throw new RangeError(`NTT size ${n} is not a power of two`)
  const a = new BigUint64Array(n)
  for (let i = 0; i < n; i++) a[bitReverse(i, bits)] = coefficients[i]!
  for (let len = 2; len <= n; len <<= 1) {
    const half = len >> 1
    const step = F.pow(root, BigInt(n / len))
    const twiddles = new Array<bigint>(half)
    twiddles[0] = 1n
    for (let j = 1; j < half; j++) twiddles[j] = (twiddles[j - 1]! * step) % P
    for (let start = 0; start < n; start += len) {
      for (let j = 0; j < half; j++) {
        const u = a[start + j]!
        const v = (a[start + j + half]! * twiddles[j]!) % P
        a[start + j] = F.add(u, v)
        a[start + j + half] = F.sub(u, v)
      }
    }
  }
  return a
}

const powers = (start: bigint, step: bigint, n: number): BaseVec => {
  const out = new BigUint64Array(n)
  let x = start
  for (let i = 0; i < n; i++) {
    out[i] = x
    x = (x * step) % P
  }
  return out
}

const zip =
  (op: (x: bigint, y: bigint) => bigint) =>
  (a: BaseVec, b: BaseVec): BaseVec => {
    checkLength(b.length, a.length)
    const out = new BigUint64Array(a.length)
    for (let i = 0; i < a.length; i++) out[i] = op(a[i]!, b[i]!)
    return out
  }

const batchInverse = (a: BaseVec): BaseVec => {
  const n = a.length
  const out = new BigUint64Array(n)
  let acc = 1n
  for (let i = 0; i < n; i++) {
    out[i] = acc
    acc = (acc * a[i]!) % P
  }
  let inverse = F.inv(acc)
  for (let i = n - 1; i >= 0; i--) {
    out[i] = (out[i]! * inverse) % P
    inverse = (inverse * a[i]!) % P
  }
  return out
}

const extMap = (n: number, f: (i: number) => E.Ext): ExtVec => {
  const out = new BigUint64Array(3 * n)
  for (let i = 0; i < n; i++) writeExt(out, i, f(i))
  return out
}

const extAxpy = (acc: ExtVec, alpha: E.Ext, v: BaseVec): ExtVec => {
  checkLength(acc.length, 3 * v.length)
  return extMap(v.length, (i) => E.add(readExt(acc, i), E.mulBase(alpha, v[i]!)))
}

const extMulBase = (a: ExtVec, v: BaseVec): ExtVec => {
  checkLength(a.length, 3 * v.length)
  return extMap(v.length, (i) => E.mulBase(readExt(a, i), v[i]!))
}

const extZip =
  (op: (x: E.Ext, y: E.Ext) => E.Ext) =>
  (a: ExtVec, b: ExtVec): ExtVec => {
    checkLength(b.length, a.length)
    return extMap(a.length / 3, (i) => op(readExt(a, i), readExt(b, i)))
  }

const extScale = (a: ExtVec, k: E.Ext): ExtVec => extMap(a.length / 3, (i) => E.mul(readExt(a, i), k))

const extBatchInverse = (a: ExtVec): ExtVec => {
  const n = a.length / 3
  const prefix = new Array<E.Ext>(n)
  let acc = E.ONE
  for (let i = 0; i < n; i++) {
    prefix[i] = acc
    acc = E.mul(acc, readExt(a, i))
  }
  let inverse = E.inv(acc)
  const out = new BigUint64Array(a.length)
  for (let i = n - 1; i >= 0; i--) {
    writeExt(out, i, E.mul(prefix[i]!, inverse))
    inverse = E.mul(inverse, readExt(a, i))
  }
  return out
}

const extShift = (xs: BaseVec, z: E.Ext): ExtVec => extMap(xs.length, (i) => E.sub(E.fromBase(xs[i]!), z))

const INV_TWO = F.inv(2n)

const friFold = (layer: ExtVec, beta: E.Ext, inv2x: BaseVec): ExtVec => {
  const half = layer.length / 6
  checkLength(inv2x.length, half)
  return extMap(half, (i) => {
    const f = readExt(layer, i)
    const g = readExt(layer, i + half)
    return E.add(E.mulBase(E.add(f, g), INV_TWO), E.mul(beta, E.mulBase(E.sub(f, g), inv2x[i]!)))
  })
}

const evaluate = (coefficients: BaseVec, z: E.Ext): E.Ext => {
  let acc = E.ZERO
  for (let i = coefficients.length - 1; i >= 0; i--) acc = E.add(E.mul(acc, z), E.fromBase(coefficients[i]!))
  return acc
}

export const typescriptKernels: Kernels = {
  name: "typescript",
  ntt,
  powers,
  add: zip(F.add),
  sub: zip(F.sub),
  mul: zip(F.mul),
  batchInverse,
  extAxpy,
  extMulBase,
  extAdd: extZip(E.add),
  extSub: extZip(E.sub),
  extMul: extZip(E.mul),
  extScale,
  extBatchInverse,
  extShift,
  friFold,
  evaluate
}
