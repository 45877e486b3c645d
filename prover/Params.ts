/**
 * The pinned STARK parameter set. A verifier accepts proofs made with exactly this set (its id is
 * in the proof object and in the statement absorbed into Fiat–Shamir) and never takes a parameter
 * from the proof; the trace length comes from the statement.
 *
 * `gl3-b8-q73-g8`: Goldilocks trace, challenges in its cubic extension (192 bits), blowup 8,
 * 73 queries, 8 grinding bits, SHA-256. That is at least 100 bits of proven security at every
 * supported trace length (8 to 1024 rows; the list-decoding bound is the tighter one at 8 rows) and
 * 128 bits conjectured (capped by SHA-256's collision resistance). Grinding stays small on purpose:
 * 2^8 hashes cost well under a millisecond, while 2^16 would add ~100 ms of exponential-variance
 * work per proof; queries are cheap here because the evaluation domains are small.
 */
import { type SecurityLevel, securityLevel } from "./Security.js"

export interface ParameterSet {
  readonly id: string
  readonly blowup: number
  readonly queries: number
  readonly grindingBits: number
  /** Bits of the challenge field (Goldilocks³). */
  readonly fieldBits: number
  /** Collision resistance of the commitment hash (SHA-256). */
  readonly hashBits: number
}

export const PARAMS: ParameterSet = {
  id: "gl3-b8-q73-g8",
  blowup: 8,
  queries: 73,
  grindingBits: 8,
  fieldBits: 192,
  hashBits: 128
}

/** Statements with more concerns are refused: the trace would exceed 1024 rows. */
export const MAX_CONCERNS = 1022

export const MIN_TRACE_LENGTH = 8

/** Rows of the trace for n concerns: a zero row, the concerns, at least one padding row; a power of two, at least 8. */
export const traceLengthFor = (concernCount: number): number => {
  let n = MIN_TRACE_LENGTH
  while (n < concernCount + 2) n *= 2
  return n
}

export const securityOf = (params: ParameterSet, traceLength: number): SecurityLevel =>
  securityLevel({
    fieldBits: params.fieldBits,
    blowup: params.blowup,
    queries: params.queries,
    grindingBits: params.grindingBits,
    traceLength,
    hashBits: params.hashBits
  })
