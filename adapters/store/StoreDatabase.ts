/**
 * Choosing the database: PostgreSQL through @effect/sql-pg when `DATABASE_URL` is set, else
 * embedded PGlite in `${CANDOR_DATA_DIR}/pg`. Either way the migrations run before anything else
 * can use the client.
 */
import type { MigrationError } from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import { join } from "node:path"
import * as Migrations from "./Migrations.js"
import * as PgliteClient from "./PgliteClient.js"
import * as SqlStore from "./SqlStore.js"
import type { Repositories } from "./Repositories.js"
import type { Store } from "./Store.js"
import { SecretKeys } from "../keys/SecretKeys.js"
import { sealLegacyFields } from "./SealedFields.js"
import { sealLegacySecrets } from "./WebhookSecrets.js"

export interface StoreConfig {
  /** `DATABASE_URL`; none: the embedded database. */
  readonly databaseUrl: Option.Option<Redacted.Redacted>
  /** `CANDOR_DATA_DIR`: the embedded database lives in its `pg` folder. */
  readonly dataDir: string
}

/** `client`, migrated before anything else can use it. */
export const migrated = <E>(
  client: Layer.Layer<SqlClient.SqlClient, E>
): Layer.Layer<SqlClient.SqlClient, E | SqlError | MigrationError> =>
  Layer.effectDiscard(Migrations.run).pipe(Layer.provideMerge(client))

/** A migrated `SqlClient` on the configured database. */
export const layerSql = (config: StoreConfig): Layer.Layer<SqlClient.SqlClient, SqlError | MigrationError> =>
  migrated(
    Option.match(config.databaseUrl, {
      onNone: () => PgliteClient.layer({ dataDir: join(config.dataDir, "pg") }),
      onSome: (url) => PgClient.layer({ url, applicationName: "candor" })
    })
  )

/**
 * Seals what was stored in clear before it was sealed at rest (a no-op once done): the webhook
 * secrets of before migration 0010, before the store is used (a handful of rows); the
 * reasoning-derived fields of before 0014 in the background, in batches, so a large table does not
 * hold up the start (reads take those rows as they are meanwhile; a pass cut short by a stop
 * resumes at the next start). A failed pass is logged, and retried at the next start.
 */
const sealLegacy = Layer.scopedDiscard(
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const keys = yield* SecretKeys
    yield* sealLegacySecrets(sql, keys.active)
    yield* sealLegacyFields(sql, keys.active).pipe(
      Effect.catchAll((error) => Effect.logWarning("sealing the fields stored before 0014 stopped", error)),
      Effect.forkScoped
    )
  })
)

/**
 * The store and every repository (Repositories.ts), with the client they run on; what is still in
 * clear is sealed (see `sealLegacy`).
 */
export const layer = (
  config: StoreConfig
): Layer.Layer<Store | Repositories | SqlClient.SqlClient, SqlError | MigrationError, SecretKeys> =>
  SqlStore.layer.pipe(Layer.provideMerge(Layer.provideMerge(sealLegacy, layerSql(config))))
