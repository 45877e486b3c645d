/**
 * Witness cosignatures on the store (migrations/0023_witness_cosignatures.ts): which agent logs a
 * witness has not cosigned at their newest signed size yet, the cosignatures it returned (verified
 * by the caller, streams/Witnessing.ts, before they are written), and the lines served with a tree
 * head (docs/witnesses.md).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { addCosignatures } from "../../core/Cosignature.js"
import { toCount, toIso } from "./Rows.js"
import { type StoreError, storeError, type TreeHead } from "./Store.js"
import { transaction } from "./Transaction.js"

/** An agent log whose newest signed tree head a witness has not cosigned. */
export interface DueLog {
  readonly agent_id: string
  readonly tree_size: number
  /** Hex root. */
  readonly root: string
  /** The signed note, as stored (the log's signature only). */
  readonly note: string
  /** The largest size the witness cosigned for this log, as far as we know (0: none). */
  readonly cosigned_size: number
}

export interface StoredCosignature {
  readonly agent_id: string
  readonly tree_size: number
  /** `<name>+<hex key hash>`. */
  readonly witness_key: string
  readonly witness_name: string
  /** POSIX seconds, as the witness signed it. */
  readonly cosigned_at: number
  /** The signature line, without newline. */
  readonly line: string
  readonly created_at: string
}

export class WitnessRepo extends Context.Tag("candor/adapters/store/WitnessRepo")<
  WitnessRepo,
  {
    /**
     * Logs whose newest signed size is above what `witnessKey` cosigned, attempted longest ago
     * first (never attempted first of all), at most `limit`.
     */
    readonly due: (witnessKey: string, limit: number) => Effect.Effect<ReadonlyArray<DueLog>, StoreError>
    /** Stores a verified cosignature and moves the witness's size for the log up to its tree size. */
    readonly record: (cosignature: Omit<StoredCosignature, "created_at">) => Effect.Effect<void, StoreError>
    /**
     * A failed attempt: its error (shown to operators; no secrets) and, when the witness told its
     * size (a 409), that size, so the next attempt starts from it.
     */
    readonly failed: (
      witnessKey: string,
      agentId: string,
      error: string,
      witnessSize?: number
    ) => Effect.Effect<void, StoreError>
    /** The cosignatures of the log at exactly `treeSize`, oldest first. */
    readonly at: (agentId: string, treeSize: number) => Effect.Effect<ReadonlyArray<StoredCosignature>, StoreError>
  }
>() {}

interface DueRow {
  readonly agent_id: string
  readonly tree_size: unknown
  readonly root: string
  readonly note: string
  readonly cosigned_size: unknown
}

interface CosignatureRow {
  readonly agent_id: string
  readonly tree_size: unknown
  readonly witness_key: string
  readonly witness_name: string
  readonly cosigned_at: unknown
  readonly line: string
  readonly created_at: unknown
}

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const nowIso = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis).toISOString())

  // The newest signed head of a log is the one at its chain head's position (both are written in
  // the commit's transaction): one primary-key lookup per log, however many heads it has.
  const due = (witnessKey: string, limit: number) =>
    sql<DueRow>`
      select c.agent_id, h.tree_size, encode(h.root, 'hex') as root, h.note, coalesce(w.cosigned_size, 0) as cosigned_size
      from chain_heads c
      join tree_heads h on h.agent_id = c.agent_id and h.tree_size = c.position
      left join witness_logs w on w.witness_key = ${witnessKey} and w.agent_id = c.agent_id
      where c.position > coalesce(w.cosigned_size, 0)
      order by w.attempted_at asc nulls first, c.agent_id
      limit ${limit}`.pipe(
      Effect.map((rows) =>
        rows.map((row): DueLog => ({
          agent_id: row.agent_id,
          tree_size: toCount(row.tree_size),
          root: row.root,
          note: row.note,
          cosigned_size: toCount(row.cosigned_size)
        }))
      ),
      storeError("witnessDue")
    )

  const record = (cosignature: Omit<StoredCosignature, "created_at">) =>
    Effect.flatMap(nowIso, (now) =>
      transaction(
        sql,
        Effect.zipRight(
          sql`
            insert into witness_cosignatures (agent_id, tree_size, witness_key, witness_name, key_hash, cosigned_at, line, created_at)
            values (${cosignature.agent_id}, ${cosignature.tree_size}, ${cosignature.witness_key}, ${cosignature.witness_name},
              ${cosignature.witness_key.slice(cosignature.witness_key.lastIndexOf("+") + 1)}, ${cosignature.cosigned_at},
              ${cosignature.line}, ${now}::timestamptz)
            on conflict (agent_id, tree_size, witness_key) do update
              set cosigned_at = excluded.cosigned_at, line = excluded.line, created_at = excluded.created_at`,
          sql`
            insert into witness_logs (witness_key, agent_id, cosigned_size, attempted_at, error)
            values (${cosignature.witness_key}, ${cosignature.agent_id}, ${cosignature.tree_size}, ${now}::timestamptz, null)
            on conflict (witness_key, agent_id) do update
              set cosigned_size = greatest(witness_logs.cosigned_size, excluded.cosigned_size),
                  attempted_at = excluded.attempted_at, error = null`
        )
      )
    ).pipe(Effect.asVoid, storeError("recordCosignature"))

  const failed = (witnessKey: string, agentId: string, error: string, witnessSize?: number) =>
    Effect.flatMap(
      nowIso,
      (now) => sql`
        insert into witness_logs (witness_key, agent_id, cosigned_size, attempted_at, error)
        values (${witnessKey}, ${agentId}, ${witnessSize ?? 0}, ${now}::timestamptz, ${error.slice(0, 500)})
        on conflict (witness_key, agent_id) do update
          set attempted_at = excluded.attempted_at, error = excluded.error,
              cosigned_size = ${witnessSize === undefined ? sql`witness_logs.cosigned_size` : sql`excluded.cosigned_size`}`
    ).pipe(Effect.asVoid, storeError("witnessFailed"))

  const at = (agentId: string, treeSize: number) =>
    sql<CosignatureRow>`
      select agent_id, tree_size, witness_key, witness_name, cosigned_at, line, created_at
      from witness_cosignatures where agent_id = ${agentId} and tree_size = ${treeSize}
      order by created_at, witness_key`.pipe(
      Effect.map((rows) =>
        rows.map((row): StoredCosignature => ({
          agent_id: row.agent_id,
          tree_size: toCount(row.tree_size),
          witness_key: row.witness_key,
          witness_name: row.witness_name,
          cosigned_at: toCount(row.cosigned_at),
          line: row.line,
          created_at: toIso(row.created_at)
        }))
      ),
      storeError("cosignaturesAt")
    )

  return WitnessRepo.of({ due, record, failed, at })
})

export const layer: Layer.Layer<WitnessRepo, never, SqlClient.SqlClient> = Layer.effect(WitnessRepo, make)

/**
 * The head with the witness cosignatures stored for its exact size appended to its note, and those
 * cosignatures: what the API serves (docs/witnesses.md). They were verified when stored; a note
 * they would not fit (never expected: at most 32 witnesses) is served as it was.
 */
export const withCosignatures = (head: TreeHead) =>
  Effect.gen(function* () {
    const stored = yield* (yield* WitnessRepo).at(head.agent_id, head.tree_size)
    if (stored.length === 0) return { head, cosignatures: stored }
    const note = addCosignatures(
      head.note,
      stored.map((cosignature) => cosignature.line)
    )
    return note === undefined ? { head, cosignatures: [] } : { head: { ...head, note }, cosignatures: stored }
  })

/** `withCosignatures`' head alone. */
export const cosignedHead = (head: TreeHead) => Effect.map(withCosignatures(head), (cosigned) => cosigned.head)
