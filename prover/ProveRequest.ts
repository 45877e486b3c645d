/**
 * The message the prover's worker threads answer: a statement in, the checked `verdict_proof` object
 * out (or a `ProverError`). Shared by the pool (prover/Prover.ts) and the worker (prover/Worker.ts).
 *
 * The worker does all the per-proof work (prove, verify, hash the statement, base64 the proof), so
 * the thread that asked only posts a small statement and receives a few strings. The answer crosses
 * as it is (structured clone), unchecked: it was built and verified by our own worker, and checking
 * its ~50 KB of base64 against a pattern again would cost the asking thread what the worker saved it.
 */
import { Schema } from "effect"
import { ProverError } from "./ProverError.js"
import { VerdictStatement } from "./Statement.js"
import type { VerdictProofObject } from "./VerdictProof.js"

/** A `VerdictProofObject` made by our worker, passed through without re-validation (see above). */
const ProvedObject = Schema.declare(
  (value: unknown): value is VerdictProofObject => typeof value === "object" && value !== null,
  { identifier: "ProvedVerdictProofObject" }
)

export class ProveRequest extends Schema.TaggedRequest<ProveRequest>()("ProveRequest", {
  failure: ProverError,
  success: ProvedObject,
  payload: { statement: VerdictStatement }
}) {}
