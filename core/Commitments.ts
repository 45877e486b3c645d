/**
 * The input commitments of a certificate: what the verdict was judged against, as hashes, so a
 * verifier holding the card, the conscience values or the judge's analysis can check that these
 * were the inputs, and nobody else learns them. Each is a domain-separated SHA-256 over the JCS of
 * the value (see docs/formats.md).
 */
import { toHex } from "./Bytes.js"
import { canonicalHash } from "./Canonical.js"
import type { AlignmentCard } from "./schema/Card.js"
import type { IntegrityCheckpoint } from "./schema/Checkpoint.js"
import type { ConscienceValue } from "./schema/Conscience.js"
import type { Policy } from "./schema/Policy.js"
import type { TeamCard } from "./schema/TeamCard.js"

/** `SHA-256("candor/v1/card\0" ‖ JCS(card))`; an agent with no card commits to JCS(null). */
export const cardHash = (card: AlignmentCard | undefined): string => toHex(canonicalHash("card", card ?? null))

/**
 * `SHA-256("candor/v1/team_card\0" ‖ JCS(card))` of a decoded team card: what the organization's
 * governance log binds when a team card version is put in force.
 */
export const teamCardHash = (card: TeamCard): string => toHex(canonicalHash("team_card", card))

/** `SHA-256("candor/v1/values\0" ‖ JCS(values))`, in the order they were given to the judge. */
export const valuesHash = (values: ReadonlyArray<ConscienceValue>): string => toHex(canonicalHash("values", values))

/**
 * `SHA-256("candor/v1/policy\0" ‖ JCS(policy))` of a decoded (normalised, defaults filled) tool
 * policy: what the governance log binds when a policy is put in force.
 */
export const policyHash = (policy: Policy): string => toHex(canonicalHash("policy", policy))

/**
 * The judge's analysis as recorded: concerns (with evidence and cause), summary, model, the judge's
 * own verdict and, on checkpoints recorded since the conscience context is filled, the conscience
 * context. Those carry `conscience_context.resolution_mode` (the workers always set it); one without
 * it was certified before, when the context was a constant and not committed to, so leaving it out
 * keeps its `analysis_hash` what it was. Removing `resolution_mode` from a newer checkpoint to
 * take the context out of the hash changes the hash all the same.
 */
export const analysisOf = (checkpoint: IntegrityCheckpoint) => ({
  concerns: checkpoint.concerns,
  reasoning_summary: checkpoint.reasoning_summary,
  analysis_model: checkpoint.analysis_metadata.analysis_model,
  llm_verdict: checkpoint.analysis_metadata.llm_verdict ?? null,
  synthetic_reason: checkpoint.synthetic_reason ?? null,
  ...(checkpoint.conscience_context.resolution_mode === undefined
    ? {}
    : { conscience_context: checkpoint.conscience_context })
})

/** `SHA-256("candor/v1/analysis\0" ‖ JCS(analysisOf(checkpoint)))`. */
export const analysisHash = (checkpoint: IntegrityCheckpoint): string =>
  toHex(canonicalHash("analysis", analysisOf(checkpoint)))

/**
 * Whether a checkpoint is the analysis its certificate commits to (`input_commitments.analysis_hash`):
 * a changed concern, summary or conscience context shows here, as the certificate's signature
 * covers the hash.
 */
export const matchesAnalysisCommitment = (checkpoint: IntegrityCheckpoint, analysis_hash: string): boolean =>
  analysisHash(checkpoint) === analysis_hash.toLowerCase()
