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
import type { Store } from "./Store.js"
import type { WebhookRepo } from "./WebhookRepo.js"
import { SecretKeys } from "../keys/SecretKeys.js"
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

/** Seals the webhook secrets stored in clear before migration 0010 (a no-op once done). */
const sealLegacy = Layer.effectDiscard(
  Effect.flatMap(Effect.all([SqlClient.SqlClient, SecretKeys]), ([sql, keys]) => sealLegacySecrets(sql, keys.active))
)

/** The store, with the client it runs on; secrets still in clear are sealed before it is used. */
export const layer = (
  config: StoreConfig
): Layer.Layer<Store | WebhookRepo | SqlClient.SqlClient, SqlError | MigrationError, SecretKeys> =>
  SqlStore.layer.pipe(Layer.provideMerge(Layer.provideMerge(sealLegacy, layerSql(config))))
