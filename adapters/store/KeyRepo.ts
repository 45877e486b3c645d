/**
 * The signing-key ring: the public key of every key that ever signed (table `signing_keys`,
 * migration 0005). Workers register their key when they start; retired keys stay listed, so a
 * certificate signed before a rotation still finds its key at `GET /v1/keys`.
 *
 * A key is retired when a newer one is registered: the first worker that starts with a new
 * `SIGNING_KEY` (or `candor keys rotate`) retires the others. Retired only means "no longer the
 * newest": certificates it signed verify as before.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { fromHex, toHex } from "../../core/Bytes.js"
import { isValidPublicKey, keyIdOf } from "../../core/Signing.js"
import { toIso } from "./Rows.js"
import { StoreError, storeError } from "./Store.js"
import { transaction } from "./Transaction.js"

export interface SigningKeyRecord {
  /** Derived from the key: `keyIdOf(public_key)`. */
  readonly key_id: string
  /** The raw 32-byte Ed25519 public key. */
  readonly public_key: Uint8Array
  /** RFC 3339: when it was first registered. */
  readonly created_at: string
  /** RFC 3339, or null while it is the newest key. */
  readonly retired_at: string | null
}

export class KeyRepo extends Context.Tag("candor/adapters/store/KeyRepo")<
  KeyRepo,
  {
    /**
     * Records the key that signs from now on. A key seen for the first time retires every other key;
     * a key already known is left as it is (a restart changes nothing). Returns whether it was new.
     */
    readonly registerActive: (publicKey: Uint8Array) => Effect.Effect<boolean, StoreError>
    /** Records a key that signed in the past as retired (it stays listed), unless it is already known. */
    readonly registerRetired: (publicKey: Uint8Array) => Effect.Effect<void, StoreError>
    /** Every key ever registered, oldest first. */
    readonly list: Effect.Effect<ReadonlyArray<SigningKeyRecord>, StoreError>
  }
>() {}

interface KeyRow {
  readonly key_id: string
  readonly public_key: string
  readonly created_at: unknown
  readonly retired_at: unknown
}

const recordOf = (row: KeyRow): SigningKeyRecord => ({
  key_id: row.key_id,
  public_key: fromHex(row.public_key)!,
  created_at: toIso(row.created_at),
  retired_at: row.retired_at === null || row.retired_at === undefined ? null : toIso(row.retired_at)
})

/** A key no verifier could accept: refused before it is listed. */
export class InvalidPublicKey extends Data.TaggedError("InvalidPublicKey")<{ readonly length: number }> {
  override get message(): string {
    return `not a valid Ed25519 public key (${this.length} bytes)`
  }
}

/** Only keys a verifier could ever accept are worth listing; anything else is a programmer error. */
const checked = (operation: string, publicKey: Uint8Array): Effect.Effect<string, StoreError> =>
  isValidPublicKey(publicKey)
    ? Effect.succeed(keyIdOf(publicKey))
    : Effect.fail(new StoreError({ operation, cause: new InvalidPublicKey({ length: publicKey.length }) }))

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const insert = (keyId: string, publicKey: Uint8Array, retired: boolean) =>
    sql<{ key_id: string }>`
      insert into signing_keys (key_id, public_key, retired_at)
      values (${keyId}, decode(${toHex(publicKey)}, 'hex'), ${retired ? sql`now()` : sql`null`})
      on conflict (key_id) do nothing
      returning key_id`

  const registerActive = (publicKey: Uint8Array) =>
    Effect.flatMap(checked("registerActive", publicKey), (keyId) =>
      transaction(
        sql,
        Effect.gen(function* () {
          // Two workers registering two new keys at once: the lock makes one of them the newest.
          yield* sql`select pg_advisory_xact_lock(7260412) as locked`
          const inserted = yield* insert(keyId, publicKey, false)
          if (inserted.length === 0) return false
          yield* sql`update signing_keys set retired_at = now() where retired_at is null and key_id <> ${keyId}`
          return true
        })
      ).pipe(storeError("registerActive"))
    )

  const registerRetired = (publicKey: Uint8Array) =>
    Effect.flatMap(checked("registerRetired", publicKey), (keyId) =>
      insert(keyId, publicKey, true).pipe(Effect.asVoid, storeError("registerRetired"))
    )

  const list = sql<KeyRow>`
    select key_id, encode(public_key, 'hex') as public_key, created_at, retired_at
    from signing_keys order by created_at, key_id`.pipe(
    Effect.map((rows) => rows.map(recordOf)),
    storeError("listKeys")
  )

  return KeyRepo.of({ registerActive, registerRetired, list })
})

export const layer: Layer.Layer<KeyRepo, never, SqlClient.SqlClient> = Layer.effect(KeyRepo, make)
