/**
 * Containment with scope `key` on the store (migrations/0024_key_containment.ts): a provider key, by
 * its hash, paused or killed. The API is the only writer (streams/Containment.ts, in the transaction of
 * the change's log row and governance entry); the gateways learn it through `AgentState`
 * (`updateKey`), never from here.
 *
 * The key hash of an agent is known to Candor once the agent is claimed (`agent_claims.agent_hash`:
 * the claimer proved possession of the key); `claimedAgents` lists the agents claimed with a key, so
 * a key-wide change can be checked against everyone it touches.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { ContainmentState } from "../../core/schema/Containment.js"
import { json } from "./Rows.js"
import { type StoreError, storeError } from "./Store.js"

export class KeyContainmentRepo extends Context.Tag("candor/adapters/store/KeyContainmentRepo")<
  KeyContainmentRepo,
  {
    /** The key's containment (null: active), its row locked until the ambient transaction ends. */
    readonly lock: (keyHash: string) => Effect.Effect<ContainmentState | null, StoreError>
    /** Writes the key's containment (null: active again), in the ambient transaction. */
    readonly put: (keyHash: string, containment: ContainmentState | null, at: string) => Effect.Effect<void, StoreError>
    /** The key's containment; null when it is active (or was never contained). */
    readonly get: (keyHash: string) => Effect.Effect<ContainmentState | null, StoreError>
    /** The agents claimed with this key, at most `limit`. */
    readonly claimedAgents: (keyHash: string, limit: number) => Effect.Effect<ReadonlyArray<string>, StoreError>
  }
>() {}

const decodeContainment = Schema.decodeUnknown(Schema.NullOr(ContainmentState))
const parsed = (value: unknown): unknown => (typeof value === "string" ? JSON.parse(value) : (value ?? null))

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const read = (rows: ReadonlyArray<{ readonly containment: unknown }>) =>
    decodeContainment(rows[0] === undefined ? null : parsed(rows[0].containment))

  return KeyContainmentRepo.of({
    lock: (keyHash: string) =>
      Effect.gen(function* () {
        yield* sql`insert into key_containment (key_hash) values (${keyHash}) on conflict do nothing`
        return yield* read(
          yield* sql<{ containment: unknown }>`
            select containment from key_containment where key_hash = ${keyHash} for update`
        )
      }).pipe(storeError("lockKeyContainment")),

    put: (keyHash: string, containment: ContainmentState | null, at: string) =>
      sql`
        update key_containment
        set containment = ${containment === null ? null : json(Schema.encodeSync(ContainmentState)(containment))}::jsonb,
            updated_at = ${at}::timestamptz
        where key_hash = ${keyHash}`.pipe(Effect.asVoid, storeError("putKeyContainment")),

    get: (keyHash: string) =>
      sql<{ containment: unknown }>`select containment from key_containment where key_hash = ${keyHash}`.pipe(
        Effect.flatMap(read),
        storeError("keyContainment")
      ),

    claimedAgents: (keyHash: string, limit: number) =>
      sql<{ agent_id: string }>`
        select agent_id from agent_claims where agent_hash = ${keyHash} order by agent_id limit ${limit}`.pipe(
        Effect.map((rows) => rows.map((row) => row.agent_id)),
        storeError("claimedAgents")
      )
  })
})

/** On the process's SqlClient. */
export const layer: Layer.Layer<KeyContainmentRepo, never, SqlClient.SqlClient> = Layer.effect(KeyContainmentRepo, make)
