/**
 * `sql.withTransaction`, with a failed COMMIT or ROLLBACK as a failure instead of a defect.
 *
 * @effect/sql runs the closing statement under `orDie`, so a connection lost at the commit would
 * kill the calling fiber (a worker's retention loop, a prover job, an API request answered 500)
 * instead of failing it with the `SqlError` its caller already maps to `StoreError` and retries.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

export const transaction = <A, E, R>(
  sql: SqlClient.SqlClient,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E | SqlError, R> =>
  sql
    .withTransaction(effect)
    .pipe(
      Effect.catchSomeDefect((defect) =>
        defect instanceof SqlError ? Option.some(Effect.fail(defect)) : Option.none()
      )
    )
