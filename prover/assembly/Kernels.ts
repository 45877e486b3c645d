// @ts-nocheck — AssemblyScript, compiled to WASM by `npm run build:wasm` (asc), not by tsc.
/**
 * The prover's kernels (see prover/kernels/Kernels.ts) over Goldilocks, p = 2^64 − 2^32 + 1, and
 * its cubic extension F_p[X]/(X³ − X − 1). The host copies vectors into linear memory and passes
 * byte offsets; n counts elements; extension elements are three consecutive u64 limbs. Every
 * result is canonical (< p), so it equals the TypeScript kernels' bit for bit.
 */

const P: u64 = 0xffffffff00000001
/** 2^64 mod p. */
const EPS: u64 = 0xffffffff
/** 1/2 mod p. */
const INV_TWO: u64 = 0x7fffffff80000001

/** Start of memory the host may use. */
export function heapBase(): usize {
  return (__heap_base + 7) & ~7
}

function fadd(a: u64, b: u64): u64 {
  let s = a + b
  if (s < a) s += EPS // carried out of 64 bits: 2^64 ≡ EPS
  if (s >= P) s -= P
  return s
}

function fsub(a: u64, b: u64): u64 {
  let r = a - b
  if (a < b) r -= EPS // borrowed 2^64: add p = 2^64 − EPS back
  return r
}

/** 128-bit product from 32-bit halves, reduced with 2^64 ≡ 2^32 − 1 and 2^96 ≡ −1. */
function fmul(a: u64, b: u64): u64 {
  const a0 = a & EPS
  const a1 = a >> 32
  const b0 = b & EPS
  const b1 = b >> 32
  const ll = a0 * b0
  const lh = a0 * b1
  const hl = a1 * b0
  const hh = a1 * b1
  const mid = lh + hl
  const midCarry: u64 = mid < lh ? 1 : 0
  const lo = ll + (mid << 32)
  const loCarry: u64 = lo < ll ? 1 : 0
  const hi = hh + (mid >> 32) + (midCarry << 32) + loCarry
  const hiHi = hi >> 32
  const hiLo = hi & EPS
  let t0 = lo - hiHi
  if (lo < hiHi) t0 -= EPS
  const t1 = hiLo * EPS
  let r = t0 + t1
  if (r < t1) r += EPS
  if (r >= P) r -= P
  return r
}

function fpow(base: u64, exponent: u64): u64 {
  let r: u64 = 1
  let b = base
  let e = exponent
  while (e != 0) {
    if (e & 1) r = fmul(r, b)
    b = fmul(b, b)
    e >>= 1
  }
  return r
}

function finv(a: u64): u64 {
  return fpow(a, P - 2)
}

// Extension results land here: AssemblyScript functions return one value.
let e0: u64 = 0
let e1: u64 = 0
let e2: u64 = 0

function emul(a0: u64, a1: u64, a2: u64, b0: u64, b1: u64, b2: u64): void {
  const c0 = fmul(a0, b0)
  const c1 = fadd(fmul(a0, b1), fmul(a1, b0))
  const c2 = fadd(fadd(fmul(a0, b2), fmul(a1, b1)), fmul(a2, b0))
  const c3 = fadd(fmul(a1, b2), fmul(a2, b1))
  const c4 = fmul(a2, b2)
  e0 = fadd(c0, c3)
  e1 = fadd(fadd(c1, c3), c4)
  e2 = fadd(c2, c4)
}

/** Cramer's rule on the multiplication matrix, as in prover/field/Cubic.ts. */
function einv(a0: u64, a1: u64, a2: u64): void {
  const m11 = fadd(a0, a2)
  const m12 = fadd(a1, a2)
  const c00 = fsub(fmul(m11, m11), fmul(m12, a1))
  const c01 = fsub(fmul(m12, a2), fmul(a1, m11))
  const c02 = fsub(fmul(a1, a1), fmul(m11, a2))
  const det = fadd(fadd(fmul(a0, c00), fmul(a2, c01)), fmul(a1, c02))
  const d = finv(det)
  e0 = fmul(c00, d)
  e1 = fmul(c01, d)
  e2 = fmul(c02, d)
}

function at(ptr: usize, i: u32): usize {
  return ptr + ((<usize>i) << 3)
}

function bitReverse(i: u32, bits: u32): u32 {
  return bits == 0 ? 0 : reverseBits32(i) >>> (32 - bits)
}

function reverseBits32(x: u32): u32 {
  x = ((x >>> 1) & 0x55555555) | ((x & 0x55555555) << 1)
  x = ((x >>> 2) & 0x33333333) | ((x & 0x33333333) << 2)
  x = ((x >>> 4) & 0x0f0f0f0f) | ((x & 0x0f0f0f0f) << 4)
  x = ((x >>> 8) & 0x00ff00ff) | ((x & 0x00ff00ff) << 8)
  return (x >>> 16) | (x << 16)
}

/** In-place radix-2 NTT of n values at `ptr`; `scratch` holds n/2 twiddles. */
export function ntt(ptr: usize, n: u32, root: u64, scratch: usize): void {
  const bits = <u32>ctz(n)
  for (let i: u32 = 0; i < n; i++) {
    const j = bitReverse(i, bits)
    if (j > i) {
      const t = load<u64>(at(ptr, i))
      store<u64>(at(ptr, i), load<u64>(at(ptr, j)))
      store<u64>(at(ptr, j), t)
    }
  }
  for (let len: u32 = 2; len <= n; len <<= 1) {
    const half = len >> 1
    const step = fpow(root, <u64>(n / len))
    let w: u64 = 1
    for (let j: u32 = 0; j < half; j++) {
      store<u64>(at(scratch, j), w)
      w = fmul(w, step)
    }
    for (let start: u32 = 0; start < n; start += len) {
      for (let j: u32 = 0; j < half; j++) {
        const pu = at(ptr, start + j)
        const pv = at(ptr, start + j + half)
        const u = load<u64>(pu)
        const v = fmul(load<u64>(pv), load<u64>(at(scratch, j)))
        store<u64>(pu, fadd(u, v))
        store<u64>(pv, fsub(u, v))
      }
    }
  }
}

export function powers(dst: usize, n: u32, start: u64, step: u64): void {
  let x = start
  for (let i: u32 = 0; i < n; i++) {
    store<u64>(at(dst, i), x)
    x = fmul(x, step)
  }
}

export function add(dst: usize, a: usize, b: usize, n: u32): void {
  for (let i: u32 = 0; i < n; i++) store<u64>(at(dst, i), fadd(load<u64>(at(a, i)), load<u64>(at(b, i))))
}

export function sub(dst: usize, a: usize, b: usize, n: u32): void {
  for (let i: u32 = 0; i < n; i++) store<u64>(at(dst, i), fsub(load<u64>(at(a, i)), load<u64>(at(b, i))))
}

export function mul(dst: usize, a: usize, b: usize, n: u32): void {
  for (let i: u32 = 0; i < n; i++) store<u64>(at(dst, i), fmul(load<u64>(at(a, i)), load<u64>(at(b, i))))
}

/** Montgomery's trick: one inversion for the whole vector. `dst` must not overlap `src`. */
export function batchInverse(dst: usize, src: usize, n: u32): void {
  let acc: u64 = 1
  for (let i: u32 = 0; i < n; i++) {
    store<u64>(at(dst, i), acc)
    acc = fmul(acc, load<u64>(at(src, i)))
  }
  let inverse = finv(acc)
  for (let i = <i32>n - 1; i >= 0; i--) {
    store<u64>(at(dst, i), fmul(load<u64>(at(dst, i)), inverse))
    inverse = fmul(inverse, load<u64>(at(src, i)))
  }
}

export function extAxpy(dst: usize, acc: usize, alpha: usize, v: usize, n: u32): void {
  const k0 = load<u64>(alpha),
    k1 = load<u64>(alpha, 8),
    k2 = load<u64>(alpha, 16)
  for (let i: u32 = 0; i < n; i++) {
    const x = load<u64>(at(v, i))
    const o = at(dst, 3 * i),
      s = at(acc, 3 * i)
    store<u64>(o, fadd(load<u64>(s), fmul(k0, x)))
    store<u64>(o, fadd(load<u64>(s, 8), fmul(k1, x)), 8)
    store<u64>(o, fadd(load<u64>(s, 16), fmul(k2, x)), 16)
  }
}

export function extMulBase(dst: usize, a: usize, v: usize, n: u32): void {
  for (let i: u32 = 0; i < n; i++) {
    const x = load<u64>(at(v, i))
    const o = at(dst, 3 * i),
      s = at(a, 3 * i)
    store<u64>(o, fmul(load<u64>(s), x))
    store<u64>(o, fmul(load<u64>(s, 8), x), 8)
    store<u64>(o, fmul(load<u64>(s, 16), x), 16)
  }
}

export function extMul(dst: usize, a: usize, b: usize, n: u32): void {
  for (let i: u32 = 0; i < n; i++) {
    const pa = at(a, 3 * i),
      pb = at(b, 3 * i),
      o = at(dst, 3 * i)
    emul(load<u64>(pa), load<u64>(pa, 8), load<u64>(pa, 16), load<u64>(pb), load<u64>(pb, 8), load<u64>(pb, 16))
    store<u64>(o, e0)
    store<u64>(o, e1, 8)
    store<u64>(o, e2, 16)
  }
}

export function extScale(dst: usize, a: usize, k: usize, n: u32): void {
  const k0 = load<u64>(k),
    k1 = load<u64>(k, 8),
    k2 = load<u64>(k, 16)
  for (let i: u32 = 0; i < n; i++) {
    const pa = at(a, 3 * i),
      o = at(dst, 3 * i)
    emul(load<u64>(pa), load<u64>(pa, 8), load<u64>(pa, 16), k0, k1, k2)
    store<u64>(o, e0)
    store<u64>(o, e1, 8)
    store<u64>(o, e2, 16)
  }
}

/** Montgomery's trick in the extension; `dst` must not overlap `src`. */
export function extBatchInverse(dst: usize, src: usize, n: u32): void {
  let a0: u64 = 1,
    a1: u64 = 0,
    a2: u64 = 0
  for (let i: u32 = 0; i < n; i++) {
    const o = at(dst, 3 * i),
      s = at(src, 3 * i)
    store<u64>(o, a0)
    store<u64>(o, a1, 8)
    store<u64>(o, a2, 16)
    emul(a0, a1, a2, load<u64>(s), load<u64>(s, 8), load<u64>(s, 16))
    a0 = e0
    a1 = e1
    a2 = e2
  }
  einv(a0, a1, a2)
  let i0 = e0,
    i1 = e1,
    i2 = e2
  for (let i = <i32>n - 1; i >= 0; i--) {
    const o = at(dst, 3 * i),
      s = at(src, 3 * i)
    emul(load<u64>(o), load<u64>(o, 8), load<u64>(o, 16), i0, i1, i2)
    store<u64>(o, e0)
    store<u64>(o, e1, 8)
    store<u64>(o, e2, 16)
    emul(i0, i1, i2, load<u64>(s), load<u64>(s, 8), load<u64>(s, 16))
    i0 = e0
    i1 = e1
    i2 = e2
  }
}

export function extShift(dst: usize, xs: usize, z: usize, n: u32): void {
  const z0 = load<u64>(z),
    z1 = load<u64>(z, 8),
    z2 = load<u64>(z, 16)
  const n1 = fsub(0, z1),
    n2 = fsub(0, z2)
  for (let i: u32 = 0; i < n; i++) {
    const o = at(dst, 3 * i)
    store<u64>(o, fsub(load<u64>(at(xs, i)), z0))
    store<u64>(o, n1, 8)
    store<u64>(o, n2, 16)
  }
}

export function friFold(dst: usize, layer: usize, beta: usize, inv2x: usize, half: u32): void {
  const b0 = load<u64>(beta),
    b1 = load<u64>(beta, 8),
    b2 = load<u64>(beta, 16)
  for (let i: u32 = 0; i < half; i++) {
    const pf = at(layer, 3 * i),
      pg = at(layer, 3 * (i + half)),
      o = at(dst, 3 * i)
    const f0 = load<u64>(pf),
      f1 = load<u64>(pf, 8),
      f2 = load<u64>(pf, 16)
    const g0 = load<u64>(pg),
      g1 = load<u64>(pg, 8),
      g2 = load<u64>(pg, 16)
    const t = load<u64>(at(inv2x, i))
    emul(b0, b1, b2, fmul(fsub(f0, g0), t), fmul(fsub(f1, g1), t), fmul(fsub(f2, g2), t))
    store<u64>(o, fadd(fmul(fadd(f0, g0), INV_TWO), e0))
    store<u64>(o, fadd(fmul(fadd(f1, g1), INV_TWO), e1), 8)
    store<u64>(o, fadd(fmul(fadd(f2, g2), INV_TWO), e2), 16)
  }
}

/** Horner at an extension point; the result is written to `dst` (three limbs). */
export function evaluate(dst: usize, coefficients: usize, n: u32, z: usize): void {
  const z0 = load<u64>(z),
    z1 = load<u64>(z, 8),
    z2 = load<u64>(z, 16)
  let a0: u64 = 0,
    a1: u64 = 0,
    a2: u64 = 0
  for (let i = <i32>n - 1; i >= 0; i--) {
    emul(a0, a1, a2, z0, z1, z2)
    a0 = fadd(e0, load<u64>(at(coefficients, i)))
    a1 = e1
    a2 = e2
  }
  store<u64>(dst, a0)
  store<u64>(dst, a1, 8)
  store<u64>(dst, a2, 16)
}
