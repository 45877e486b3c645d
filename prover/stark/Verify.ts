/**
 * The verifier. It pins the parameter set, derives the trace length from the statement, replays
 * the transcript from the statement onwards, checks the out-of-domain frame against the AIR, and
 * checks every queried position: the Merkle openings, the DEEP composition from the opened trace
 * and composition values, and each FRI fold down to the final constant. Every field element read
 * must be canonical; the proof must be consumed exactly.
 */
import * as E from "../field/Cubic.js"
import * as F from "../field/Goldilocks.js"
import type { BaseVec, ExtVec, Kernels } from "../kernels/Kernels.js"
import { defaultKernels } from "../kernels/Select.js"
import { MAX_CONCERNS, PARAMS, type ParameterSet, traceLengthFor } from "../Params.js"
import { concernCodes, isVerdictStatement, statementBytes, type VerdictStatement } from "../Statement.js"
import { assertionsFor, TRACE_WIDTH } from "./Air.js"
import { verifyOpening } from "./Merkle.js"
import { PROOF_MAGIC, ProofReader, ProofRejected } from "./ProofCodec.js"
import {
  compositionAt,
  domainOf,
  drawConstraintWeights,
  drawDeepWeights,
  encodeExts,
  extAt,
  fillExt,
  PROTOCOL,
  publicPolynomials,
  publicRowAt
} from "./Protocol.js"
import { Transcript, u64be } from "./Transcript.js"

export type VerificationResult = { readonly ok: true } | { readonly ok: false; readonly reason: string }

export interface VerifyOptions {
  readonly kernels?: Kernels | undefined
  readonly params?: ParameterSet | undefined
}

const reject = (reason: string): never => {
  throw new ProofRejected(reason)
}

/**
 * Values of opened pairs laid out as a FRI layer: all first halves, then all second halves
 * (`width` elements per half: 1 per base column, 3 per extension element).
 */
const halves = (
  blocks: ReadonlyArray<{ readonly values: BigUint64Array }>,
  offset: number,
  width: number
): BigUint64Array => {
  const out = new BigUint64Array(2 * blocks.length * width)
  blocks.forEach(({ values }, j) => {
    out.set(values.subarray(offset, offset + width), j * width)
    out.set(
      values.subarray(values.length / 2 + offset, values.length / 2 + offset + width),
      (blocks.length + j) * width
    )
  })
  return out
}

const check = (statement: VerdictStatement, proof: Uint8Array, kernels: Kernels, params: ParameterSet): void => {
  if (!isVerdictStatement(statement)) reject("not a well-formed verdict statement")
  const codes = concernCodes(statement)
  if (codes.length > MAX_CONCERNS) reject(`more than ${MAX_CONCERNS} concerns`)
  const domain = domainOf(traceLengthFor(codes.length), params)
  const { m } = domain
  const assertions = assertionsFor(domain.n, statement.verdict)
  const reader = new ProofReader(proof)
  const magic = reader.bytes(PROOF_MAGIC.length)
  if (!magic.every((byte, i) => byte === PROOF_MAGIC[i])) reject("not a candor verdict proof (format 1)")

  const t = new Transcript(PROTOCOL)
  t.absorb("statement", statementBytes(statement, params))
  const traceRoot = reader.hash()
  t.absorb("trace", traceRoot)
  const weights = drawConstraintWeights(t, assertions.length)
  const compositionRoot = reader.hash()
  t.absorb("composition", compositionRoot)
  const z = t.extOutsideBase()
  const zNext = E.mulBase(z, domain.traceRoot)

  const atZ = Array.from({ length: TRACE_WIDTH }, () => reader.ext())
  const atZNext = Array.from({ length: TRACE_WIDTH }, () => reader.ext())
  const compositionAtZ = reader.ext()
  t.absorb("ood", encodeExts([...atZ, ...atZNext, compositionAtZ]))
  const pub = publicRowAt(kernels, publicPolynomials(kernels, codes, domain), z)
  if (!E.equals(compositionAt(domain, z, atZ, atZNext, pub, weights, assertions), compositionAtZ)) {
    reject("out-of-domain constraint check failed")
  }
  const deep = drawDeepWeights(t)

  const betas = [t.ext()]
  const friRoots: Array<Uint8Array> = []
  for (let r = 1; r < domain.friFolds; r++) {
    const root = reader.hash()
    friRoots.push(root)
    t.absorb("fri", root)
    betas.push(t.ext())
  }
  const finalValue = reader.ext()
  t.absorb("fri-final", encodeExts([finalValue]))
  const nonce = reader.u64be()
  if (!t.checkGrinding(params.grindingBits, nonce)) reject("grinding check failed")
  t.absorb("grinding", u64be(nonce))
  const positions = [...new Set(t.indices(params.queries, m / 2))].sort((a, b) => a - b)
  const k = positions.length

  // Trace and composition openings at x_i and −x_i for every queried i.
  const traceRows = positions.map(() => reader.baseBlock(2 * TRACE_WIDTH))
  if (
    !verifyOpening(
      traceRoot,
      m / 2,
      positions,
      traceRows.map((r) => r.bytes),
      () => reader.hash()
    )
  ) {
    reject("trace Merkle opening does not match its root")
  }
  const compositionPairs = positions.map(() => reader.baseBlock(6))
  if (
    !verifyOpening(
      compositionRoot,
      m / 2,
      positions,
      compositionPairs.map((r) => r.bytes),
      () => reader.hash()
    )
  ) {
    reject("composition Merkle opening does not match its root")
  }

  // DEEP composition at the 2k points, laid out as a FRI layer: [at x_i …, at −x_i …].
  const xs = positions.map((i) => F.mul(domain.offset, F.pow(domain.ldeRoot, BigInt(i))))
  const points: BaseVec = BigUint64Array.from([...xs, ...xs.map(F.neg)])
  const column = (c: number): BaseVec => halves(traceRows, c, 1)
  const compositionValues: ExtVec = halves(compositionPairs, 0, 3)
  let atZTerms = kernels.extScale(compositionValues, deep.composition)
  let atZNextTerms: ExtVec = new BigUint64Array(3 * 2 * k)
  for (let c = 0; c < TRACE_WIDTH; c++) {
    const values = column(c)
    atZTerms = kernels.extAxpy(atZTerms, deep.atZ[c]!, values)
    atZNextTerms = kernels.extAxpy(atZNextTerms, deep.atZNext[c]!, values)
  }
  let atZValue = E.mul(deep.composition, compositionAtZ)
  let atZNextValue = E.ZERO
  atZ.forEach((v, c) => (atZValue = E.add(atZValue, E.mul(deep.atZ[c]!, v))))
  atZNext.forEach((v, c) => (atZNextValue = E.add(atZNextValue, E.mul(deep.atZNext[c]!, v))))
  const deepValues = kernels.extAdd(
    kernels.extMul(
      kernels.extSub(atZTerms, fillExt(2 * k, atZValue)),
      kernels.extBatchInverse(kernels.extShift(points, z))
    ),
    kernels.extMul(
      kernels.extSub(atZNextTerms, fillExt(2 * k, atZNextValue)),
      kernels.extBatchInverse(kernels.extShift(points, zNext))
    )
  )
  // 1/(2x) for x = offset · root^i is (1/2)(1/offset)(1/root)^i: two inversions per layer, not one per point.
  const INV_TWO = F.inv(2n)
  const inverseOfTwice = (offset: bigint, root: bigint) => {
    const scale = F.mul(INV_TWO, F.inv(offset))
    const rootInverse = F.inv(root)
    return (i: number): bigint => F.mul(scale, F.pow(rootInverse, BigInt(i)))
  }
  let expectedAt = positions
  let expected = kernels.friFold(
    deepValues,
    betas[0]!,
    BigUint64Array.from(positions.map(inverseOfTwice(domain.offset, domain.ldeRoot)))
  )

  // FRI layers 1 … folds−1: the opened pair must hold the folded value, then fold it again.
  let offset = F.mul(domain.offset, domain.offset)
  let root = F.mul(domain.ldeRoot, domain.ldeRoot)
  let size = m / 2
  for (let r = 1; r < domain.friFolds; r++) {
    const half = size / 2
    const leaves = [...new Set(expectedAt.map((p) => p % half))].sort((a, b) => a - b)
    const pairs = leaves.map(() => reader.baseBlock(6))
    if (
      !verifyOpening(
        friRoots[r - 1]!,
        half,
        leaves,
        pairs.map((p) => p.bytes),
        () => reader.hash()
      )
    ) {
      reject(`FRI layer ${r} Merkle opening does not match its root`)
    }
    const byLeaf = new Map(leaves.map((leaf, j) => [leaf, pairs[j]!.values]))
    expectedAt.forEach((p, j) => {
      const side = p >= half ? 3 : 0
      if (!E.equals(extAt(byLeaf.get(p % half)!, side / 3), extAt(expected, j))) {
        reject(`FRI layer ${r} does not fold from the layer before`)
      }
    })
    const layer: ExtVec = halves(pairs, 0, 3)
    const inv2x = BigUint64Array.from(leaves.map(inverseOfTwice(offset, root)))
    expected = kernels.friFold(layer, betas[r]!, inv2x)
    expectedAt = leaves
    offset = F.mul(offset, offset)
    root = F.mul(root, root)
    size = half
  }
  for (let j = 0; j < expectedAt.length; j++) {
    if (!E.equals(extAt(expected, j), finalValue)) reject("FRI does not end in the committed constant")
  }
  reader.end()
}

/** Whether `proof` proves `statement`; never throws, whatever the bytes. */
export const verifyStatement = (
  statement: VerdictStatement,
  proof: Uint8Array,
  options: VerifyOptions = {}
): VerificationResult => {
  try {
    check(statement, proof, options.kernels ?? defaultKernels(), options.params ?? PARAMS)
    return { ok: true }
  } catch (error) {
    return { ok: false, reason: error instanceof ProofRejected ? error.message : `malformed proof: ${String(error)}` }
  }
}
