/**
 * Proving as an Effect on the current thread, with the prover's exceptions turned into `ProverError`.
 * The worker runs it; the in-process layer too.
 */
import { Effect } from "effect"
import type { Kernels } from "./kernels/Kernels.js"
import { ProverError } from "./ProverError.js"
import { proveStatement, StatementRefused } from "./stark/Prove.js"
import type { VerdictStatement } from "./Statement.js"

export const proveEffect = (statement: VerdictStatement, kernels?: Kernels): Effect.Effect<Uint8Array, ProverError> =>
  Effect.try({
    try: () => proveStatement(statement, { kernels }),
    catch: (error) =>
      error instanceof StatementRefused
        ? new ProverError({ reason: "refused", message: error.message })
        : new ProverError({ reason: "failed", message: `prover failed: ${String(error)}` })
  })
