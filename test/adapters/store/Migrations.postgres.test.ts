/**
 * Migrations on PostgreSQL when several processes start at once on an empty database: each
 * migration is applied exactly once and every process comes up.
 */
import { expect, it } from "@effect/vitest"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Migrations from "../../../adapters/store/Migrations.js"
import { throwawayDatabase } from "../../support/Postgres.js"
import { describeIntegration } from "../../support/Integration.js"

describeIntegration("postgres", "Migrations on PostgreSQL", () => {
  it.scoped("apply once when four processes start together", () =>
    Effect.gen(function* () {
      const url = yield* throwawayDatabase
      // Each "process" has its own pool, as separate `candor serve` instances would.
      const start = Effect.provide(Migrations.run, PgClient.layer({ url }))
      const applied = yield* Effect.all([start, start, start, start], { concurrency: "unbounded" })
      // Each migration applied by exactly one of the four.
      expect(applied.flat()).toEqual(Migrations.migrationNames.map((name) => [Number(name.slice(0, 4)), name.slice(5)]))
      const tables = yield* Effect.provide(
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: string }>`select count(*) as n from candor_migrations`),
        PgClient.layer({ url })
      )
      expect(tables).toEqual([{ n: String(Migrations.migrationNames.length) }])
    })
  )
})
