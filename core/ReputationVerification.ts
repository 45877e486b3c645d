/**
 * A published reputation checked against the public record, with no trust in Candor: the certificates
 * are the agent's log prefix the score names (`computed_over`), signed, chained and hashed into the
 * signed tree head; and the components, score, grade, eligibility, count and confidence follow from
 * them by core/Reputation.ts. What `candor reputation verify` runs (docs/reputation.md).
 *
 * The coherence component is the one input not read off certificates: its mean pair score rests on
 * Alignment Cards the certificates commit to by hash only, and its trust adjustment on other agents'
 * scores. Its published inputs are taken as given, and only its arithmetic is checked.
 *
 * Verdict proofs are not needed here: each certificate's verdict is derived again from its signed
 * concerns by the verdict rule (`candor verify` checks the proofs themselves).
 */
import { Either, Schema } from "effect"
import { fromBase64, fromHex, toHex } from "./Bytes.js"
import { chainEntryOf, keyResolverFromKeys, verifyCertificate } from "./Certificate.js"
import { genesisHead, verifyChain } from "./Chain.js"
import { appendToFrontier, emptyFrontier, emptyRoot, type Frontier, frontierRoot, leafHash } from "./Merkle.js"
import { type NoteVerifier, verifyCheckpointNote } from "./Note.js"
import { type CoherenceInputs, computeReputation, type ReputationResult, type ReputationTally } from "./Reputation.js"
import { tallyCertificates } from "./ReputationTally.js"
import { IntegrityCertificate } from "./schema/Certificate.js"
import { ReevaluatedVerdict } from "./schema/Reevaluation.js"
import { type AgentReputation, COMPONENT_KEYS } from "./schema/Reputation.js"
import { isValidPublicKey, keyIdOf } from "./Signing.js"

/** One check: whether it holds and, when not, why (the first few reasons). */
export interface ReputationCheck {
  readonly ok: boolean
  readonly errors: ReadonlyArray<string>
}

/** A published field the recomputation does not reproduce. */
export interface ReputationMismatch {
  /** `score`, `grade`, `components.compliance.score`, `components.compliance.inputs.impact_sum`, … */
  readonly field: string
  readonly published: unknown
  readonly recomputed: unknown
}

export interface ReputationVerificationReport {
  readonly valid: boolean
  readonly checks: {
    /** The certificates are this agent's positions 0 … tree_size − 1, no more, no fewer. */
    readonly prefix: ReputationCheck
    /** Each certificate decodes, its signature verifies with a listed key, its verdict follows from its concerns. */
    readonly certificates: ReputationCheck
    /** Every chain link holds, from the agent's genesis. */
    readonly chain: ReputationCheck
    /** The Merkle root over the chain hashes is `computed_over.root`. */
    readonly merkle: ReputationCheck
    /** The signed tree head verifies under a listed key, for this agent's log, at that size and root. */
    readonly tree_head: ReputationCheck
    /** The recomputation reproduces every published number (`mismatches` lists the others). */
    readonly scores: ReputationCheck
  }
  /** The root rebuilt from the certificates (hex). */
  readonly computed_root: string
  readonly tally: ReputationTally
  readonly coherence: CoherenceInputs
  readonly recomputed: ReputationResult
  readonly mismatches: ReadonlyArray<ReputationMismatch>
}

/** A key as `GET /v1/keys` lists it. */
export type ListedKey = { readonly key_id: string; readonly public_key: string }

const MAX_ERRORS = 20

const check = (errors: ReadonlyArray<string>): ReputationCheck => ({
  ok: errors.length === 0,
  errors:
    errors.length <= MAX_ERRORS ? errors : [...errors.slice(0, MAX_ERRORS), `… and ${errors.length - MAX_ERRORS} more`]
})

const decodeCertificate = Schema.decodeUnknownEither(IntegrityCertificate, { onExcessProperty: "error" })

/** Floats published by the workers may have been summed in another order: equal within 1e-9, relative. */
const sameValue = (a: unknown, b: unknown): boolean =>
  typeof a === "number" && typeof b === "number"
    ? Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b))
    : typeof a === "object" && a !== null
      ? JSON.stringify(a) === JSON.stringify(b)
      : a === b

const isNumber = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value)

/**
 * The coherence component's published inputs, as computeReputation takes them; a string says what is
 * wrong with them.
 */
export const publishedCoherence = (published: AgentReputation): CoherenceInputs | string => {
  const component = published.components.find((c) => c.key === "coherence_compatibility")
  if (component === undefined) return "the coherence_compatibility component is missing"
  const { mean_pair_score, peers, trust_adjustment } = component.inputs
  if (mean_pair_score !== null && !isNumber(mean_pair_score))
    return "coherence_compatibility inputs: mean_pair_score must be a number or null"
  if (!isNumber(peers)) return "coherence_compatibility inputs: peers must be a number"
  if (!isNumber(trust_adjustment)) return "coherence_compatibility inputs: trust_adjustment must be a number"
  return { mean_pair_score, peers, trust_adjustment }
}

/**
 * The checkpoints the published score treats as card gaps (the compliance component's
 * `card_gap_checkpoints`, docs/reclassification.md); each is checkable in the agent's governance log.
 */
export const publishedCardGaps = (published: AgentReputation): ReadonlySet<string> => {
  const ids = published.components.find((c) => c.key === "compliance")?.inputs.card_gap_checkpoints
  return new Set(Array.isArray(ids) ? ids.filter((id): id is string => typeof id === "string") : [])
}

const decodeReevaluated = Schema.decodeUnknownEither(Schema.Array(ReevaluatedVerdict))

/**
 * The re-evaluated verdicts the published score counts (the integrity ratio's
 * `reevaluated_checkpoints`, core/Reevaluation.ts); each cites its `aip.reevaluation` entry in the
 * agent's governance log. A malformed list, or one longer than the log prefix, counts for nothing
 * (the recomputation then disagrees with the published inputs).
 */
export const publishedReevaluations = (published: AgentReputation): ReadonlyMap<string, ReevaluatedVerdict> => {
  const listed = published.components.find((c) => c.key === "integrity_ratio")?.inputs.reevaluated_checkpoints
  if (!Array.isArray(listed) || listed.length > published.computed_over.tree_size) return new Map()
  const decoded = decodeReevaluated(listed)
  return new Map(Either.isLeft(decoded) ? [] : decoded.right.map((r) => [r.checkpoint_id, r] as const))
}

/** Every published number the recomputation gives, field by field. */
const compare = (published: AgentReputation, recomputed: ReputationResult): Array<ReputationMismatch> => {
  const mismatches: Array<ReputationMismatch> = []
  const field = (name: string, publishedValue: unknown, recomputedValue: unknown) => {
    if (!sameValue(publishedValue, recomputedValue))
      mismatches.push({ field: name, published: publishedValue, recomputed: recomputedValue })
  }
  field("score", published.score, recomputed.score)
  field("grade", published.grade, recomputed.grade)
  field("tier", published.tier, recomputed.tier)
  field("is_eligible", published.is_eligible, recomputed.is_eligible)
  field("checkpoint_count", published.checkpoint_count, recomputed.checkpoint_count)
  field("confidence", published.confidence, recomputed.confidence)
  const keys = published.components.map((c) => c.key)
  if (keys.length !== COMPONENT_KEYS.length || new Set(keys).size !== keys.length)
    field("components", keys, [...COMPONENT_KEYS])
  for (const expected of recomputed.components) {
    const name = `components.${expected.key}`
    const actual = published.components.find((c) => c.key === expected.key)
    if (actual === undefined) {
      field(name, undefined, expected.score)
      continue
    }
    field(`${name}.score`, actual.score, expected.score)
    field(`${name}.weight`, actual.weight, expected.weight)
    field(`${name}.weighted_score`, actual.weighted_score, expected.weighted_score)
    for (const [input, value] of Object.entries(expected.inputs))
      field(`${name}.inputs.${input}`, actual.inputs[input], value)
  }
  return mismatches
}

/** The listed keys that are what they claim to be (a valid key whose id is derived from it). */
const publicKeys = (keys: ReadonlyArray<ListedKey>): ReadonlyArray<Uint8Array> =>
  keys.flatMap((key) => {
    const publicKey = fromBase64(key.public_key)
    return publicKey !== undefined && isValidPublicKey(publicKey) && keyIdOf(publicKey) === key.key_id
      ? [publicKey]
      : []
  })

const checkTreeHead = (
  published: AgentReputation,
  treeHead: string | null,
  keys: ReadonlyArray<ListedKey>,
  computedRoot: string
): Array<string> => {
  const { tree_size } = published.computed_over
  if (treeHead === null)
    return tree_size === 0 ? [] : [`no signed tree head for a score over ${tree_size} certificates`]
  const newline = treeHead.indexOf("\n")
  const origin = newline > 0 ? treeHead.slice(0, newline) : ""
  if (!origin.endsWith(`/agents/${published.agent_id}`))
    return [`the signed tree head is for log ${JSON.stringify(origin)}, not agent ${published.agent_id}`]
  const verifiers = publicKeys(keys).map((publicKey): NoteVerifier => ({ name: origin, publicKey }))
  const head = verifyCheckpointNote(treeHead, verifiers, origin)
  if (head === undefined) return ["the signed tree head does not verify under a listed key"]
  const errors: Array<string> = []
  if (head.size !== tree_size) errors.push(`the signed tree head is of size ${head.size}, the score's is ${tree_size}`)
  if (toHex(head.root) !== computedRoot)
    errors.push(`the signed tree head's root ${toHex(head.root)} is not the root of the certificates ${computedRoot}`)
  return errors
}

/**
 * Checks `published` against `certificates` (the first `computed_over.tree_size` of the agent's log, in
 * position order, as the API serves them), the signed tree head `treeHead` (normally
 * `computed_over.checkpoint`; null only for an empty log) and the signing keys (`GET /v1/keys`).
 * Never throws, whatever the certificates hold.
 */
export const verifyReputation = (
  published: AgentReputation,
  certificates: ReadonlyArray<unknown>,
  treeHead: string | null,
  keys: ReadonlyArray<ListedKey>
): ReputationVerificationReport => {
  const agentId = published.agent_id
  const { tree_size, root } = published.computed_over
  const resolveKey = keyResolverFromKeys(keys)
  const prefixErrors: Array<string> = []
  const certificateErrors: Array<string> = []
  const decoded: Array<IntegrityCertificate> = []
  if (certificates.length !== tree_size)
    prefixErrors.push(`${certificates.length} certificates given, the score is over ${tree_size}`)
  certificates.forEach((input, index) => {
    const result = decodeCertificate(input)
    if (Either.isLeft(result)) {
      certificateErrors.push(`certificate ${index}: malformed`)
      return
    }
    const certificate = result.right
    decoded.push(certificate)
    if (certificate.subject.agent_id !== agentId)
      prefixErrors.push(`certificate ${index}: of agent ${certificate.subject.agent_id}`)
    if (certificate.chain.position !== index)
      prefixErrors.push(`certificate ${index}: at position ${certificate.chain.position}`)
    // The verdict proof is outside the signature and not what the reputation rests on (see the header).
    const { checks, errors } = verifyCertificate(certificate, { resolveKey })
    if (!(checks.signature && checks.chain && checks.merkle && checks.verdict)) {
      const reasons = errors.filter((error) => !error.startsWith("verdict_proof:"))
      certificateErrors.push(`certificate ${index} (${certificate.subject.checkpoint_id}): ${reasons.join("; ")}`)
    }
  })

  const chainErrors: Array<string> = []
  if (decoded.length !== certificates.length) chainErrors.push("malformed certificates break the chain")
  const chain = verifyChain(
    decoded.map((c) => ({ entry: chainEntryOf(c), prev_hash: c.chain.prev_hash, hash: c.chain.hash })),
    genesisHead(agentId)
  )
  if (!chain.valid) chainErrors.push(`certificate ${chain.index}: ${chain.error}`)

  let frontier: Frontier = emptyFrontier
  for (const certificate of decoded) {
    // The schema made every chain hash 32 bytes of hex.
    frontier = appendToFrontier(frontier, leafHash(fromHex(certificate.chain.hash)!)).frontier
  }
  const computedRoot = toHex(frontierRoot(frontier))
  const merkleErrors: Array<string> = []
  // An empty log publishes no root (null); its root is SHA-256 of nothing.
  const publishedRoot = root ?? (tree_size === 0 ? toHex(emptyRoot) : null)
  if (publishedRoot !== computedRoot)
    merkleErrors.push(`computed_over.root is ${String(root)}, the certificates' root is ${computedRoot}`)

  const treeHeadErrors = checkTreeHead(published, treeHead, keys, computedRoot)

  const tally = tallyCertificates(decoded, publishedCardGaps(published), publishedReevaluations(published))
  const coherenceInputs = publishedCoherence(published)
  const coherence: CoherenceInputs =
    typeof coherenceInputs === "string" ? { mean_pair_score: null, peers: 0, trust_adjustment: 0 } : coherenceInputs
  const recomputed = computeReputation(tally, coherence, new Date(published.computed_at))
  const mismatches = compare(published, recomputed)
  const scoreErrors = [
    ...(typeof coherenceInputs === "string" ? [coherenceInputs] : []),
    ...mismatches.map(
      (m) => `${m.field}: published ${JSON.stringify(m.published)}, recomputed ${JSON.stringify(m.recomputed)}`
    )
  ]

  const checks = {
    prefix: check(prefixErrors),
    certificates: check(certificateErrors),
    chain: check(chainErrors),
    merkle: check(merkleErrors),
    tree_head: check(treeHeadErrors),
    scores: check(scoreErrors)
  }
  return {
    valid: Object.values(checks).every((c) => c.ok),
    checks,
    computed_root: computedRoot,
    tally,
    coherence,
    recomputed,
    mismatches
  }
}
