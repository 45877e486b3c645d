/**
 * What the prover and the verifier compute alike: the evaluation domains, the order in which
 * challenges are drawn, the composition polynomial at a point, the public polynomials and the leaf
 * encodings. Keeping these in one place is what makes the two sides agree.
 *
 * Domains: the trace lives on the subgroup H of order N (generator ω_N); commitments are over the
 * coset g·K of the subgroup K of order M = N·blowup (generator ω_M), g = 7, which is disjoint from H.
 * A commitment leaf j (j < M/2) holds the values at x_j and at x_{j+M/2} = −x_j, the pair one FRI
 * fold needs; FRI layer r (size M/2^r, offset g^(2^r)) is committed the same way.
 */
import * as E from "../field/Cubic.js"
import * as F from "../field/Goldilocks.js"
import type { BaseVec, ExtVec, Kernels } from "../kernels/Kernels.js"
import type { ParameterSet } from "../Params.js"
import type { ConcernCode } from "../Statement.js"
import {
  ALL_ROW_CONSTRAINTS,
  type Algebra,
  type Assertion,
  evaluateConstraints,
  type PublicRow,
  publicColumns,
  TRACE_WIDTH,
  TRANSITION_CONSTRAINTS
} from "./Air.js"
import type { Transcript } from "./Transcript.js"

/** The transcript's protocol label. */
export const PROTOCOL = "candor-verdict-stark/1"

export interface Domain {
  /** Trace length (rows). */
  readonly n: number
  /** Evaluation domain size, n · blowup. */
  readonly m: number
  readonly blowup: number
  readonly traceRoot: bigint
  readonly ldeRoot: bigint
  readonly offset: bigint
  /** FRI folds from m down to blowup: log2(n); the last layer is a constant. */
  readonly friFolds: number
}

export const domainOf = (traceLength: number, params: ParameterSet): Domain => ({
  n: traceLength,
  m: traceLength * params.blowup,
  blowup: params.blowup,
  traceRoot: F.rootOfUnity(traceLength),
  ldeRoot: F.rootOfUnity(traceLength * params.blowup),
  offset: F.GENERATOR,
  friFolds: Math.log2(traceLength)
})

export interface ConstraintWeights {
  readonly constraints: ReadonlyArray<E.Ext>
  readonly assertions: ReadonlyArray<E.Ext>
}

export const drawConstraintWeights = (t: Transcript, assertionCount: number): ConstraintWeights => ({
  constraints: Array.from({ length: ALL_ROW_CONSTRAINTS + TRANSITION_CONSTRAINTS }, () => t.ext()),
  assertions: Array.from({ length: assertionCount }, () => t.ext())
})

export interface DeepWeights {
  readonly atZ: ReadonlyArray<E.Ext>
  readonly atZNext: ReadonlyArray<E.Ext>
  readonly composition: E.Ext
}

export const drawDeepWeights = (t: Transcript): DeepWeights => ({
  atZ: Array.from({ length: TRACE_WIDTH }, () => t.ext()),
  atZNext: Array.from({ length: TRACE_WIDTH }, () => t.ext()),
  composition: t.ext()
})

export const extAlgebra: Algebra<E.Ext> = { add: E.add, sub: E.sub, mul: E.mul, constant: E.fromBase }

/**
 * The composition polynomial at an out-of-domain point z from the trace values at z and z·ω_N:
 *   C(z) = (Σ α_j c_j(z) + (z − ω_N^(N−1)) Σ α_t t_t(z)) / (z^N − 1) + Σ β_k (T_k(z) − v_k) / (z − ω_N^(row_k))
 */
export const compositionAt = (
  domain: Domain,
  z: E.Ext,
  atZ: ReadonlyArray<E.Ext>,
  atZNext: ReadonlyArray<E.Ext>,
  pub: PublicRow<E.Ext>,
  weights: ConstraintWeights,
  assertions: ReadonlyArray<Assertion>
): E.Ext => {
  const { allRows, transitions } = evaluateConstraints(extAlgebra, atZ, atZNext, pub)
  let all = E.ZERO
  allRows.forEach((c, j) => (all = E.add(all, E.mul(weights.constraints[j]!, c))))
  let trans = E.ZERO
  transitions.forEach((c, j) => (trans = E.add(trans, E.mul(weights.constraints[ALL_ROW_CONSTRAINTS + j]!, c))))
  const lastRow = F.pow(domain.traceRoot, BigInt(domain.n - 1))
  const vanishing = E.sub(E.pow(z, BigInt(domain.n)), E.ONE)
  let result = E.mul(E.add(all, E.mul(trans, E.sub(z, E.fromBase(lastRow)))), E.inv(vanishing))
  assertions.forEach((a, k) => {
    const point = F.pow(domain.traceRoot, BigInt(a.row))
    const quotient = E.mul(E.sub(atZ[a.column]!, E.fromBase(a.value)), E.inv(E.sub(z, E.fromBase(point))))
    result = E.add(result, E.mul(weights.assertions[k]!, quotient))
  })
  return result
}

/** A vector filled with one base-field value. */
export const fill = (n: number, value: bigint): BaseVec => new BigUint64Array(n).fill(value)

/** A vector filled with one extension value. */
export const fillExt = (n: number, value: E.Ext): ExtVec => {
  const out = new BigUint64Array(3 * n)
  for (let i = 0; i < n; i++) out.set(value, 3 * i)
  return out
}

/** Coefficients of the polynomial taking these values on the subgroup of order values.length. */
export const interpolate = (kernels: Kernels, values: BaseVec, root: bigint): BaseVec => {
  const n = values.length
  return kernels.mul(kernels.ntt(values, F.inv(root)), fill(n, F.inv(BigInt(n))))
}

/** Values on the coset offset·⟨ω_M⟩ of the polynomial with these coefficients. */
export const extend = (kernels: Kernels, coefficients: BaseVec, domain: Domain): BaseVec => {
  const shifted = new BigUint64Array(domain.m)
  shifted.set(kernels.mul(coefficients, kernels.powers(1n, domain.offset, coefficients.length)))
  return kernels.ntt(shifted, domain.ldeRoot)
}

/** Coefficients of the public columns (category, severity, flag). */
export const publicPolynomials = (
  kernels: Kernels,
  codes: ReadonlyArray<ConcernCode>,
  domain: Domain
): Array<BaseVec> => publicColumns(codes, domain.n).map((column) => interpolate(kernels, column, domain.traceRoot))

export const publicRowAt = (kernels: Kernels, polynomials: ReadonlyArray<BaseVec>, z: E.Ext): PublicRow<E.Ext> => ({
  category: kernels.evaluate(polynomials[0]!, z),
  severity: kernels.evaluate(polynomials[1]!, z),
  boundary: kernels.evaluate(polynomials[2]!, z)
})

export const encodeBase = (values: ArrayLike<bigint>): Uint8Array => {
  const out = new Uint8Array(values.length * 8)
  const view = new DataView(out.buffer)
  for (let i = 0; i < values.length; i++) view.setBigUint64(8 * i, values[i]!, true)
  return out
}

export const encodeExts = (values: ReadonlyArray<E.Ext>): Uint8Array => encodeBase(values.flat())

/** Leaves over columns of base values: leaf j is (column values at j, then at j + size/2). */
export const columnPairLeaves = (columns: ReadonlyArray<BaseVec>, size: number): Array<Uint8Array> => {
  const width = columns.length
  const half = size / 2
  const bytes = new Uint8Array(size * width * 8)
  const view = new DataView(bytes.buffer)
  const leaves: Array<Uint8Array> = []
  for (let j = 0; j < half; j++) {
    const at = j * 2 * width * 8
    for (let k = 0; k < width; k++) {
      view.setBigUint64(at + 8 * k, columns[k]![j]!, true)
      view.setBigUint64(at + 8 * (width + k), columns[k]![j + half]!, true)
    }
    leaves.push(bytes.subarray(at, at + 2 * width * 8))
  }
  return leaves
}

/** Leaves over an extension vector: leaf j is (element j, element j + size/2), 48 bytes. */
export const extPairLeaves = (values: ExtVec): Array<Uint8Array> => {
  const half = values.length / 6
  const bytes = new Uint8Array(values.length * 8)
  const view = new DataView(bytes.buffer)
  const leaves: Array<Uint8Array> = []
  for (let j = 0; j < half; j++) {
    for (let limb = 0; limb < 3; limb++) {
      view.setBigUint64(48 * j + 8 * limb, values[3 * j + limb]!, true)
      view.setBigUint64(48 * j + 24 + 8 * limb, values[3 * (j + half) + limb]!, true)
    }
    leaves.push(bytes.subarray(48 * j, 48 * j + 48))
  }
  return leaves
}

export const extAt = (values: ExtVec, i: number): E.Ext => [values[3 * i]!, values[3 * i + 1]!, values[3 * i + 2]!]
