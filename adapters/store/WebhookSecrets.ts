/**
 * Webhook endpoint signing secrets at rest: sealed under the active key-encryption key
 * (core/SecretBox.ts) before they reach SQL, bound to their endpoint id (the `registration_id`
 * column, a name kept from migration 0002) so a sealed value copied to another row does not open
 * there, and opened only when a delivery is signed (WebhookRepo.ts, `secrets` and `attemptContext`). Rows stored before
 * migration 0010 still hold a clear `legacy_secret`: `sealLegacySecrets` seals them when a process
 * opens the store, and until then they are read as they are.
 *
 * During a rotation (migration 0011) the previous secret keeps signing beside the new one for a
 * while: it is sealed too, under its own additional data, so it cannot be swapped with the current one.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { open, seal, sealedKeyId, type SecretKey } from "../../core/SecretBox.js"
import { transaction } from "./Transaction.js"

/** The additional data of an endpoint's secret: the column and the row. */
export const webhookSecretAad = (endpointId: string): string => `webhooks.secret:${endpointId}`

export const sealWebhookSecret = (key: SecretKey, endpointId: string, secret: string): string =>
  seal(key, secret, webhookSecretAad(endpointId))

/** The additional data of an endpoint's previous secret (kept for a while after a rotation). */
export const previousSecretAad = (endpointId: string): string => `webhooks.previous_secret:${endpointId}`

export const sealPreviousSecret = (key: SecretKey, endpointId: string, secret: string): string =>
  seal(key, secret, previousSecretAad(endpointId))

/** The previous secret of a row, or undefined when it does not open (never fatal: the current one still signs). */
export const openPreviousSecret = (
  keys: ReadonlyArray<SecretKey>,
  endpointId: string,
  sealed: string
): string | undefined => open(keys, sealed, previousSecretAad(endpointId))

/** A stored secret this process cannot open; the message names the row and the key, never a secret. */
export class WebhookSecretUnreadable extends Data.TaggedError("WebhookSecretUnreadable")<{
  readonly message: string
}> {}

export interface SecretColumns {
  readonly registration_id: string
  readonly secret_sealed: string | null
  readonly legacy_secret: string | null
}

/** The clear secret of a row, or why it cannot be read. */
export const openWebhookSecret = (
  keys: ReadonlyArray<SecretKey>,
  row: SecretColumns
): Effect.Effect<string, WebhookSecretUnreadable> => {
  if (row.secret_sealed === null) {
    return row.legacy_secret === null
      ? Effect.fail(
          new WebhookSecretUnreadable({ message: `webhook endpoint ${row.registration_id} has no stored secret` })
        )
      : Effect.succeed(row.legacy_secret)
  }
  const secret = open(keys, row.secret_sealed, webhookSecretAad(row.registration_id))
  if (secret !== undefined) return Effect.succeed(secret)
  const keyId = sealedKeyId(row.secret_sealed)
  const held = keys.some((key) => key.keyId === keyId)
  return Effect.fail(
    new WebhookSecretUnreadable({
      message:
        keyId === undefined
          ? `the secret of webhook endpoint ${row.registration_id} is not a sealed value of a known format`
          : held
            ? `the secret of webhook endpoint ${row.registration_id} does not open under key ${keyId}: altered, or moved from another row`
            : `the secret of webhook endpoint ${row.registration_id} is sealed under key ${keyId}, which this process does not hold (CANDOR_SECRET_KEY must be the same on every process)`
    })
  )
}

/**
 * Seals every row still holding a clear secret and clears it; returns how many. Idempotent and
 * safe when several processes start at once: a row is only rewritten while its clear value is there.
 */
export const sealLegacySecrets = (sql: SqlClient.SqlClient, key: SecretKey): Effect.Effect<number, SqlError> =>
  Effect.gen(function* () {
    const rows = yield* sql<{ registration_id: string; legacy_secret: string }>`
      select registration_id, legacy_secret from webhooks where legacy_secret is not null`
    let sealed = 0
    for (const row of rows) {
      const updated = yield* sql<{ registration_id: string }>`
        update webhooks set secret_sealed = ${sealWebhookSecret(key, row.registration_id, row.legacy_secret)},
          legacy_secret = null
        where registration_id = ${row.registration_id} and legacy_secret = ${row.legacy_secret}
        returning registration_id`
      sealed += updated.length
    }
    if (sealed > 0)
      yield* Effect.log("webhook secrets stored before 0010 sealed at rest").pipe(
        Effect.annotateLogs({ count: sealed, key_id: key.keyId })
      )
    return sealed
  })

/**
 * Re-seals every stored secret under `to`, in one transaction: either all rows move to the new
 * key or none does (a row that `from` cannot open fails the whole re-seal). Returns how many.
 */
export const resealWebhookSecrets = (
  sql: SqlClient.SqlClient,
  from: ReadonlyArray<SecretKey>,
  to: SecretKey
): Effect.Effect<number, SqlError | WebhookSecretUnreadable> =>
  transaction(
    sql,
    Effect.gen(function* () {
      const rows = yield* sql<SecretColumns & { previous_secret_sealed: string | null }>`
        select registration_id, secret_sealed, legacy_secret, previous_secret_sealed
        from webhooks order by registration_id for update`
      for (const row of rows) {
        const secret = yield* openWebhookSecret(from, row)
        // The previous secret of a rotation: re-sealed too, or it would stay under the old key.
        let previous: string | null = null
        if (row.previous_secret_sealed !== null) {
          const clear = openPreviousSecret(from, row.registration_id, row.previous_secret_sealed)
          if (clear === undefined)
            return yield* new WebhookSecretUnreadable({
              message: `the previous secret of webhook endpoint ${row.registration_id} does not open under the current keys`
            })
          previous = sealPreviousSecret(to, row.registration_id, clear)
        }
        yield* sql`
          update webhooks set secret_sealed = ${sealWebhookSecret(to, row.registration_id, secret)}, legacy_secret = null,
            previous_secret_sealed = ${previous}
          where registration_id = ${row.registration_id}`
      }
      return rows.length
    })
  )
