/**
 * On-chain anchors on the store (migrations/0022_anchors.ts): a batch is recorded before its
 * transaction is sent (so a crash leaves a `pending` row, not nothing), then its transaction hash,
 * then how it ended. Readers get the leaves back exactly as they were hashed.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { AnchorKind, ScoreLeaf, TreeHeadLeaf } from "../../core/AnchorBatch.js"
import type { AnchorStatus } from "../../core/schema/OnChain.js"
import { json, toCount, toIso } from "./Rows.js"
import { type StoreError, storeError } from "./Store.js"
import { transaction } from "./Transaction.js"

export interface NewAnchor {
  readonly anchor_id: string
  readonly kind: AnchorKind
  readonly chain_id: number
  readonly contract: string
  readonly batch_root: string
  /** In tree order. */
  readonly leaves: ReadonlyArray<TreeHeadLeaf> | ReadonlyArray<ScoreLeaf>
  /** Who asked: a user id, `service`, or `system` for the periodic job. */
  readonly requested_by: string
  readonly anchored_at: string
}

export interface StoredAnchor {
  readonly anchor_id: string
  readonly seq: number
  readonly kind: AnchorKind
  readonly chain_id: number
  readonly contract: string
  readonly tx_hash: string | null
  readonly block_number: number | null
  readonly batch_root: string
  readonly leaf_count: number
  readonly status: AnchorStatus
  readonly error: string | null
  readonly leaves: ReadonlyArray<TreeHeadLeaf> | ReadonlyArray<ScoreLeaf>
  readonly requested_by: string
  readonly anchored_at: string
}

/** Whose agents may read an anchor: every agent, or those listed. */
export type Readers = "all" | ReadonlyArray<string>

/** An agent whose newest tree head is not anchored yet, and who it belongs to (an organization, else its user). */
export interface Unanchored {
  readonly agent_id: string
  readonly owner: string
}

export class AnchorRepo extends Context.Tag("candor/adapters/store/AnchorRepo")<
  AnchorRepo,
  {
    /** Records a batch as `pending`, without a transaction yet. */
    readonly insert: (anchor: NewAnchor) => Effect.Effect<void, StoreError>
    readonly setTransaction: (anchorId: string, txHash: string) => Effect.Effect<void, StoreError>
    /** How the transaction ended (or that it could not be sent: `failed` without a block). */
    readonly settle: (
      anchorId: string,
      outcome: {
        readonly status: AnchorStatus
        readonly block_number: number | null
        readonly error: string | null
      }
    ) => Effect.Effect<void, StoreError>
    readonly get: (anchorId: string) => Effect.Effect<StoredAnchor | undefined, StoreError>
    /**
     * Anchors newest first: of `agentId` when given, else every anchor all of whose agents are in
     * `readers`; those before `cursor` (a `seq`), at most `limit`.
     */
    readonly history: (query: {
      readonly agentId: string | undefined
      readonly readers: Readers
      readonly limit: number
      readonly cursor: number | undefined
    }) => Effect.Effect<ReadonlyArray<StoredAnchor>, StoreError>
    /**
     * Agents with a non-empty log whose newest tree head is larger than any anchored (pending or
     * confirmed) for them, ordered by owner then agent: what the periodic job anchors. Private
     * agents are never published on chain.
     */
    readonly unanchored: Effect.Effect<ReadonlyArray<Unanchored>, StoreError>
    /** Of `agentIds`, those with a signed tree head that are not private (what may be anchored). */
    readonly withLogs: (agentIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<string>, StoreError>
  }
>() {}

/** A json column arrives parsed (PostgreSQL) or as text (some drivers). */
const parsed = (value: unknown): unknown => (typeof value === "string" ? JSON.parse(value) : value)

interface Row {
  anchor_id: string
  seq: unknown
  kind: AnchorKind
  chain_id: unknown
  contract: string
  tx_hash: string | null
  block_number: unknown
  batch_root: string
  leaf_count: unknown
  status: AnchorStatus
  error: string | null
  leaves: unknown
  requested_by: string
  anchored_at: unknown
}

const fromRow = (row: Row): StoredAnchor => ({
  anchor_id: row.anchor_id,
  seq: toCount(row.seq),
  kind: row.kind,
  chain_id: toCount(row.chain_id),
  contract: row.contract,
  tx_hash: row.tx_hash,
  block_number: row.block_number === null || row.block_number === undefined ? null : toCount(row.block_number),
  batch_root: row.batch_root,
  leaf_count: toCount(row.leaf_count),
  status: row.status,
  error: row.error,
  leaves: parsed(row.leaves) as StoredAnchor["leaves"],
  requested_by: row.requested_by,
  anchored_at: toIso(row.anchored_at)
})

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  return AnchorRepo.of({
    insert: (anchor) =>
      transaction(
        sql,
        Effect.gen(function* () {
          const [row] = yield* sql<{ seq: unknown }>`
            insert into chain_anchors (anchor_id, kind, chain_id, contract, batch_root, leaf_count, status, leaves,
              requested_by, anchored_at)
            values (${anchor.anchor_id}, ${anchor.kind}, ${anchor.chain_id}, ${anchor.contract}, ${anchor.batch_root},
              ${anchor.leaves.length}, 'pending', ${json(anchor.leaves)}::json, ${anchor.requested_by},
              ${anchor.anchored_at}::timestamptz)
            returning seq`
          const rows = anchor.leaves.map((leaf, leafIndex) => ({
            agent_id: leaf.agent_id,
            leaf_index: leafIndex,
            tree_size: "tree_size" in leaf ? leaf.tree_size : null
          }))
          yield* sql`
            insert into chain_anchor_agents (anchor_id, agent_id, leaf_index, seq, kind, tree_size)
            select ${anchor.anchor_id}, r.agent_id, r.leaf_index, ${toCount(row?.seq)}, ${anchor.kind}, r.tree_size
            from json_to_recordset(${json(rows)}::json) as r(agent_id text, leaf_index integer, tree_size bigint)`
        })
      ).pipe(storeError("insertAnchor")),

    setTransaction: (anchorId, txHash) =>
      sql`update chain_anchors set tx_hash = ${txHash} where anchor_id = ${anchorId}`.pipe(
        Effect.asVoid,
        storeError("anchorTransaction")
      ),

    settle: (anchorId, outcome) =>
      sql`
        update chain_anchors set status = ${outcome.status}, block_number = ${outcome.block_number},
          error = ${outcome.error}
        where anchor_id = ${anchorId}`.pipe(Effect.asVoid, storeError("settleAnchor")),

    get: (anchorId) =>
      sql<Row>`select * from chain_anchors where anchor_id = ${anchorId}`.pipe(
        Effect.map(([row]) => (row === undefined ? undefined : fromRow(row))),
        storeError("getAnchor")
      ),

    history: ({ agentId, cursor, limit, readers }) =>
      sql<Row>`
        select x.* from chain_anchors x
        where ${cursor === undefined ? sql`true` : sql`x.seq < ${cursor}`}
          and ${
            agentId === undefined
              ? sql`true`
              : sql`x.anchor_id in (select anchor_id from chain_anchor_agents where agent_id = ${agentId})`
          }
          and ${
            readers === "all"
              ? sql`true`
              : sql`not exists (
                  select 1 from chain_anchor_agents a where a.anchor_id = x.anchor_id
                  and a.agent_id not in (select jsonb_array_elements_text(${json(readers)}::jsonb)))`
          }
        order by x.seq desc limit ${limit}`.pipe(
        Effect.map((rows) => rows.map(fromRow)),
        storeError("anchorHistory")
      ),

    unanchored: sql<{ agent_id: string; owner: string }>`
      select h.agent_id, coalesce(c.org_id, 'user:' || c.user_id, 'agent:' || h.agent_id) as owner
      from (select agent_id, max(tree_size) as tree_size from tree_heads group by agent_id) h
      left join agent_claims c on c.agent_id = h.agent_id
      where h.tree_size > 0 and c.visibility is distinct from 'private' and h.tree_size > coalesce((
        select max(a.tree_size) from chain_anchor_agents a join chain_anchors x on x.anchor_id = a.anchor_id
        where a.agent_id = h.agent_id and a.kind = 'tree_heads' and x.status <> 'failed'), -1)
      order by owner, h.agent_id`.pipe(
      Effect.map((rows) => rows.map((row) => ({ agent_id: row.agent_id, owner: row.owner }))),
      storeError("unanchoredAgents")
    ),

    withLogs: (agentIds) =>
      agentIds.length === 0
        ? Effect.succeed([])
        : sql<{ agent_id: string }>`
            select distinct h.agent_id from tree_heads h
            where h.tree_size > 0 and h.agent_id in (select jsonb_array_elements_text(${json(agentIds)}::jsonb))
              and not exists (select 1 from agent_claims c where c.agent_id = h.agent_id and c.visibility = 'private')`.pipe(
            Effect.map((rows) => rows.map((row) => row.agent_id)),
            storeError("agentsWithLogs")
          )
  })
})

export const layer: Layer.Layer<AnchorRepo, never, SqlClient.SqlClient> = Layer.effect(AnchorRepo, make)
