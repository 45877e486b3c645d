/**
 * `candor keys list [--json]` and `candor keys rotate`: the signing-key ring in the configured
 * database (DATABASE_URL, else the embedded one in CANDOR_DATA_DIR; PGlite is single-process, so on
 * the embedded default run these with the server stopped, or read GET /v1/keys instead).
 *
 * Rotation on the embedded default writes a new key into the data dir and retires the old one, which
 * stays listed so its certificates keep verifying; running processes sign with the new key once
 * restarted. With SIGNING_KEY set the key is the operator's: rotating means setting a new
 * SIGNING_KEY, and the old key stays listed because the workers registered it when they started.
 *
 * `candor keys rotate-secret-key`: a new key-encryption key and every stored secret re-sealed under
 * it (adapters/keys/SecretRotation.ts); the same database caveat applies.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as SqlClient from "@effect/sql/SqlClient"
import { formatSecretKey } from "../../core/SecretBox.js"
import { rotateEmbeddedKey } from "../../adapters/keys/Rotation.js"
import { rotateSecretKey } from "../../adapters/keys/SecretRotation.js"
import { publicKeyInfo } from "../../adapters/keys/Trust.js"
import * as KeyRepo from "../../adapters/store/KeyRepo.js"
import * as StoreDatabase from "../../adapters/store/StoreDatabase.js"
import { CandorConfig, layerFromEnv } from "../Config.js"

/**
 * The key ring on the configured database, migrated: its one repository, not every one
 * (adapters/store/Repositories.ts). Those need the key-encryption key, whose layer writes a new one
 * into the data dir when there is none, which listing or rotating signing keys must not do.
 */
const KeyRingLive = Layer.unwrapEffect(
  Effect.map(CandorConfig, (config) =>
    KeyRepo.layer.pipe(
      Layer.provide(StoreDatabase.layerSql({ databaseUrl: config.databaseUrl, dataDir: config.dataDir }))
    )
  )
).pipe(Layer.provide(layerFromEnv))

const json = Options.boolean("json").pipe(
  Options.withDescription("Print the GET /v1/keys JSON (a file for `candor verify --keys`)")
)

const list = Command.make("list", { json }, ({ json }) =>
  Effect.gen(function* () {
    const keys = (yield* (yield* KeyRepo.KeyRepo).list).map(publicKeyInfo)
    if (json) return yield* Console.log(JSON.stringify({ keys }, null, 2))
    if (keys.length === 0)
      return yield* Console.log("No signing key registered yet: workers register theirs when they start.")
    for (const key of keys) {
      yield* Console.log(
        `${key.key_id}  ${key.status.padEnd(7)}  created ${key.created_at}${key.retired_at === null ? "" : `  retired ${key.retired_at}`}`
      )
    }
  }).pipe(Effect.provide(KeyRingLive))
).pipe(Command.withDescription("List every signing key that ever signed (retired keys still verify)"))

const ROTATE_WITH_SIGNING_KEY = [
  "SIGNING_KEY is set, so the signing key is yours to rotate: set a new SIGNING_KEY (an Ed25519 key, e.g. from",
  "`openssl genpkey -algorithm ed25519`) on every worker and restart them. The first worker that starts with it",
  "registers it and retires the old key, which stays listed at GET /v1/keys because the workers registered it",
  "when they started: certificates it signed keep verifying."
].join("\n")

const rotate = Command.make("rotate", {}, () =>
  Effect.gen(function* () {
    const config = yield* CandorConfig
    if (Option.isSome(config.signingKey)) {
      yield* Console.error(ROTATE_WITH_SIGNING_KEY)
      // Nothing was rotated: a script relying on this command must not take it for done.
      return yield* Effect.sync(() => {
        process.exitCode = 1
      })
    }
    const rotation = yield* rotateEmbeddedKey(config.dataDir).pipe(Effect.provide(KeyRingLive))
    yield* Console.log(
      [
        rotation.previous === undefined
          ? "There was no signing key in the data dir yet."
          : `Retired ${rotation.previous}: still listed, its certificates keep verifying.`,
        `New signing key ${rotation.next} in ${rotation.path}.`,
        "Restart running Candor processes to sign with it."
      ].join("\n")
    )
  }).pipe(Effect.provide(layerFromEnv))
).pipe(
  Command.withDescription(
    "Replace the embedded signing key (old keys stay listed); with SIGNING_KEY set, explains how to rotate it"
  )
)

const rotateSecret = Command.make("rotate-secret-key", {}, () =>
  Effect.gen(function* () {
    const config = yield* CandorConfig
    const sql = yield* SqlClient.SqlClient
    const rotation = yield* rotateSecretKey({
      secretKey: config.secretKey,
      dataDir: config.dataDir,
      sql,
      // Printed before the re-seal, and only here: a failure after the commit cannot lose it.
      announce: (key) =>
        Console.log(
          [
            "New CANDOR_SECRET_KEY (shown once; keep it with your other secrets):",
            "",
            `  ${formatSecretKey(key)}`,
            ""
          ].join("\n")
        )
    })
    yield* Console.log(
      [
        `Re-sealed ${rotation.resealed} stored secret(s) and ${rotation.resealedRows} row(s) of checkpoints, traces and certificates under key ${rotation.next}` +
          (rotation.previous.length === 0 ? "." : `; ${rotation.previous.join(", ")} no longer opens them.`),
        rotation.path === undefined
          ? "Set CANDOR_SECRET_KEY to the new key on every process and restart them; until then they cannot open the secrets (webhook deliveries are retried) nor the sealed fields."
          : `New key in ${rotation.path}. Restart running Candor processes to use it.`
      ].join("\n")
    )
  }).pipe(
    Effect.provide(
      Layer.unwrapEffect(
        Effect.map(CandorConfig, (config) =>
          StoreDatabase.layerSql({ databaseUrl: config.databaseUrl, dataDir: config.dataDir })
        )
      )
    ),
    Effect.provide(layerFromEnv)
  )
).pipe(
  Command.withDescription(
    "Replace the key-encryption key of stored secrets and re-seal them all under the new one (secrets in one transaction, then checkpoints, traces and certificates in batches)"
  )
)

export const keysCommand = Command.make("keys").pipe(
  Command.withDescription("The signing keys of certificates and signed tree heads, and the key of stored secrets"),
  Command.withSubcommands([list, rotate, rotateSecret])
)
