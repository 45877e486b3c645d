/**
 * Credentials Candor issues itself: API keys and impersonation sessions. Only the SHA-256 (hex) of each
 * secret is stored (the secret is shown once, at creation), and lookups go by that hash.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Struct from "effect/Struct"
import { ImpersonationSession as PublishedSession } from "../../../core/schema/Admin.js"
import { ApiKey } from "../../../core/schema/ApiKey.js"
import { OrgRole } from "../../../core/schema/Organization.js"
import { decodeAll, decodeFirst, IsoTimestamp, toCount } from "../Rows.js"
import { StoreError, storeError } from "../Store.js"
import { transaction } from "../Transaction.js"

/** The published record (core/schema/ApiKey.ts); the store's rows decode into it. */
export type { ApiKey } from "../../../core/schema/ApiKey.js"

/** A live key as authentication reads it: with its creator's role in the key's organization now. */
export interface KeyWithCreator extends ApiKey {
  /** The creator's current role in `org_id` (null: not a member any more, or a personal key). */
  readonly creator_role: OrgRole | null
}

/** How many live (unrevoked) keys a user, and an organization, may hold; creation beyond is refused. */
export interface KeyCaps {
  readonly perUser: number
  readonly perOrg: number
}

/** Creating the key would pass a cap of `KeyCaps` (revoked keys do not count). */
export class KeyCapReached extends Data.TaggedError("KeyCapReached")<{
  readonly scope: "user" | "organization"
  readonly limit: number
}> {}

/**
 * An `impersonation_sessions` row: the published session (core/schema/Admin.ts) without what the API
 * derives from it (`active`, `read_only`).
 */
const SessionRow = Schema.Struct({
  ...Struct.omit(PublishedSession.fields, "active", "read_only"),
  created_at: IsoTimestamp,
  expires_at: IsoTimestamp,
  ended_at: Schema.NullOr(IsoTimestamp)
})
export type ImpersonationSession = typeof SessionRow.Type
const decodeSession = decodeFirst(SessionRow)

export class CredentialRepo extends Context.Tag("candor/adapters/store/identity/CredentialRepo")<
  CredentialRepo,
  {
    /**
     * With `caps`, the creator's and the organization's live keys are counted under a lock on their
     * rows (users, orgs), so concurrent creations cannot pass a cap together.
     */
    readonly createKey: (
      key: Omit<ApiKey, "created_at" | "last_used_at" | "revoked_at"> & {
        readonly key_hash: string
      },
      caps?: KeyCaps
    ) => Effect.Effect<ApiKey, StoreError | KeyCapReached>
    /** The unrevoked key with this hash, with its creator's current role in the key's organization. */
    readonly keyByHash: (keyHash: string) => Effect.Effect<KeyWithCreator | undefined, StoreError>
    /**
     * Revokes `userId`'s live keys of `orgId` whose role is above `role` (all of them when
     * `role` is undefined: the user left); returns how many. Called when a member is removed or
     * demoted, so the keys they made stay dead if the role comes back.
     */
    readonly revokeKeysAbove: (
      orgId: string,
      userId: string,
      role: OrgRole | undefined
    ) => Effect.Effect<number, StoreError>
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

/** An `api_keys` row: the published key with the driver's timestamps. */
const KeyRow = Schema.Struct({
  ...ApiKey.fields,
  created_at: IsoTimestamp,
  last_used_at: Schema.NullOr(IsoTimestamp),
  revoked_at: Schema.NullOr(IsoTimestamp)
})
const decodeKeys = decodeAll(KeyRow)
const decodeKey = decodeFirst(KeyRow)

const decodeKeyWithCreator = decodeFirst(Schema.Struct({ ...KeyRow.fields, creator_role: Schema.NullOr(OrgRole) }))

const RANK: Record<OrgRole, number> = { owner: 3, admin: 2, member: 1 }

const KEY_COLUMNS = "key_id, name, prefix, user_id, org_id, role, created_at, last_used_at, revoked_at"
/** The same, of `api_keys k` (joined with the creator's membership). */
const QUALIFIED_KEY_COLUMNS = KEY_COLUMNS.split(", ")
  .map((column) => `k.${column}`)
  .join(", ")

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const keyColumns = sql.unsafe(KEY_COLUMNS)

  return CredentialRepo.of({
    createKey: (key, caps) => {
      const insert = sql`insert into api_keys (key_id, key_hash, name, prefix, user_id, org_id, role)
          values (${key.key_id}, ${key.key_hash}, ${key.name}, ${key.prefix}, ${key.user_id}, ${key.org_id}, ${key.role})
          returning ${keyColumns}`.pipe(
        Effect.flatMap(decodeKey),
        // `returning` answers the row inserted
        Effect.map((row) => row!)
      )
      if (caps === undefined) return insert.pipe(storeError("createKey"))
      const live = (rows: ReadonlyArray<{ readonly n?: unknown }>) => toCount(rows[0]?.n)
      return transaction(
        sql,
        Effect.gen(function* () {
          // The rows locked first, in one order (user, then organization), so two creations wait in turn.
          yield* sql`select user_id from users where user_id = ${key.user_id} for update`
          if (key.org_id !== null) yield* sql`select org_id from orgs where org_id = ${key.org_id} for update`
          const mine = live(
            yield* sql`select count(*) as n from api_keys where user_id = ${key.user_id} and revoked_at is null`
          )
          if (mine >= caps.perUser) return yield* new KeyCapReached({ scope: "user", limit: caps.perUser })
          if (key.org_id !== null) {
            const theirs = live(
              yield* sql`select count(*) as n from api_keys where org_id = ${key.org_id} and revoked_at is null`
            )
            if (theirs >= caps.perOrg) return yield* new KeyCapReached({ scope: "organization", limit: caps.perOrg })
          }
          return yield* insert
        })
      ).pipe(
        Effect.catchTags({
          SqlError: (cause) => Effect.fail(new StoreError({ operation: "createKey", cause })),
          ParseError: (cause) => Effect.fail(new StoreError({ operation: "createKey", cause }))
        })
      )
    },

    keyByHash: (keyHash) =>
      sql`select ${sql.unsafe(QUALIFIED_KEY_COLUMNS)}, m.role as creator_role
          from api_keys k left join org_members m on m.org_id = k.org_id and m.user_id = k.user_id
          where k.key_hash = ${keyHash} and k.revoked_at is null`.pipe(
        Effect.flatMap(decodeKeyWithCreator),
        storeError("keyByHash")
      ),

    revokeKeysAbove: (orgId, userId, role) =>
      sql`update api_keys set revoked_at = now()
          where org_id = ${orgId} and user_id = ${userId} and revoked_at is null
            and (case role when 'owner' then 3 when 'admin' then 2 else 1 end) > ${role === undefined ? 0 : RANK[role]}
          returning key_id`.pipe(
        Effect.map((rows) => rows.length),
        storeError("revokeKeysAbove")
      ),

    getKey: (keyId) =>
      sql`select ${keyColumns} from api_keys where key_id = ${keyId}`.pipe(
        Effect.flatMap(decodeKey),
        storeError("getKey")
      ),

    keysOf: (owner) =>
      ("orgId" in owner
        ? sql`select ${keyColumns} from api_keys where org_id = ${owner.orgId} order by created_at desc, key_id`
        : sql`select ${keyColumns} from api_keys where user_id = ${owner.userId} and org_id is null
              order by created_at desc, key_id`
      ).pipe(Effect.flatMap(decodeKeys), storeError("keysOf")),

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
        Effect.flatMap(decodeSession),
        // `returning` answers the row inserted
        Effect.map((session) => session!),
        storeError("createSession")
      ),

    sessionByToken: (tokenHash, now) =>
      sql`select * from impersonation_sessions where token_hash = ${tokenHash} and ended_at is null
          and expires_at > ${now}`.pipe(Effect.flatMap(decodeSession), storeError("sessionByToken")),

    getSession: (sessionId) =>
      sql`select * from impersonation_sessions where session_id = ${sessionId}`.pipe(
        Effect.flatMap(decodeSession),
        storeError("getSession")
      ),

    endSession: (sessionId) =>
      sql`update impersonation_sessions set ended_at = coalesce(ended_at, now()) where session_id = ${sessionId}
          returning *`.pipe(Effect.flatMap(decodeSession), storeError("endSession"))
  })
})

export const layer: Layer.Layer<CredentialRepo, never, SqlClient.SqlClient> = Layer.effect(CredentialRepo, make)
