/**
 * The message the prover's worker threads answer: a statement in, the binary proof out (or a
 * `ProverError`). Shared by the pool (prover/Prover.ts) and the worker (prover/Worker.ts).
 */
import { Schema } from "effect"
import { ProverError } from "./ProverError.js"
import { VerdictStatement } from "./Statement.js"

export class ProveRequest extends Schema.TaggedRequest<ProveRequest>()("ProveRequest", {
  failure: ProverError,
  success: Schema.Uint8ArrayFromSelf,
  payload: { statement: VerdictStatement }
}) {}
