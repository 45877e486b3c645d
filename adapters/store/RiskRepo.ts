/**
 * Risk assessments on the store (migrations/0019_risk_assessments.ts): recording the signed
 * records, reading them back, an agent's history, and the recorded violations the recency term is
 * computed from. Records are read back as the text that was signed (a `json` column), so a record
 * served twice is byte-for-byte the same document.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type Severity, SEVERITIES } from "../../core/schema/Concern.js"
import type { RiskAssessment, TeamRiskAssessment } from "../../core/schema/Risk.js"
import { json, toCount, toIso } from "./Rows.js"
import { type StoreError, storeError } from "./Store.js"

/** The newest violations read for one assessment: far beyond any honest agent's 180 days. */
export const RISK_MAX_VIOLATIONS = 10_000

export type StoredRiskRecord =
  | { readonly kind: "individual"; readonly record: RiskAssessment }
  | { readonly kind: "team"; readonly record: TeamRiskAssessment }

export class RiskRepo extends Context.Tag("candor/adapters/store/RiskRepo")<
  RiskRepo,
  {
    readonly save: (stored: StoredRiskRecord) => Effect.Effect<void, StoreError>
    readonly get: (assessmentId: string) => Effect.Effect<StoredRiskRecord | undefined, StoreError>
    /** The agent's individual assessments, newest first, and how many there are. */
    readonly history: (
      agentId: string,
      limit: number,
      offset: number
    ) => Effect.Effect<{ readonly items: ReadonlyArray<RiskAssessment>; readonly total: number }, StoreError>
    /**
     * The agent's checkpoints whose verdict is `boundary_violation`, at or after `since` (newest
     * first, at most RISK_MAX_VIOLATIONS), each with the highest severity of its concerns (high
     * when it lists none). A checkpoint reclassified as a card gap is not one: the card, not the
     * agent, was at fault (as in reputation's compliance).
     */
    readonly violations: (
      agentId: string,
      since: string
    ) => Effect.Effect<ReadonlyArray<{ readonly severity: Severity; readonly occurred_at: string }>, StoreError>
  }
>() {}

const highest = (concerns: unknown): Severity => {
  let rank = -1
  if (Array.isArray(concerns))
    for (const concern of concerns) {
      const severity = (concern as { severity?: unknown } | null)?.severity
      rank = Math.max(rank, SEVERITIES.indexOf(severity as Severity))
    }
  return rank < 0 ? "high" : SEVERITIES[rank]!
}

/** A json column arrives parsed (PostgreSQL) or as text (some drivers). */
const parsed = (value: unknown): unknown => (typeof value === "string" ? JSON.parse(value) : value)

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  return RiskRepo.of({
    save: ({ kind, record }) =>
      sql`
        insert into risk_assessments (assessment_id, kind, agent_id, record, assessed_at)
        values (${record.assessment_id}, ${kind}, ${kind === "individual" ? (record as RiskAssessment).agent_id : null},
          ${json(record)}::json, ${record.assessed_at}::timestamptz)`.pipe(Effect.asVoid, storeError("saveRisk")),

    get: (assessmentId) =>
      sql<{ kind: "individual" | "team"; record: unknown }>`
        select kind, record from risk_assessments where assessment_id = ${assessmentId}`.pipe(
        Effect.map(([row]) =>
          row === undefined ? undefined : ({ kind: row.kind, record: parsed(row.record) } as StoredRiskRecord)
        ),
        storeError("getRisk")
      ),

    history: (agentId, limit, offset) =>
      Effect.all([
        sql<{ record: unknown }>`
          select record from risk_assessments where kind = 'individual' and agent_id = ${agentId}
          order by assessed_at desc, assessment_id desc limit ${limit} offset ${offset}`,
        sql<{ n: unknown }>`
          select count(*) as n from risk_assessments where kind = 'individual' and agent_id = ${agentId}`
      ]).pipe(
        Effect.map(([rows, [count]]) => ({
          items: rows.map((row) => parsed(row.record) as RiskAssessment),
          total: toCount(count?.n)
        })),
        storeError("riskHistory")
      ),

    violations: (agentId, since) =>
      sql<{ concerns: unknown; occurred_at: unknown }>`
        select body->'concerns' as concerns, occurred_at from checkpoints
        where agent_id = ${agentId} and verdict = 'boundary_violation' and occurred_at >= ${since}::timestamptz
          and not exists (
            select 1 from reclassifications r
            where r.checkpoint_id = checkpoints.checkpoint_id and r.new_type = 'card_gap')
        order by occurred_at desc, position desc limit ${RISK_MAX_VIOLATIONS}`.pipe(
        Effect.map((rows) =>
          rows.map((row) => ({ severity: highest(parsed(row.concerns)), occurred_at: toIso(row.occurred_at) }))
        ),
        storeError("riskViolations")
      )
  })
})

export const layer: Layer.Layer<RiskRepo, never, SqlClient.SqlClient> = Layer.effect(RiskRepo, make)
