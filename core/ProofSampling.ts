/**
 * Which checkpoints get a STARK verdict proof: every `boundary_violation`, and 10% of the rest.
 *
 * The 10% is not random: a checkpoint is sampled when the first 8 bytes of
 *
 *   SHA-256("candor/v1/proof-sampling\0" ‖ UTF-8(checkpoint_id))
 *
 * read as a big-endian unsigned 64-bit integer `x` satisfy `x · 100 < rate_percent · 2^64`
 * (for the default 10%: `x · 10 < 2^64`). Anyone can recompute the choice from the checkpoint id,
 * so an auditor can check that no sampled checkpoint went unproved and that the sample was not
 * picked after seeing the verdicts; and every worker that sees the checkpoint agrees on it.
 */
import { utf8 } from "./Bytes.js"
import { taggedHash } from "./Hash.js"
import type { Verdict } from "./schema/Verdict.js"

/** Share of non-violations proved, in whole percent (docs/formats.md, "Proof sampling": 10% of the other verdicts). */
export const PROOF_SAMPLE_PERCENT = 10

const TWO_POW_64 = 1n << 64n

/** The sampling draw of a checkpoint: the first 8 bytes of its tagged hash, big-endian. */
export const proofSamplingDraw = (checkpointId: string): bigint => {
  const digest = taggedHash("proof-sampling", utf8(checkpointId))
  return new DataView(digest.buffer, digest.byteOffset, 8).getBigUint64(0, false)
}

/** Whether the checkpoint falls in the deterministic `percent`% sample (0 never, 100 always). */
export const inProofSample = (checkpointId: string, percent: number = PROOF_SAMPLE_PERCENT): boolean => {
  if (!Number.isInteger(percent) || percent < 0 || percent > 100) {
    throw new RangeError(`proof sample percent must be an integer from 0 to 100, got ${percent}`)
  }
  return proofSamplingDraw(checkpointId) * 100n < BigInt(percent) * TWO_POW_64
}

/** Every boundary violation is proved; any other verdict when its id falls in the sample. */
export const shouldProve = (checkpointId: string, verdict: Verdict, percent: number = PROOF_SAMPLE_PERCENT): boolean =>
  verdict === "boundary_violation" || inProofSample(checkpointId, percent)
