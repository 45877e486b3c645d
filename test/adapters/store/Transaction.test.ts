/**
 * A COMMIT that fails (here a deferred unique constraint, checked only at commit) comes back as an
 * SqlError the caller can handle, not as a defect that kills its fiber; on PostgreSQL and PGlite.
 */
import { describe, expect, it } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Layer from "effect/Layer"
import { transaction } from "../../../adapters/store/Transaction.js"
import { layerClient } from "../../support/Postgres.js"
import { skipsWithout } from "../../support/Integration.js"
import { pgliteFromTemplate } from "../../support/PgliteTemplate.js"

const backends: ReadonlyArray<readonly [string, Layer.Layer<SqlClient.SqlClient, unknown>]> = [
  ["postgres", layerClient],
  ["pglite", pgliteFromTemplate]
]

describe("transaction", () => {
  for (const [name, client] of backends) {
    it.live.skipIf(name === "postgres" && skipsWithout("postgres"))(
      `${name}: a failed COMMIT is a failure, and nothing of the transaction is kept`,
      () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          yield* sql`create table deferred_ids (id integer unique deferrable initially deferred)`
          const exit = yield* Effect.exit(
            transaction(
              sql,
              Effect.zipRight(sql`insert into deferred_ids values (1)`, sql`insert into deferred_ids values (1)`)
            )
          )
          expect(Exit.isFailure(exit) && !Exit.isInterrupted(exit)).toBe(true)
          if (Exit.isFailure(exit)) {
            expect(exit.cause._tag).toBe("Fail")
            expect(String((exit.cause as { error?: { _tag?: string } }).error?._tag)).toBe("SqlError")
          }
          expect(yield* sql`select count(*)::int as n from deferred_ids`).toEqual([{ n: 0 }])
          // The connection is usable after it.
          yield* transaction(sql, sql`insert into deferred_ids values (2)`)
          expect(yield* sql`select count(*)::int as n from deferred_ids`).toEqual([{ n: 1 }])
        }).pipe(Effect.provide(client))
    )
  }
})
