/**
 * Reclassifications and card amendments on the store (migrations/0020_reclassifications.ts), and
 * the reads the reputation recomputation and the compliance export take over them.
 *
 * The writes run in the caller's transaction (the route's, with its governance entry): a
 * reclassification is stored together with its `reclassification.create` entry or not at all.
 * `insert` answers false when the checkpoint already has one (the primary key decides a race).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { CardGapSession } from "../../core/Reclassification.js"
import { DRIFT_MIN_SESSION_CHECKPOINTS } from "../../core/Reputation.js"
import * as Schema from "effect/Schema"
import * as Struct from "effect/Struct"
import {
  CardAmendment,
  ComplianceExportItem,
  Reclassification,
  ReclassificationType
} from "../../core/schema/Reclassification.js"
import type { Verdict } from "../../core/schema/Verdict.js"
import { Count, decodeAll, IsoTimestamp, json, toCount, toIso } from "./Rows.js"
import { type StoreError, storeError } from "./Store.js"

/** A checkpoint of the agent as the reclassify route checks it: its certified verdict. */
export interface ReclassifiableCheckpoint {
  readonly checkpoint_id: string
  readonly session_id: string
  readonly verdict: Verdict
}

/** Listings are bounded: reclassifications are made by people, one at a time. */
export const RECLASSIFICATION_LIST_LIMIT = 1000

export class ReclassificationRepo extends Context.Tag("candor/adapters/store/ReclassificationRepo")<
  ReclassificationRepo,
  {
    /** The agent's checkpoint with its certified verdict (a re-verification keeps it in `original_verdict`). */
    readonly checkpoint: (
      agentId: string,
      checkpointId: string
    ) => Effect.Effect<ReclassifiableCheckpoint | undefined, StoreError>
    /** False when the checkpoint already has a reclassification. */
    readonly insert: (row: Reclassification) => Effect.Effect<boolean, StoreError>
    readonly exists: (checkpointId: string) => Effect.Effect<boolean, StoreError>
    readonly insertAmendment: (row: CardAmendment) => Effect.Effect<void, StoreError>
    /** Oldest first. */
    readonly list: (agentId: string) => Effect.Effect<ReadonlyArray<Reclassification>, StoreError>
    /** Oldest first. */
    readonly amendments: (agentId: string) => Effect.Effect<ReadonlyArray<CardAmendment>, StoreError>
    /**
     * The agent's card-gap checkpoints among its first `treeSize` and what excluding them needs to
     * know of their sessions (core/Reclassification.ts).
     */
    readonly cardGaps: (
      agentId: string,
      treeSize: number
    ) => Effect.Effect<
      { readonly gaps: ReadonlySet<string>; readonly sessions: ReadonlyArray<CardGapSession> },
      StoreError
    >
    /** The agent's checkpoints in [from, to), oldest first, with their reclassification and certificate id. */
    readonly exportRows: (
      agentId: string,
      from: string,
      to: string,
      limit: number
    ) => Effect.Effect<ReadonlyArray<ComplianceExportItem>, StoreError>
  }
>() {}

/** A `reclassifications` row: the published reclassification (core/schema/Reclassification.ts). */
const ReclassificationRow = Schema.Struct({
  ...Struct.omit(Reclassification.fields, "chain_hash"),
  // The column keeps its first name (a rename would be a migration for a word); it holds the chain hash.
  certificate_hash: Reclassification.fields.chain_hash,
  governance_index: Count,
  created_at: IsoTimestamp
})
const decodeReclassifications = decodeAll(ReclassificationRow)

/** A `card_amendments` row: the published amendment. */
const decodeAmendments = decodeAll(Schema.Struct({ ...CardAmendment.fields, created_at: IsoTimestamp }))

/** An export row: the checkpoint, its reclassification if any, and its certificate's id. */
const decodeExportRows = decodeAll(
  Schema.Struct({
    checkpoint_id: ComplianceExportItem.fields.checkpoint_id,
    session_id: ComplianceExportItem.fields.session_id,
    occurred_at: IsoTimestamp,
    verdict: ComplianceExportItem.fields.verdict,
    reclassification_id: Schema.NullOr(Schema.String),
    new_type: Schema.NullOr(ReclassificationType),
    reclassified_at: Schema.NullOr(IsoTimestamp),
    certificate_id: Schema.NullOr(Schema.String)
  })
)

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  return ReclassificationRepo.of({
    checkpoint: (agentId: string, checkpointId: string) =>
      sql<{ checkpoint_id: string; session_id: string; verdict: Verdict }>`
        select checkpoint_id, session_id, coalesce(body ->> 'original_verdict', verdict) as verdict
        from checkpoints where agent_id = ${agentId} and checkpoint_id = ${checkpointId}`.pipe(
        Effect.map(([row]): ReclassifiableCheckpoint | undefined => row),
        storeError("reclassifiableCheckpoint")
      ),

    insert: (row: Reclassification) =>
      sql`
        insert into reclassifications (reclassification_id, checkpoint_id, agent_id, session_id, original_verdict,
          new_type, reason, approved_by, certificate_hash, governance_index, created_at)
        values (${row.reclassification_id}, ${row.checkpoint_id}, ${row.agent_id}, ${row.session_id},
          ${row.original_verdict}, ${row.new_type}, ${row.reason}, ${row.approved_by}, ${row.chain_hash},
          ${row.governance_index}, ${row.created_at}::timestamptz)
        on conflict (checkpoint_id) do nothing
        returning checkpoint_id`.pipe(
        Effect.map((rows) => rows.length === 1),
        storeError("insertReclassification")
      ),

    exists: (checkpointId: string) =>
      sql`select 1 from reclassifications where checkpoint_id = ${checkpointId}`.pipe(
        Effect.map((rows) => rows.length > 0),
        storeError("reclassificationExists")
      ),

    insertAmendment: (row: CardAmendment) =>
      sql`
        insert into card_amendments (amendment_id, agent_id, reclassification_id, field_changed, old_value,
          new_value, triggered_by, created_by, created_at)
        values (${row.amendment_id}, ${row.agent_id}, ${row.reclassification_id}, ${row.field_changed},
          ${row.old_value}, ${row.new_value}, ${row.triggered_by}, ${row.created_by}, ${row.created_at}::timestamptz)`.pipe(
        Effect.asVoid,
        storeError("insertCardAmendment")
      ),

    list: (agentId: string) =>
      sql`
        select * from reclassifications where agent_id = ${agentId}
        order by created_at, reclassification_id limit ${RECLASSIFICATION_LIST_LIMIT}`.pipe(
        Effect.flatMap(decodeReclassifications),
        Effect.map((rows) =>
          rows.map(({ certificate_hash, ...row }): Reclassification => ({ ...row, chain_hash: certificate_hash }))
        ),
        storeError("listReclassifications")
      ),

    amendments: (agentId: string) =>
      sql`
        select * from card_amendments where agent_id = ${agentId}
        order by created_at, amendment_id limit ${RECLASSIFICATION_LIST_LIMIT}`.pipe(
        Effect.flatMap(decodeAmendments),
        storeError("listCardAmendments")
      ),

    cardGaps: (agentId: string, treeSize: number) =>
      Effect.gen(function* () {
        const gaps = yield* sql<{ checkpoint_id: string; session_id: string }>`
          select r.checkpoint_id, c.session_id from reclassifications r
          join checkpoints c on c.checkpoint_id = r.checkpoint_id
          where r.agent_id = ${agentId} and r.new_type = 'card_gap' and c.position < ${treeSize}`
        if (gaps.length === 0) return { gaps: new Set<string>(), sessions: [] as ReadonlyArray<CardGapSession> }
        const ids = gaps.map((g) => g.checkpoint_id)
        const sessionIds = [...new Set(gaps.map((g) => g.session_id))]
        const rows = yield* sql<{
          session_id: string
          checkpoints: unknown
          drifted: boolean | null
          last_violation_at: unknown
          alerts: unknown
        }>`
          select s.session_id, rs.checkpoints, rs.drifted,
            (select max(c.occurred_at) from checkpoints c
              where c.agent_id = ${agentId} and c.session_id = s.session_id and c.position < ${treeSize}
                and coalesce(c.body ->> 'original_verdict', c.verdict) = 'boundary_violation'
                and c.checkpoint_id not in (select jsonb_array_elements_text(${json(ids)}::jsonb))
            ) as last_violation_at,
            (select coalesce(json_agg(d.body -> 'checkpoint_ids'), '[]'::json) from drift_alerts d
              where d.agent_id = ${agentId} and d.session_id = s.session_id and d.alert_id like 'ida-%'
            ) as alerts
          from (select jsonb_array_elements_text(${json(sessionIds)}::jsonb) as session_id) s
          left join reputation_sessions rs on rs.agent_id = ${agentId} and rs.session_id = s.session_id`
        const sessions = rows.map((row): CardGapSession => ({
          session_id: row.session_id,
          long: toCount(row.checkpoints) >= DRIFT_MIN_SESSION_CHECKPOINTS,
          drifted: row.drifted === true,
          alerts: (typeof row.alerts === "string" ? JSON.parse(row.alerts) : row.alerts) as Array<Array<string>>,
          last_violation_at: row.last_violation_at === null ? null : toIso(row.last_violation_at)
        }))
        return { gaps: new Set(ids), sessions }
      }).pipe(storeError("cardGaps")),

    exportRows: (agentId: string, from: string, to: string, limit: number) =>
      sql`
        select c.checkpoint_id, c.session_id, c.occurred_at,
          coalesce(c.body ->> 'original_verdict', c.verdict) as verdict,
          r.reclassification_id, r.new_type, r.created_at as reclassified_at,
          cert.body ->> 'certificate_id' as certificate_id
        from checkpoints c
        left join reclassifications r on r.checkpoint_id = c.checkpoint_id
        left join certificates cert on cert.checkpoint_id = c.checkpoint_id
        where c.agent_id = ${agentId} and c.occurred_at >= ${from}::timestamptz and c.occurred_at < ${to}::timestamptz
        order by c.occurred_at, c.position limit ${limit}`.pipe(
        Effect.flatMap(decodeExportRows),
        Effect.map((rows) =>
          rows.map((row): ComplianceExportItem => ({
            checkpoint_id: row.checkpoint_id,
            session_id: row.session_id,
            timestamp: row.occurred_at,
            verdict: row.verdict,
            reclassification:
              row.reclassification_id === null || row.new_type === null || row.reclassified_at === null
                ? null
                : {
                    reclassification_id: row.reclassification_id,
                    new_type: row.new_type,
                    created_at: row.reclassified_at
                  },
            certificate_id: row.certificate_id
          }))
        ),
        storeError("complianceExport")
      )
  })
})

/** On the process's SqlClient. */
export const layer: Layer.Layer<ReclassificationRepo, never, SqlClient.SqlClient> = Layer.effect(
  ReclassificationRepo,
  make
)
