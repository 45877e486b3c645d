/**
 * The cubic extension F_p[X]/(X³ − X − 1) of Goldilocks (about 192 bits): every Fiat–Shamir
 * challenge (constraint weights, the out-of-domain point, DEEP and FRI weights) is drawn here, so
 * the soundness terms that depend on the field size are far below 2^-100 while the trace and its
 * commitments stay in the 64-bit base field. X³ − X − 1 has no root in F_p (see the tests), so the
 * quotient is a field.
 *
 * An element a0 + a1·X + a2·X² is `[a0, a1, a2]`; in vectors the three limbs are interleaved.
 */
import * as F from "./Goldilocks.js"

export type Ext = readonly [bigint, bigint, bigint]

export const ZERO: Ext = [0n, 0n, 0n]
export const ONE: Ext = [1n, 0n, 0n]

export const fromBase = (a: bigint): Ext => [a, 0n, 0n]

export const equals = (a: Ext, b: Ext): boolean => a[0] === b[0] && a[1] === b[1] && a[2] === b[2]

export const add = (a: Ext, b: Ext): Ext => [F.add(a[0], b[0]), F.add(a[1], b[1]), F.add(a[2], b[2])]

export const sub = (a: Ext, b: Ext): Ext => [F.sub(a[0], b[0]), F.sub(a[1], b[1]), F.sub(a[2], b[2])]

export const mulBase = (a: Ext, k: bigint): Ext => [F.mul(a[0], k), F.mul(a[1], k), F.mul(a[2], k)]

/** Schoolbook product, then X³ = X + 1 and X⁴ = X² + X. */
export const mul = (a: Ext, b: Ext): Ext => {
  const c0 = a[0] * b[0]
  const c1 = a[0] * b[1] + a[1] * b[0]
  const c2 = a[0] * b[2] + a[1] * b[1] + a[2] * b[0]
  const c3 = a[1] * b[2] + a[2] * b[1]
  const c4 = a[2] * b[2]
  return [(c0 + c3) % F.P, (c1 + c3 + c4) % F.P, (c2 + c4) % F.P]
}

export const pow = (base: Ext, exponent: bigint): Ext => {
  let result = ONE
  let b = base
  let e = exponent
  while (e > 0n) {
    if (e & 1n) result = mul(result, b)
    b = mul(b, b)
    e >>= 1n
  }
  return result
}

/**
 * The inverse by Cramer's rule on the matrix of multiplication by `a` (columns a, a·X, a·X²):
 * one base-field inversion instead of an exponentiation in the extension.
 */
export const inv = (a: Ext): Ext => {
  const [a0, a1, a2] = a
  const m11 = F.add(a0, a2),
    m12 = F.add(a1, a2),
    m22 = F.add(a0, a2)
  // Matrix rows: [a0, a2, a1], [a1, a0 + a2, a1 + a2], [a2, a1, a0 + a2].
  const c00 = F.sub(F.mul(m11, m22), F.mul(m12, a1))
  const c01 = F.sub(F.mul(m12, a2), F.mul(a1, m22))
  const c02 = F.sub(F.mul(a1, a1), F.mul(m11, a2))
  const det = F.add(F.add(F.mul(a0, c00), F.mul(a2, c01)), F.mul(a1, c02))
  const d = F.inv(det)
  return [F.mul(c00, d), F.mul(c01, d), F.mul(c02, d)]
}
