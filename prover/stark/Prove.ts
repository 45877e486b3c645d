/**
 * The prover: builds the trace of the verdict rule for a statement, commits to its low-degree
 * extension, the composition polynomial and the FRI layers of the DEEP composition polynomial, and
 * writes the binary proof (see ProofCodec.ts for the encoding, docs/formats.md for the layout).
 *
 * An honest prover refuses a statement whose claimed verdict is not the rule's: there is no valid
 * trace for it. (`forgedTrace` exists for the soundness tests: it commits to any trace, unchecked.)
 */
import * as E from "../field/Cubic.js"
import * as F from "../field/Goldilocks.js"
import type { BaseVec, ExtVec, Kernels } from "../kernels/Kernels.js"
import { defaultKernels } from "../kernels/Select.js"
import { MAX_CONCERNS, PARAMS, type ParameterSet, traceLengthFor } from "../Params.js"
import { concernCodes, isVerdictStatement, ruleVerdict, statementBytes, type VerdictStatement } from "../Statement.js"
import {
  type Algebra,
  ALL_ROW_CONSTRAINTS,
  assertionsFor,
  buildTrace,
  evaluateConstraints,
  publicColumns
} from "./Air.js"
import { MerkleTree } from "./Merkle.js"
import { PROOF_MAGIC, ProofWriter } from "./ProofCodec.js"
import {
  columnPairLeaves,
  compositionAt,
  type Domain,
  domainOf,
  drawConstraintWeights,
  drawDeepWeights,
  encodeExts,
  extAt,
  extend,
  extPairLeaves,
  fill,
  fillExt,
  interpolate,
  PROTOCOL,
  publicPolynomials,
  publicRowAt
} from "./Protocol.js"
import { Transcript, u64be } from "./Transcript.js"

/** The statement cannot be proved: the honest prover's refusal, with the reason. */
export class StatementRefused extends Error {
  override readonly name = "StatementRefused"
}

export interface ProveOptions {
  readonly kernels?: Kernels | undefined
  readonly params?: ParameterSet | undefined
  /** Soundness tests only: commit to this trace instead of the honest one, without checking it. */
  readonly forgedTrace?: ReadonlyArray<BaseVec> | undefined
}

const vectorAlgebra = (kernels: Kernels, size: number): Algebra<BaseVec> => {
  const constants = new Map<bigint, BaseVec>()
  return {
    add: kernels.add,
    sub: kernels.sub,
    mul: kernels.mul,
    constant: (k) => {
      let v = constants.get(k)
      if (v === undefined) constants.set(k, (v = fill(size, k)))
      return v
    }
  }
}

/** The column shifted by `by` rows: value i is the column's value i + by (cyclically). */
const rotate = (column: BaseVec, by: number): BaseVec => {
  const out = new BigUint64Array(column.length)
  out.set(column.subarray(by))
  out.set(column.subarray(0, by), column.length - by)
  return out
}

/** Honest traces only: every constraint and assertion holds on the rows (else the AIR and the rule disagree). */
const checkTrace = (
  kernels: Kernels,
  domain: Domain,
  trace: ReadonlyArray<BaseVec>,
  pub: ReadonlyArray<BaseVec>,
  verdict: VerdictStatement["verdict"]
) => {
  const { allRows, transitions } = evaluateConstraints(
    vectorAlgebra(kernels, domain.n),
    trace,
    trace.map((column) => rotate(column, 1)),
    { category: pub[0]!, severity: pub[1]!, boundary: pub[2]! }
  )
  const failing =
    allRows.some((c) => c.some((x) => x !== 0n)) ||
    transitions.some((c) => c.subarray(0, domain.n - 1).some((x) => x !== 0n)) ||
    assertionsFor(domain.n, verdict).some((a) => trace[a.column]![a.row] !== a.value)
  if (failing) throw new StatementRefused("the trace does not satisfy the verdict AIR")
}

export const proveStatement = (statement: VerdictStatement, options: ProveOptions = {}): Uint8Array => {
  const kernels = options.kernels ?? defaultKernels()
  const params = options.params ?? PARAMS
  if (!isVerdictStatement(statement)) throw new StatementRefused("not a well-formed verdict statement")
  const codes = concernCodes(statement)
  if (codes.length > MAX_CONCERNS) throw new StatementRefused(`more than ${MAX_CONCERNS} concerns`)
  const domain = domainOf(traceLengthFor(codes.length), params)
  const { n, m, blowup } = domain
  const forged = options.forgedTrace !== undefined
  if (!forged) {
    const derived = ruleVerdict(statement)
    if (derived !== statement.verdict) {
      throw new StatementRefused(`the rule gives ${derived} for these concerns, not ${statement.verdict}`)
    }
  }
  const trace = options.forgedTrace ?? buildTrace(codes, n)
  if (!forged) checkTrace(kernels, domain, trace, publicColumns(codes, n), statement.verdict)
  const assertions = assertionsFor(n, statement.verdict)

  const t = new Transcript(PROTOCOL)
  t.absorb("statement", statementBytes(statement, params))

  // 1. The trace, extended to the evaluation domain and committed row pairs at a time.
  const traceCoefficients = trace.map((column) => interpolate(kernels, column, domain.traceRoot))
  const traceLde = traceCoefficients.map((c) => extend(kernels, c, domain))
  const traceTree = new MerkleTree(columnPairLeaves(traceLde, m))
  t.absorb("trace", traceTree.root)
  const weights = drawConstraintWeights(t, assertions.length)

  // 2. The composition polynomial on the evaluation domain.
  const publicCoefficients = publicPolynomials(kernels, codes, domain)
  const publicLde = publicCoefficients.map((c) => extend(kernels, c, domain))
  const xs = kernels.powers(domain.offset, domain.ldeRoot, m)
  const { allRows, transitions } = evaluateConstraints(
    vectorAlgebra(kernels, m),
    traceLde,
    traceLde.map((column) => rotate(column, blowup)),
    { category: publicLde[0]!, severity: publicLde[1]!, boundary: publicLde[2]! }
  )
  let all: ExtVec = new BigUint64Array(3 * m)
  allRows.forEach((c, j) => (all = kernels.extAxpy(all, weights.constraints[j]!, c)))
  let trans: ExtVec = new BigUint64Array(3 * m)
  transitions.forEach((c, j) => (trans = kernels.extAxpy(trans, weights.constraints[ALL_ROW_CONSTRAINTS + j]!, c)))
  const lastRow = F.pow(domain.traceRoot, BigInt(n - 1))
  trans = kernels.extMulBase(trans, kernels.sub(xs, fill(m, lastRow)))
  // x^N − 1 on the coset takes only `blowup` values: g^N · ω_blowup^i − 1.
  const vanishing = Array.from({ length: blowup }, (_, i) =>
    F.inv(F.sub(F.mul(F.pow(domain.offset, BigInt(n)), F.pow(domain.ldeRoot, BigInt(i * n))), 1n))
  )
  const vanishingInverse = BigUint64Array.from({ length: m }, (_, i) => vanishing[i % blowup]!)
  let composition = kernels.extMulBase(kernels.extAdd(all, trans), vanishingInverse)
  const rowInverses = new Map<number, BaseVec>()
  assertions.forEach((a, k) => {
    let inverse = rowInverses.get(a.row)
    if (inverse === undefined) {
      inverse = kernels.batchInverse(kernels.sub(xs, fill(m, F.pow(domain.traceRoot, BigInt(a.row)))))
      rowInverses.set(a.row, inverse)
    }
    const quotient = kernels.mul(kernels.sub(traceLde[a.column]!, fill(m, a.value)), inverse)
    composition = kernels.extAxpy(composition, weights.assertions[k]!, quotient)
  })
  const compositionTree = new MerkleTree(extPairLeaves(composition))
  t.absorb("composition", compositionTree.root)

  // 3. Out-of-domain frame at z and z·ω_N; C(z) from the AIR, exactly what the verifier recomputes.
  const z = t.extOutsideBase()
  const zNext = E.mulBase(z, domain.traceRoot)
  const atZ = traceCoefficients.map((c) => kernels.evaluate(c, z))
  const atZNext = traceCoefficients.map((c) => kernels.evaluate(c, zNext))
  const compositionAtZ = compositionAt(
    domain,
    z,
    atZ,
    atZNext,
    publicRowAt(kernels, publicCoefficients, z),
    weights,
    assertions
  )
  t.absorb("ood", encodeExts([...atZ, ...atZNext, compositionAtZ]))
  const deep = drawDeepWeights(t)

  // 4. DEEP composition: Σ γ_k (T_k(x) − T_k(z))/(x − z) + Σ γ'_k (T_k(x) − T_k(zω))/(x − zω) + γ_c (C(x) − C(z))/(x − z).
  let atZTerms: ExtVec = kernels.extScale(composition, deep.composition)
  let atZNextTerms: ExtVec = new BigUint64Array(3 * m)
  traceLde.forEach((column, k) => {
    atZTerms = kernels.extAxpy(atZTerms, deep.atZ[k]!, column)
    atZNextTerms = kernels.extAxpy(atZNextTerms, deep.atZNext[k]!, column)
  })
  let atZValue = E.mul(deep.composition, compositionAtZ)
  let atZNextValue = E.ZERO
  atZ.forEach((v, k) => (atZValue = E.add(atZValue, E.mul(deep.atZ[k]!, v))))
  atZNext.forEach((v, k) => (atZNextValue = E.add(atZNextValue, E.mul(deep.atZNext[k]!, v))))
  const deepComposition = kernels.extAdd(
    kernels.extMul(kernels.extSub(atZTerms, fillExt(m, atZValue)), kernels.extBatchInverse(kernels.extShift(xs, z))),
    kernels.extMul(
      kernels.extSub(atZNextTerms, fillExt(m, atZNextValue)),
      kernels.extBatchInverse(kernels.extShift(xs, zNext))
    )
  )

  // 5. FRI: fold by two, log2(N) times, down to a constant.
  const friLayers: Array<ExtVec> = []
  const friTrees: Array<MerkleTree> = []
  let layer = deepComposition
  let offset = domain.offset
  let root = domain.ldeRoot
  for (let r = 0; r < domain.friFolds; r++) {
    if (r > 0) {
      const tree = new MerkleTree(extPairLeaves(layer))
      friLayers.push(layer)
      friTrees.push(tree)
      t.absorb("fri", tree.root)
    }
    const beta = t.ext()
    const half = layer.length / 6
    layer = kernels.friFold(layer, beta, kernels.powers(F.inv(F.add(offset, offset)), F.inv(root), half))
    offset = F.mul(offset, offset)
    root = F.mul(root, root)
  }
  const finalValue = extAt(layer, 0)
  if (!forged) {
    for (let i = 1; i < layer.length / 3; i++) {
      // A defect of the synchronous prover: proveEffect turns any throw into ProverError "failed".
      if (!E.equals(extAt(layer, i), finalValue)) throw new Error("FRI did not reach a constant: prover bug")
    }
  }
  t.absorb("fri-final", encodeExts([finalValue]))
  const nonce = t.grind(params.grindingBits)
  t.absorb("grinding", u64be(nonce))
  const positions = [...new Set(t.indices(params.queries, m / 2))].sort((a, b) => a - b)

  // 6. The proof.
  const out = new ProofWriter()
  out.bytes(PROOF_MAGIC)
  out.bytes(traceTree.root)
  out.bytes(compositionTree.root)
  for (const v of [...atZ, ...atZNext, compositionAtZ]) out.ext(v)
  for (const tree of friTrees) out.bytes(tree.root)
  out.ext(finalValue)
  out.u64be(nonce)
  const traceLeaves = columnPairLeaves(traceLde, m)
  for (const i of positions) out.bytes(traceLeaves[i]!)
  for (const hash of traceTree.open(positions)) out.bytes(hash)
  const compositionLeaves = extPairLeaves(composition)
  for (const i of positions) out.bytes(compositionLeaves[i]!)
  for (const hash of compositionTree.open(positions)) out.bytes(hash)
  let layerPositions = positions
  friLayers.forEach((values, r) => {
    const half = values.length / 6
    layerPositions = [...new Set(layerPositions.map((p) => p % half))].sort((a, b) => a - b)
    const leaves = extPairLeaves(values)
    for (const j of layerPositions) out.bytes(leaves[j]!)
    for (const hash of friTrees[r]!.open(layerPositions)) out.bytes(hash)
  })
  return out.finish()
}
