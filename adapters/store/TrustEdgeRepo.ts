/**
 * Trust edges on the store (migrations/0017_trust_edges.ts): the API creates, lists and deletes
 * them; the workers read the graph around one agent with `incomingGraph` (the edges its trust
 * adjustment is computed from, core/TrustPropagation.ts) and `outgoingGraph` (whom a change of its
 * base score reaches).
 *
 * `create` and `remove` run in the caller's transaction when there is one, so an edge and its
 * governance entry are stored together or not at all. `create` takes a transaction-scoped advisory
 * lock on the source agent first: its count of active edges is then the committed one, and two
 * concurrent creates of one pair meet at the unique index on active pairs (one answers "exists").
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { TRUST_MAX_AGENTS, TRUST_MAX_DEPTH, type TrustLink } from "../../core/TrustPropagation.js"
import * as Schema from "effect/Schema"
import { TrustEdge, TrustEdgeDirection, type TrustLevel } from "../../core/schema/Trust.js"
import { decodeAll, decodeFirst, IsoTimestamp } from "./Rows.js"
import { StoreError, storeError } from "./Store.js"
import { transaction } from "./Transaction.js"

/** Active edges one agent may declare: far above any honest use, and a bound on its list. */
export const TRUST_MAX_OUTGOING = 1000

/**
 * A `trust_edges` row: the published edge (core/schema/Trust.ts) and `created_by`, the `actorOf` of
 * whoever created it.
 */
const EdgeRow = Schema.Struct({ ...TrustEdge.fields, created_by: Schema.String, created_at: IsoTimestamp })
export type StoredTrustEdge = typeof EdgeRow.Type

export interface TrustEdgeDraft {
  /** `te-<uuid>`. */
  readonly id: string
  readonly source_agent_id: string
  readonly target_agent_id: string
  readonly trust_level: TrustLevel
  readonly reason: string
  readonly created_by: string
  /** RFC 3339. */
  readonly created_at: string
}

export type TrustEdgeCreation =
  | { readonly _tag: "Created"; readonly edge: StoredTrustEdge }
  /** The pair already has an active edge (delete it to declare another level). */
  | { readonly _tag: "Exists"; readonly edge: StoredTrustEdge }
  /** The source already has `TRUST_MAX_OUTGOING` active edges. */
  | { readonly _tag: "Full" }

export interface TrustEdgeListing extends StoredTrustEdge {
  /** Seen from the agent listed: it declared the edge (outgoing) or is its target (incoming). */
  readonly direction: TrustEdgeDirection
}

export class TrustEdgeRepo extends Context.Tag("candor/adapters/store/TrustEdgeRepo")<
  TrustEdgeRepo,
  {
    readonly create: (draft: TrustEdgeDraft) => Effect.Effect<TrustEdgeCreation, StoreError>
    /** The source's active edge `edgeId`, deleted now; undefined when it has no such active edge. */
    readonly remove: (
      sourceAgentId: string,
      edgeId: string,
      actor: string
    ) => Effect.Effect<StoredTrustEdge | undefined, StoreError>
    /** The agent's active edges in the given directions, oldest first (then by id). */
    readonly list: (
      agentId: string,
      directions: ReadonlyArray<TrustEdgeDirection>,
      page: { readonly limit: number; readonly offset: number }
    ) => Effect.Effect<ReadonlyArray<TrustEdgeListing>, StoreError>
    /**
     * The active edges `trustAdjustmentOf(agentId, …)` reads: into the agents within 2 hops upstream,
     * from the (at most 50) agents its walk visits. The same first 50, as the walk is the rule's.
     */
    readonly incomingGraph: (agentId: string) => Effect.Effect<ReadonlyArray<TrustLink>, StoreError>
    /** The active edges `downstreamOf(agentId, …)` reads, the same walk over outgoing edges. */
    readonly outgoingGraph: (agentId: string) => Effect.Effect<ReadonlyArray<TrustLink>, StoreError>
    /** The agent is known: it has sent traffic (`agents`) or been claimed. */
    readonly agentExists: (agentId: string) => Effect.Effect<boolean, StoreError>
  }
>() {}

const decodeEdge = decodeFirst(EdgeRow)
/** A listed row: the edge and its direction from the agent listed (ListedTrustEdge, with `created_by`). */
const decodeListings = decodeAll(Schema.Struct({ ...EdgeRow.fields, direction: TrustEdgeDirection }))

/** Advisory lock keys of this table: (namespace, hash of the source agent). */
const LOCK_NAMESPACE = 7260417

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const COLUMNS = sql`edge_id as id, source_agent_id, target_agent_id, trust_level, reason, created_by, created_at`

  /**
   * The walk of core/TrustPropagation.ts in SQL, from `agentId` along edges whose `near` end is a
   * frontier agent: each hop takes its new `far` agents in code point order ("C" collation, the
   * order `byCodePoint` uses) until 50 agents are visited, for at most 3 hops. Then the edges the
   * pure walk reads: from a visited agent into the start or an agent of hops 1 and 2. At most
   * 50 × 51 edges, whatever the size of the graph.
   */
  const graph = (agentId: string, near: "target_agent_id" | "source_agent_id") => {
    const far = near === "target_agent_id" ? "source_agent_id" : "target_agent_id"
    return sql<TrustLink>`
      with recursive walk (depth, nodes, visited) as (
        select 0, array[${agentId}]::text[], array[${agentId}]::text[]
        union all
        select w.depth + 1, n.nodes, w.visited || n.nodes
        from walk w
        cross join lateral (
          select coalesce(array_agg(x.agent_id), '{}'::text[]) as nodes
          from (
            select e.${sql(far)} as agent_id from trust_edges e
            where e.deleted_at is null and e.${sql(near)} = any(w.nodes) and not (e.${sql(far)} = any(w.visited))
            group by e.${sql(far)}
            order by e.${sql(far)} collate "C"
            limit ${TRUST_MAX_AGENTS + 1} - cardinality(w.visited)
          ) x
        ) n
        where w.depth < ${TRUST_MAX_DEPTH} and cardinality(w.nodes) > 0
          and cardinality(w.visited) <= ${TRUST_MAX_AGENTS}
      )
      select e.source_agent_id, e.target_agent_id, e.trust_level from trust_edges e
      where e.deleted_at is null
        and e.${sql(near)} = any((select visited from walk where depth < ${TRUST_MAX_DEPTH} order by depth desc limit 1)::text[])
        and e.${sql(far)} = any((select visited from walk order by depth desc limit 1)::text[])
        and e.${sql(far)} <> ${agentId}
      order by e.source_agent_id collate "C", e.target_agent_id collate "C"`
  }

  return TrustEdgeRepo.of({
    create: (draft) =>
      Effect.gen(function* () {
        yield* sql`select pg_advisory_xact_lock(${LOCK_NAMESPACE}, hashtext(${draft.source_agent_id}))`
        const active = yield* decodeEdge(
          yield* sql`
            select ${COLUMNS} from trust_edges
            where source_agent_id = ${draft.source_agent_id} and target_agent_id = ${draft.target_agent_id}
              and deleted_at is null`
        )
        if (active !== undefined) return { _tag: "Exists" as const, edge: active }
        const [count] = yield* sql<{ n: unknown }>`
          select count(*) as n from trust_edges where source_agent_id = ${draft.source_agent_id} and deleted_at is null`
        if (Number(count?.n ?? 0) >= TRUST_MAX_OUTGOING) return { _tag: "Full" as const }
        const created = yield* decodeEdge(
          yield* sql`
          insert into trust_edges (edge_id, source_agent_id, target_agent_id, trust_level, reason, created_by, created_at)
          values (${draft.id}, ${draft.source_agent_id}, ${draft.target_agent_id}, ${draft.trust_level},
            ${draft.reason}, ${draft.created_by}, ${draft.created_at}::timestamptz)
          returning ${COLUMNS}`
        )
        // `returning` answers the row inserted
        return { _tag: "Created" as const, edge: created! }
      }).pipe((effect) => transaction(sql, effect), storeError("create trust edge")),

    remove: (sourceAgentId, edgeId, actor) =>
      sql`
        update trust_edges set deleted_at = now(), deleted_by = ${actor}
        where edge_id = ${edgeId} and source_agent_id = ${sourceAgentId} and deleted_at is null
        returning ${COLUMNS}`.pipe(Effect.flatMap(decodeEdge), storeError("delete trust edge")),

    list: (agentId, directions, page) => {
      const outgoing = directions.includes("outgoing")
      const incoming = directions.includes("incoming")
      const which =
        outgoing && incoming
          ? sql`(source_agent_id = ${agentId} or target_agent_id = ${agentId})`
          : outgoing
            ? sql`source_agent_id = ${agentId}`
            : sql`target_agent_id = ${agentId}`
      return sql`
        select ${COLUMNS},
          case when source_agent_id = ${agentId} then 'outgoing' else 'incoming' end as direction
        from trust_edges where ${which} and deleted_at is null
        order by created_at, edge_id limit ${page.limit} offset ${page.offset}`.pipe(
        Effect.flatMap(decodeListings),
        storeError("list trust edges")
      )
    },

    incomingGraph: (agentId) => graph(agentId, "target_agent_id").pipe(storeError("incoming trust graph")),
    outgoingGraph: (agentId) => graph(agentId, "source_agent_id").pipe(storeError("outgoing trust graph")),

    agentExists: (agentId) =>
      sql`
        select 1 from agents where agent_id = ${agentId}
        union all select 1 from agent_claims where agent_id = ${agentId} limit 1`.pipe(
        Effect.map((rows) => rows.length > 0),
        storeError("agent exists")
      )
  })
})

/** On the process's SqlClient. */
export const layer: Layer.Layer<TrustEdgeRepo, never, SqlClient.SqlClient> = Layer.effect(TrustEdgeRepo, make)
