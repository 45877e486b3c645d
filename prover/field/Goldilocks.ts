/**
 * The Goldilocks prime field, p = 2^64 − 2^32 + 1, as BigInt scalars: the reference arithmetic that
 * the TypeScript kernels use and the WASM kernels are tested against. Every value is kept canonical
 * (0 ≤ x < p), so any correct computation of a value yields the same bits on either path.
 */

export const P = 0xffff_ffff_0000_0001n

/** A generator of the multiplicative group (order p − 1 = 2^32 · 3 · 5 · 17 · 257 · 65537). */
export const GENERATOR = 7n

/** p − 1 is divisible by 2^32: subgroups (and NTT sizes) up to 2^32. */
export const TWO_ADICITY = 32

export const add = (a: bigint, b: bigint): bigint => {
  const s = a + b
  return s >= P ? s - P : s
}

export const sub = (a: bigint, b: bigint): bigint => (a >= b ? a - b : a + P - b)

export const neg = (a: bigint): bigint => (a === 0n ? 0n : P - a)

export const mul = (a: bigint, b: bigint): bigint => (a * b) % P

export const pow = (base: bigint, exponent: bigint): bigint => {
  let result = 1n
  let b = base % P
  let e = exponent
  while (e > 0n) {
    if (e & 1n) result = (result * b) % P
    b = (b * b) % P
    e >>= 1n
  }
  return result
}

/** The inverse (Fermat); 0 has none. */
export const inv = (a: bigint): bigint => {
  if (a === 0n) throw new RangeError("0 has no inverse")
  return pow(a, P - 2n)
}

/** The element of order exactly `n` (a power of two up to 2^32) that the NTTs and domains use. */
export const rootOfUnity = (n: number): bigint => {
  if (!Number.isInteger(n) || n < 1 || n > 2 ** TWO_ADICITY || !Number.isInteger(Math.log2(n))) {
    throw new RangeError(`no root of unity of order ${n}`)
  }
  const order2 = pow(GENERATOR, (P - 1n) >> BigInt(TWO_ADICITY))
  return pow(order2, BigInt(2 ** TWO_ADICITY / n))
}
