/**
 * Throwaway PostgreSQL databases for integration tests: a fresh database on the TEST_DATABASE_URL
 * server per test file (or per scope), dropped when the scope closes, so files running in
 * parallel never see each other's rows.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import type { MigrationError } from "@effect/sql/Migrator"
import * as PgClient from "@effect/sql-pg/PgClient"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as Option from "effect/Option"
import { randomBytes } from "node:crypto"
import * as SecretKeys from "../../adapters/keys/SecretKeys.js"
import type { Repositories } from "../../adapters/store/Repositories.js"
import type { Store } from "../../adapters/store/Store.js"
import * as StoreDatabase from "../../adapters/store/StoreDatabase.js"

/** The server the tests use; its own database only serves to create and drop the throwaway ones. */
export const testDatabaseUrl = (): string => process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"

const withDatabase = (url: string, database: string): string => {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

/** Creates a database `candor_test_<random>`; its URL is good until the scope closes, which drops it. */
export const throwawayDatabase: Effect.Effect<Redacted.Redacted<string>, SqlError, Scope.Scope> = Effect.gen(
  function* () {
    const serverUrl = testDatabaseUrl()
    const admin = yield* PgClient.make({ url: Redacted.make(serverUrl), applicationName: "candor-test-admin" })
    const name = `candor_test_${randomBytes(6).toString("hex")}`
    yield* Effect.acquireRelease(admin.unsafe(`create database ${name}`), () =>
      // FORCE ends the connections a failed test may have left open.
      Effect.orDie(admin.unsafe(`drop database if exists ${name} with (force)`))
    )
    return Redacted.make(withDatabase(serverUrl, name))
  }
).pipe(Effect.provide(Reactivity.layer))

/** A `PgClient` on a fresh database, dropped when the layer is released. */
export const layerClient: Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, SqlError> = Layer.unwrapScoped(
  Effect.map(throwawayDatabase, (url) => PgClient.layer({ url }))
)

/**
 * The store and its repositories on a fresh database, migrated, through `StoreDatabase.layer` as
 * `candor serve` builds it when DATABASE_URL is set; dropped when the layer is released.
 */
export const layerStore: Layer.Layer<Store | Repositories | SqlClient.SqlClient, SqlError | MigrationError> =
  Layer.unwrapScoped(
    Effect.map(throwawayDatabase, (url) =>
      StoreDatabase.layer({ databaseUrl: Option.some(url), dataDir: "unused" }).pipe(
        Layer.provide(SecretKeys.layerEphemeral)
      )
    )
  )
