/**
 * Team reputation on the store (migrations/0018_team_reputation.ts): the recorded assessments, the
 * current score per team, the ledger of computations the monthly quota counts, the once-a-month
 * quota notices and the coalescing state of automatic recomputations.
 *
 * Writes run in the caller's transaction: a computation records its assessment, its score, its
 * ledger row and its events together (streams/TeamReputation.ts), under the organization's row
 * lock, so two computations of one organization never count the same quota slot.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Grade } from "../../core/schema/Reputation.js"
import type { TeamAssessment, TeamReputation } from "../../core/schema/TeamReputation.js"
import type { RiskLevel, TeamAssessmentInput } from "../../core/TeamReputation.js"
import type { PlanTerms } from "../../core/TeamReputationQuota.js"
import { json, toCount, toIso } from "./Rows.js"
import { type StoreError, storeError } from "./Store.js"

export interface StoredTeamReputation {
  readonly reputation: TeamReputation
  readonly inputs_hash: string
  readonly last_notified_score: number
  readonly last_notified_grade: Grade
  readonly checked_at: string
}

export interface NewTeamScore {
  readonly reputation: TeamReputation
  readonly inputs_hash: string
  readonly last_notified_score: number
  readonly last_notified_grade: Grade
}

export interface ComputationRecord {
  readonly org_id: string
  readonly team_id: string
  readonly assessment_id: string
  readonly score: number
  readonly computed_at: string
  readonly period: string
  readonly overage: boolean
  readonly cost: number
}

export interface MonthUsage {
  readonly used: number
  readonly overage: number
  readonly overage_cost: number
}

export interface TriggerState {
  readonly last_automatic_at: string | null
  readonly pending_since: string | null
}

export type QuotaNotice = "warning" | "exceeded"

export interface Page<A> {
  readonly items: ReadonlyArray<A>
  readonly total: number
}

export class TeamReputationRepo extends Context.Tag("candor/adapters/store/TeamReputationRepo")<
  TeamReputationRepo,
  {
    /** The organization's plan row (feature flags and limits); undefined for an unknown organization or plan. */
    readonly plan: (orgId: string) => Effect.Effect<PlanTerms | undefined, StoreError>
    readonly stored: (teamId: string) => Effect.Effect<StoredTeamReputation | undefined, StoreError>
    /** The inputs were compared at `at` and found unchanged. */
    readonly touch: (teamId: string, at: string) => Effect.Effect<void, StoreError>
    /** Times of the roster changes after the team's creation (the founders' are not changes), oldest first. */
    readonly rosterChanges: (teamId: string) => Effect.Effect<ReadonlyArray<string>, StoreError>
    readonly recordAssessment: (assessment: TeamAssessment) => Effect.Effect<void, StoreError>
    /** Every assessment of the team (all sources), oldest first, as core/TeamReputation.ts reads them. */
    readonly assessmentInputs: (teamId: string) => Effect.Effect<ReadonlyArray<TeamAssessmentInput>, StoreError>
    /** Oldest first. */
    readonly assessments: (
      teamId: string,
      limit: number,
      offset: number
    ) => Effect.Effect<Page<TeamAssessment>, StoreError>
    readonly usage: (orgId: string, period: string) => Effect.Effect<MonthUsage, StoreError>
    /** The newest score computed at or before `at`. */
    readonly scoreAt: (teamId: string, at: string) => Effect.Effect<number | undefined, StoreError>
    readonly recordComputation: (computation: ComputationRecord) => Effect.Effect<void, StoreError>
    /** Stores the team's current result (its computed_at is also its checked_at). */
    readonly putScore: (score: NewTeamScore) => Effect.Effect<void, StoreError>
    /** Marks the notice sent for the organization's month; true only for the call that marked it. */
    readonly claimNotice: (
      orgId: string,
      period: string,
      notice: QuotaNotice,
      at: string
    ) => Effect.Effect<boolean, StoreError>
    readonly triggerState: (teamId: string) => Effect.Effect<TriggerState, StoreError>
    /** An automatic recomputation waits for the team's hour to pass (the earliest wait is kept). */
    readonly markPending: (teamId: string, at: string) => Effect.Effect<void, StoreError>
    /** An automatic computation ran at `at`: the hour starts again and nothing waits. */
    readonly markAutomatic: (teamId: string, at: string) => Effect.Effect<void, StoreError>
    readonly clearPending: (teamId: string) => Effect.Effect<void, StoreError>
    /**
     * Active teams the periodic refresh should look at, most overdue first: a recomputation waiting
     * since before now whose hour passed (`windowStart`: now − 1 h), or a score whose inputs were
     * last compared before `staleBefore`.
     */
    readonly dueTeams: (
      windowStart: string,
      staleBefore: string,
      limit: number
    ) => Effect.Effect<ReadonlyArray<string>, StoreError>
  }
>() {}

const parsed = (value: unknown): unknown => (typeof value === "string" ? JSON.parse(value) : value)
const toNumberOrNull = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value))

interface AssessmentRow {
  readonly assessment_id: string
  readonly team_id: string
  readonly org_id: string
  readonly assessed_at: unknown
  readonly member_coherence: unknown
  readonly card_coherence: unknown
  readonly risk_level: RiskLevel
  readonly member_scores: unknown
  readonly inputs_hash: string
  readonly source: string
}

const assessmentOf = (row: AssessmentRow): TeamAssessment => ({
  assessment_id: row.assessment_id,
  team_id: row.team_id,
  org_id: row.org_id,
  assessed_at: toIso(row.assessed_at),
  member_coherence: toNumberOrNull(row.member_coherence),
  card_coherence: toNumberOrNull(row.card_coherence),
  risk_level: row.risk_level,
  member_scores: parsed(row.member_scores) as TeamAssessment["member_scores"],
  inputs_hash: row.inputs_hash,
  source: row.source
})

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  return TeamReputationRepo.of({
    plan: (orgId) =>
      sql<{ plan_id: string; feature_flags: unknown; limits: unknown }>`
        select p.plan_id, p.feature_flags, p.limits from orgs o join plans p on p.plan_id = o.plan_id
        where o.org_id = ${orgId}`.pipe(
        Effect.map(([row]) =>
          row === undefined
            ? undefined
            : {
                plan_id: row.plan_id,
                feature_flags: parsed(row.feature_flags) as PlanTerms["feature_flags"],
                limits: parsed(row.limits) as PlanTerms["limits"]
              }
        ),
        storeError("teamReputationPlan")
      ),
    stored: (teamId) =>
      sql<{
        result: unknown
        inputs_hash: string
        last_notified_score: unknown
        last_notified_grade: Grade
        checked_at: unknown
      }>`
        select result, inputs_hash, last_notified_score, last_notified_grade, checked_at
        from team_reputation_scores where team_id = ${teamId}`.pipe(
        Effect.map(([row]) =>
          row === undefined
            ? undefined
            : {
                reputation: parsed(row.result) as TeamReputation,
                inputs_hash: row.inputs_hash,
                last_notified_score: toCount(row.last_notified_score),
                last_notified_grade: row.last_notified_grade,
                checked_at: toIso(row.checked_at)
              }
        ),
        storeError("teamReputation")
      ),
    touch: (teamId, at) =>
      sql`update team_reputation_scores set checked_at = ${at}::timestamptz where team_id = ${teamId}`.pipe(
        Effect.asVoid,
        storeError("touchTeamReputation")
      ),
    rosterChanges: (teamId) =>
      sql<{ created_at: unknown }>`
        select r.created_at from team_roster_changes r join teams t on t.team_id = r.team_id
        where r.team_id = ${teamId} and r.created_at > t.created_at
        order by r.change_id`.pipe(
        Effect.map((rows) => rows.map((row) => toIso(row.created_at))),
        storeError("teamRosterChanges")
      ),
    recordAssessment: (a) =>
      sql`
        insert into team_assessments (assessment_id, team_id, org_id, assessed_at, member_coherence, card_coherence,
          risk_level, member_scores, inputs_hash, source)
        values (${a.assessment_id}, ${a.team_id}, ${a.org_id}, ${a.assessed_at}::timestamptz, ${a.member_coherence},
          ${a.card_coherence}, ${a.risk_level}, ${json(a.member_scores)}::jsonb, ${a.inputs_hash}, ${a.source})`.pipe(
        Effect.asVoid,
        storeError("recordTeamAssessment")
      ),
    assessmentInputs: (teamId) =>
      sql<{ assessed_at: unknown; member_coherence: unknown; card_coherence: unknown; risk_level: RiskLevel }>`
        select assessed_at, member_coherence, card_coherence, risk_level from team_assessments
        where team_id = ${teamId} order by seq`.pipe(
        Effect.map((rows) =>
          rows.map((row) => ({
            assessed_at: toIso(row.assessed_at),
            member_coherence: toNumberOrNull(row.member_coherence),
            card_coherence: toNumberOrNull(row.card_coherence),
            risk_level: row.risk_level
          }))
        ),
        storeError("teamAssessmentInputs")
      ),
    assessments: (teamId, limit, offset) =>
      Effect.gen(function* () {
        const rows = yield* sql<AssessmentRow>`
          select assessment_id, team_id, org_id, assessed_at, member_coherence, card_coherence, risk_level,
            member_scores, inputs_hash, source
          from team_assessments where team_id = ${teamId} order by seq limit ${limit} offset ${offset}`
        const [count] = yield* sql<{ total: unknown }>`
          select count(*) as total from team_assessments where team_id = ${teamId}`
        return { items: rows.map(assessmentOf), total: toCount(count?.total) }
      }).pipe(storeError("teamAssessments")),
    usage: (orgId, period) =>
      sql<{ used: unknown; overage: unknown; overage_cost: unknown }>`
        select count(*) as used, count(*) filter (where overage) as overage, coalesce(sum(cost), 0) as overage_cost
        from team_reputation_computations where org_id = ${orgId} and period = ${period}`.pipe(
        Effect.map(([row]) => ({
          used: toCount(row?.used),
          overage: toCount(row?.overage),
          overage_cost: Number(row?.overage_cost ?? 0)
        })),
        storeError("teamReputationUsage")
      ),
    scoreAt: (teamId, at) =>
      sql<{ score: unknown }>`
        select score from team_reputation_computations
        where team_id = ${teamId} and computed_at <= ${at}::timestamptz
        order by computed_at desc, computation_id desc limit 1`.pipe(
        Effect.map(([row]) => (row === undefined ? undefined : toCount(row.score))),
        storeError("teamScoreAt")
      ),
    recordComputation: (c) =>
      sql`
        insert into team_reputation_computations (org_id, team_id, assessment_id, score, computed_at, period, overage, cost)
        values (${c.org_id}, ${c.team_id}, ${c.assessment_id}, ${c.score}, ${c.computed_at}::timestamptz, ${c.period},
          ${c.overage}, ${c.cost})`.pipe(Effect.asVoid, storeError("recordTeamComputation")),
    putScore: (s) =>
      sql`
        insert into team_reputation_scores (team_id, org_id, score, grade, result, inputs_hash, computed_at, checked_at,
          last_notified_score, last_notified_grade)
        values (${s.reputation.team_id}, ${s.reputation.org_id}, ${s.reputation.score}, ${s.reputation.grade},
          ${json(s.reputation)}::jsonb, ${s.inputs_hash}, ${s.reputation.computed_at}::timestamptz,
          ${s.reputation.computed_at}::timestamptz, ${s.last_notified_score}, ${s.last_notified_grade})
        on conflict (team_id) do update set score = excluded.score, grade = excluded.grade, result = excluded.result,
          inputs_hash = excluded.inputs_hash, computed_at = excluded.computed_at, checked_at = excluded.checked_at,
          last_notified_score = excluded.last_notified_score, last_notified_grade = excluded.last_notified_grade`.pipe(
        Effect.asVoid,
        storeError("putTeamScore")
      ),
    claimNotice: (orgId, period, notice, at) =>
      Effect.gen(function* () {
        yield* sql`
          insert into team_reputation_quota_notices (org_id, period) values (${orgId}, ${period})
          on conflict do nothing`
        const column = notice === "warning" ? sql`warning_sent_at` : sql`exceeded_sent_at`
        const rows = yield* sql`
          update team_reputation_quota_notices set ${column} = ${at}::timestamptz
          where org_id = ${orgId} and period = ${period} and ${column} is null
          returning org_id`
        return rows.length > 0
      }).pipe(storeError("claimTeamQuotaNotice")),
    triggerState: (teamId) =>
      sql<{ last_automatic_at: unknown; pending_since: unknown }>`
        select last_automatic_at, pending_since from team_reputation_triggers where team_id = ${teamId}`.pipe(
        Effect.map(([row]) => ({
          last_automatic_at: row?.last_automatic_at == null ? null : toIso(row.last_automatic_at),
          pending_since: row?.pending_since == null ? null : toIso(row.pending_since)
        })),
        storeError("teamReputationTrigger")
      ),
    markPending: (teamId, at) =>
      sql`
        insert into team_reputation_triggers (team_id, pending_since) values (${teamId}, ${at}::timestamptz)
        on conflict (team_id) do update
          set pending_since = coalesce(team_reputation_triggers.pending_since, excluded.pending_since)`.pipe(
        Effect.asVoid,
        storeError("markTeamPending")
      ),
    markAutomatic: (teamId, at) =>
      sql`
        insert into team_reputation_triggers (team_id, last_automatic_at) values (${teamId}, ${at}::timestamptz)
        on conflict (team_id) do update set last_automatic_at = excluded.last_automatic_at, pending_since = null`.pipe(
        Effect.asVoid,
        storeError("markTeamAutomatic")
      ),
    clearPending: (teamId) =>
      sql`update team_reputation_triggers set pending_since = null where team_id = ${teamId}`.pipe(
        Effect.asVoid,
        storeError("clearTeamPending")
      ),
    dueTeams: (windowStart, staleBefore, limit) =>
      sql<{ team_id: string }>`
        select t.team_id from teams t
        left join team_reputation_triggers g on g.team_id = t.team_id
        left join team_reputation_scores s on s.team_id = t.team_id
        where t.status = 'active' and (
          (g.pending_since is not null and (g.last_automatic_at is null or g.last_automatic_at <= ${windowStart}::timestamptz))
          or s.checked_at <= ${staleBefore}::timestamptz)
        order by least(g.pending_since, s.checked_at), t.team_id
        limit ${limit}`.pipe(
        Effect.map((rows) => rows.map((row) => row.team_id)),
        storeError("dueTeams")
      )
  })
})

/** On the process's SqlClient. */
export const layer: Layer.Layer<TeamReputationRepo, never, SqlClient.SqlClient> = Layer.effect(TeamReputationRepo, make)
