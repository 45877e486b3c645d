/**
 * Credentials Candor issues itself: API keys and impersonation sessions. Only the SHA-256 (hex) of each
 * secret is stored (the secret is shown once, at creation), and lookups go by that hash.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { OrgRole } from "../../../core/schema/Organization.js"
import { type Columns, fromRow, toIso } from "../Rows.js"
import { StoreError, storeError } from "../Store.js"

export interface ApiKey {
  readonly key_id: string
  readonly name: string
  /** The first characters of the key, to recognise it in a list (never enough to use it). */
  readonly prefix: string
  readonly user_id: string
  /** Set for an organization key, which acts with `role` in that organization only. */
  readonly org_id: string | null
  readonly role: OrgRole | null
  readonly created_at: string
  readonly last_used_at: string | null
  readonly revoked_at: string | null
}

export interface ImpersonationSession {
  readonly session_id: string
  readonly admin_user_id: string
  readonly target_user_id: string
  readonly reason: string | null
  readonly created_at: string
  readonly expires_at: string
  readonly ended_at: string | null
}

export class CredentialRepo extends Context.Tag("candor/adapters/store/identity/CredentialRepo")<
  CredentialRepo,
  {
    readonly createKey: (
      key: Omit<ApiKey, "created_at" | "last_used_at" | "revoked_at"> & {
        readonly key_hash: string
      }
    ) => Effect.Effect<ApiKey, StoreError>
    /** The unrevoked key with this hash. */
    readonly keyByHash: (keyHash: string) => Effect.Effect<ApiKey | undefined, StoreError>
    readonly getKey: (keyId: string) => Effect.Effect<ApiKey | undefined, StoreError>
    /** Keys of a user (personal) or of an organization, newest first, revoked ones included. */
    readonly keysOf: (
      owner: { readonly userId: string } | { readonly orgId: string }
    ) => Effect.Effect<ReadonlyArray<ApiKey>, StoreError>
    readonly revokeKey: (keyId: string) => Effect.Effect<boolean, StoreError>
    /** Replaces the secret of a live key; false when it is revoked or unknown. */
    readonly rotateKey: (keyId: string, keyHash: string, prefix: string) => Effect.Effect<boolean, StoreError>
    readonly touchKey: (keyId: string) => Effect.Effect<void, StoreError>

    readonly createSession: (
      session: Omit<ImpersonationSession, "created_at" | "ended_at"> & {
        readonly token_hash: string
      }
    ) => Effect.Effect<ImpersonationSession, StoreError>
    /** The live (unended, unexpired) session with this token hash. */
    readonly sessionByToken: (
      tokenHash: string,
      now: Date
    ) => Effect.Effect<ImpersonationSession | undefined, StoreError>
    readonly getSession: (sessionId: string) => Effect.Effect<ImpersonationSession | undefined, StoreError>
    readonly endSession: (sessionId: string) => Effect.Effect<ImpersonationSession | undefined, StoreError>
  }
>() {}

const isoOrNull = (value: unknown): string | null => (value === null || value === undefined ? null : toIso(value))

const keyOf = fromRow((row: Columns<ApiKey, "created_at" | "last_used_at" | "revoked_at">): ApiKey => ({
  key_id: row.key_id,
  name: row.name,
  prefix: row.prefix,
  user_id: row.user_id,
  org_id: row.org_id ?? null,
  role: row.role ?? null,
  created_at: toIso(row.created_at),
  last_used_at: isoOrNull(row.last_used_at),
  revoked_at: isoOrNull(row.revoked_at)
}))

const sessionOf = fromRow(
  (row: Columns<ImpersonationSession, "created_at" | "expires_at" | "ended_at">): ImpersonationSession => ({
    session_id: row.session_id,
    admin_user_id: row.admin_user_id,
    target_user_id: row.target_user_id,
    reason: row.reason ?? null,
    created_at: toIso(row.created_at),
    expires_at: toIso(row.expires_at),
    ended_at: isoOrNull(row.ended_at)
  })
)

const first =
  <A>(of: (row: unknown) => A) =>
  (rows: ReadonlyArray<unknown>): A | undefined =>
    rows[0] === undefined ? undefined : of(rows[0])

const KEY_COLUMNS = "key_id, name, prefix, user_id, org_id, role, created_at, last_used_at, revoked_at"

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const keyColumns = sql.unsafe(KEY_COLUMNS)

  return CredentialRepo.of({
    createKey: (key) =>
      sql`insert into api_keys (key_id, key_hash, name, prefix, user_id, org_id, role)
          values (${key.key_id}, ${key.key_hash}, ${key.name}, ${key.prefix}, ${key.user_id}, ${key.org_id}, ${key.role})
          returning ${keyColumns}`.pipe(
        Effect.map((rows) => keyOf(rows[0])),
        storeError("createKey")
      ),

    keyByHash: (keyHash) =>
      sql`select ${keyColumns} from api_keys where key_hash = ${keyHash} and revoked_at is null`.pipe(
        Effect.map(first(keyOf)),
        storeError("keyByHash")
      ),

    getKey: (keyId) =>
      sql`select ${keyColumns} from api_keys where key_id = ${keyId}`.pipe(
        Effect.map(first(keyOf)),
        storeError("getKey")
      ),

    keysOf: (owner) =>
      ("orgId" in owner
        ? sql`select ${keyColumns} from api_keys where org_id = ${owner.orgId} order by created_at desc, key_id`
        : sql`select ${keyColumns} from api_keys where user_id = ${owner.userId} and org_id is null
              order by created_at desc, key_id`
      ).pipe(
        Effect.map((rows) => rows.map(keyOf)),
        storeError("keysOf")
      ),

    revokeKey: (keyId) =>
      sql`update api_keys set revoked_at = now() where key_id = ${keyId} and revoked_at is null returning key_id`.pipe(
        Effect.map((rows) => rows.length > 0),
        storeError("revokeKey")
      ),

    rotateKey: (keyId, keyHash, prefix) =>
      sql`update api_keys set key_hash = ${keyHash}, prefix = ${prefix}, last_used_at = null
          where key_id = ${keyId} and revoked_at is null returning key_id`.pipe(
        Effect.map((rows) => rows.length > 0),
        storeError("rotateKey")
      ),

    touchKey: (keyId) =>
      sql`update api_keys set last_used_at = now() where key_id = ${keyId}`.pipe(Effect.asVoid, storeError("touchKey")),

    createSession: (session) =>
      sql`insert into impersonation_sessions (session_id, admin_user_id, target_user_id, token_hash, reason, expires_at)
          values (${session.session_id}, ${session.admin_user_id}, ${session.target_user_id}, ${session.token_hash},
            ${session.reason}, ${session.expires_at})
          returning *`.pipe(
        Effect.map((rows) => sessionOf(rows[0])),
        storeError("createSession")
      ),

    sessionByToken: (tokenHash, now) =>
      sql`select * from impersonation_sessions where token_hash = ${tokenHash} and ended_at is null
          and expires_at > ${now}`.pipe(Effect.map(first(sessionOf)), storeError("sessionByToken")),

    getSession: (sessionId) =>
      sql`select * from impersonation_sessions where session_id = ${sessionId}`.pipe(
        Effect.map(first(sessionOf)),
        storeError("getSession")
      ),

    endSession: (sessionId) =>
      sql`update impersonation_sessions set ended_at = coalesce(ended_at, now()) where session_id = ${sessionId}
          returning *`.pipe(Effect.map(first(sessionOf)), storeError("endSession"))
  })
})

export const layer: Layer.Layer<CredentialRepo, never, SqlClient.SqlClient> = Layer.effect(CredentialRepo, make)
