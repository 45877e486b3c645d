/**
 * Scoped transactions on the store (migrations/0021_transactions.ts). The API is the only writer;
 * the gateways learn the open ones through `AgentState`, never from here.
 *
 * `insert` and `close` run in the caller's transaction (the route's, with its governance entry, which
 * also holds the agent's governance log head locked): one agent's opens and closes are serialised,
 * so the list of open transactions read after a write is the one to push to the gateways.
 * `status` is computed from `ended_at`, `expires_at` and the clock (core/ScopedTransaction.ts).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { transactionStatus } from "../../core/ScopedTransaction.js"
import { Policy } from "../../core/schema/Policy.js"
import type { ScopedTransaction, TransactionStatus } from "../../core/schema/ScopedTransaction.js"
import { json, toIso } from "./Rows.js"
import { type StoreError, storeError } from "./Store.js"

/** A transaction as stored: everything but its status, which depends on the clock. */
export type StoredTransaction = Omit<ScopedTransaction, "status">

/** Listings are bounded: transactions are opened by people or their tools, a few a day. */
export const TRANSACTION_LIST_LIMIT = 500

export class ScopedTransactionRepo extends Context.Tag("candor/adapters/store/ScopedTransactionRepo")<
  ScopedTransactionRepo,
  {
    /** In the caller's transaction. */
    readonly insert: (row: StoredTransaction) => Effect.Effect<void, StoreError>
    readonly get: (transactionId: string) => Effect.Effect<StoredTransaction | undefined, StoreError>
    /** Newest first, at most TRANSACTION_LIST_LIMIT; `status` filters by the status at `now`. */
    readonly list: (
      agentId: string,
      status: TransactionStatus | undefined,
      now: number
    ) => Effect.Effect<ReadonlyArray<StoredTransaction>, StoreError>
    /** Ends an open transaction (not yet ended, whether or not expired); false when it was already ended. */
    readonly close: (transactionId: string, at: string, actor: string) => Effect.Effect<boolean, StoreError>
  }
>() {}

const decodePolicy = Schema.decodeUnknown(Policy)
const parsed = (value: unknown): unknown => (typeof value === "string" ? JSON.parse(value) : value)

const storedOf = (row: Record<string, unknown>) =>
  Effect.gen(function* () {
    const policy = row.policy === null ? null : yield* decodePolicy(parsed(row.policy))
    const merged = yield* decodePolicy(parsed(row.merged_policy))
    return {
      transaction_id: String(row.transaction_id),
      agent_id: String(row.agent_id),
      action_type: String(row.action_type),
      tools: parsed(row.tools) as ReadonlyArray<string>,
      policy,
      merged_policy: merged,
      created_at: toIso(row.created_at),
      expires_at: toIso(row.expires_at),
      created_by: String(row.created_by),
      ended_at: row.ended_at === null || row.ended_at === undefined ? null : toIso(row.ended_at),
      ended_by: (row.ended_by as string | null | undefined) ?? null
    } satisfies StoredTransaction
  })

/** With its status at `now`. */
export const withStatus = (stored: StoredTransaction, now: number): ScopedTransaction => ({
  ...stored,
  status: transactionStatus(stored, now)
})

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  return ScopedTransactionRepo.of({
    insert: (row: StoredTransaction) =>
      sql`
        insert into scoped_transactions (transaction_id, agent_id, action_type, tools, policy, merged_policy,
          created_by, created_at, expires_at)
        values (${row.transaction_id}, ${row.agent_id}, ${row.action_type}, ${json(row.tools)}::jsonb,
          ${row.policy === null ? null : json(row.policy)}::jsonb, ${json(row.merged_policy)}::jsonb,
          ${row.created_by}, ${row.created_at}::timestamptz, ${row.expires_at}::timestamptz)`.pipe(
        Effect.asVoid,
        storeError("insertTransaction")
      ),

    get: (transactionId: string) =>
      sql<Record<string, unknown>>`select * from scoped_transactions where transaction_id = ${transactionId}`.pipe(
        Effect.flatMap(([row]) => (row === undefined ? Effect.succeed(undefined) : storedOf(row))),
        storeError("getTransaction")
      ),

    list: (agentId: string, status: TransactionStatus | undefined, now: number) => {
      const at = new Date(now).toISOString()
      const filter =
        status === undefined
          ? sql``
          : status === "completed"
            ? sql`and ended_at is not null`
            : status === "active"
              ? sql`and ended_at is null and expires_at > ${at}::timestamptz`
              : sql`and ended_at is null and expires_at <= ${at}::timestamptz`
      return sql<Record<string, unknown>>`
        select * from scoped_transactions where agent_id = ${agentId} ${filter}
        order by created_at desc, transaction_id limit ${TRANSACTION_LIST_LIMIT}`.pipe(
        Effect.flatMap((found) => Effect.forEach(found, storedOf)),
        storeError("listTransactions")
      )
    },

    close: (transactionId: string, at: string, actor: string) =>
      sql`
        update scoped_transactions set ended_at = ${at}::timestamptz, ended_by = ${actor}
        where transaction_id = ${transactionId} and ended_at is null
        returning transaction_id`.pipe(
        Effect.map((updated) => updated.length === 1),
        storeError("closeTransaction")
      )
  })
})

/** On the process's SqlClient. */
export const layer: Layer.Layer<ScopedTransactionRepo, never, SqlClient.SqlClient> = Layer.effect(
  ScopedTransactionRepo,
  make
)
