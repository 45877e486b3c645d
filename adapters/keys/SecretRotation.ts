/**
 * Rotating the key-encryption key (`candor keys rotate-secret-key`): a new KEK, every stored
 * secret re-sealed under it in one transaction (adapters/store/WebhookSecrets.ts), then every row
 * with reasoning-derived fields (checkpoints, traces, certificates: adapters/store/SealedFields.ts)
 * in batches of one transaction each. A failure part way leaves some rows under the new key and
 * the rest under the old one, every one of them readable with both.
 *
 * On the embedded default the key file moves through three states, each readable whatever happens
 * next: `[old]`, then `[new, old]` (written before the re-seal, so a crash at any later step leaves a
 * file that opens every row, sealed under either key), then `[new]` once the re-seal has committed:
 * the old key opens nothing any more and is dropped, as a rotation is often made because it may
 * have leaked.
 *
 * With CANDOR_SECRET_KEY set the key is the operator's: the new key is handed to `announce` (which
 * prints it, once) before the re-seal, so it is never lost to a failure after the commit; the
 * operator then sets it on every process.
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type { PlatformError } from "@effect/platform/Error"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { generateSecretKey, type SecretKey } from "../../core/SecretBox.js"
import { resealFields, type SealedFieldUnreadable } from "../store/SealedFields.js"
import { resealWebhookSecrets, type WebhookSecretUnreadable } from "../store/WebhookSecrets.js"
import { parseSecretKeys, readKeyFile, SecretKeyError, writeKeyFile } from "./SecretKeys.js"

export interface SecretRotation {
  /** The key ids that could open stored secrets until now (none when the data dir had no key yet). */
  readonly previous: ReadonlyArray<string>
  /** The key id every stored secret is sealed under now. */
  readonly next: string
  /** How many stored secrets were re-sealed. */
  readonly resealed: number
  /** How many rows with reasoning-derived fields were re-sealed. */
  readonly resealedRows: number
  /** The key file written, on the embedded default. */
  readonly path: string | undefined
}

export const rotateSecretKey = (options: {
  readonly secretKey: Option.Option<Redacted.Redacted<string>>
  readonly dataDir: string
  readonly sql: SqlClient.SqlClient
  /** Receives the new key when it is the operator's to set (CANDOR_SECRET_KEY), before the re-seal. */
  readonly announce: (key: SecretKey) => Effect.Effect<void>
}): Effect.Effect<
  SecretRotation,
  SecretKeyError | WebhookSecretUnreadable | SealedFieldUnreadable | SqlError | PlatformError,
  FileSystem.FileSystem
> =>
  Effect.gen(function* () {
    const next = generateSecretKey()
    if (Option.isSome(options.secretKey)) {
      const current = parseSecretKeys(Redacted.value(options.secretKey.value))
      if (current === undefined)
        return yield* Effect.fail(
          new SecretKeyError({ message: "CANDOR_SECRET_KEY is not a 32-byte key (value not shown)" })
        )
      yield* options.announce(next)
      const resealed = yield* resealWebhookSecrets(options.sql, current, next)
      const resealedRows = yield* resealFields(options.sql, current, next)
      return { previous: current.map((key) => key.keyId), next: next.keyId, resealed, resealedRows, path: undefined }
    }
    const current = (yield* readKeyFile(options.dataDir)) ?? []
    yield* writeKeyFile(options.dataDir, [next, ...current])
    const resealed = yield* resealWebhookSecrets(options.sql, [next, ...current], next)
    const resealedRows = yield* resealFields(options.sql, [next, ...current], next)
    const path = yield* writeKeyFile(options.dataDir, [next])
    return { previous: current.map((key) => key.keyId), next: next.keyId, resealed, resealedRows, path }
  })
