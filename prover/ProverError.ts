/**
 * Why a proof was not made. `refused`: the statement cannot be proved (its claimed verdict is not
 * the rule's, or it has too many concerns), so retrying is pointless; `failed`: the prover itself
 * failed (a worker died, a bug), so a retry may succeed. Serialisable: it crosses the worker boundary.
 */
import { Schema } from "effect"

export class ProverError extends Schema.TaggedError<ProverError>()("ProverError", {
  reason: Schema.Literal("refused", "failed"),
  message: Schema.String
}) {}
