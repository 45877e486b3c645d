/**
 * Agent reputation on the store (migrations/0015_reputation.ts): the tallies kept per agent, the
 * stored scores and their history, and the reads of the reputation routes. The recomputation that
 * moves a tally and stores a score is services/ReputationRecompute.ts, in one transaction over these.
 *
 * What is counted is what the certificates say: a re-verified checkpoint keeps its certified verdict
 * in `original_verdict` (its row's `verdict` is the new one), and "analysed" is the checkpoint's
 * `analysis_metadata.analysis_model` (the certificate's `claims.analysis_model`) other than "none".
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { SessionBatch, SessionState, TallyCounts } from "../../core/ReputationIncrement.js"
import type {
  AgentReputation,
  ComponentKey,
  Confidence,
  Grade,
  ReputationHistoryItem,
  Visibility
} from "../../core/schema/Reputation.js"
import { agentGovernanceLog, governanceLogKey } from "../../core/Governance.js"
import { fleetVersionOf } from "./CoherenceRepo.js"
import { json, toCount, toIso } from "./Rows.js"
import { type StoreError, storeError } from "./Store.js"

/** A session whose newest violation weighs on compliance. */
export interface ViolationSession {
  readonly session_id: string
  readonly last_violation_at: string
}

/**
 * What a recomputation reads once its tally is counted, in one statement (each member is what the
 * method of its name, CoherenceRepo `fleetVersion` or Store.treeHead, answers): the agent's
 * organization and its fleet version, the agent's violation sessions since `since`, its stored
 * score, its newest history score at or before `trendAt`, and the signed tree head at exactly
 * `treeSize`. The checks say whether the agent has any card-gap
 * reclassification, AIP re-evaluation, active trust edge into it or out of it at all: without one,
 * the read that would look (ReclassificationRepo `cardGaps`, ReevaluationRepo `reevaluated`,
 * TrustEdgeRepo `incomingGraph` and `outgoingGraph`) answers nothing and is spared.
 */
export interface RecomputationReads {
  readonly orgId: string | null
  /** CoherenceRepo `fleetVersion` of the agent's organization (undefined without one). */
  readonly fleetVersion: string | undefined
  readonly violationSessions: ReadonlyArray<ViolationSession>
  readonly stored: StoredScore | undefined
  readonly scoreAt: number | undefined
  readonly treeHead: { readonly root: string; readonly note: string } | undefined
  readonly mayHaveCardGaps: boolean
  readonly mayHaveReevaluations: boolean
  readonly mayHaveTrusters: boolean
  readonly mayTrustOthers: boolean
}

/** A score as stored: the published record but its visibility, which is read from the claim. */
export type ScoreRecord = Omit<AgentReputation, "visibility">

export interface StoredScore {
  readonly record: ScoreRecord
  /** The score and grade last notified by webhook; null before the first score. */
  readonly notified_score: number | null
  readonly notified_grade: Grade | null
  /** The score computed with no trust adjustment, which weighs the trust this agent gives. */
  readonly base_score: number
}

/** Which agents a listing may hold: every agent (the service-role key), or these and the public ones. */
export type Readable = "all" | ReadonlyArray<string>

export type SearchSort = "score_desc" | "score_asc" | "recent"

export interface SearchQuery {
  readonly readable: Readable
  /** Part of the agent id, case-insensitive. */
  readonly q?: string | undefined
  readonly grade?: Grade | undefined
  readonly confidence?: Confidence | undefined
  readonly sort: SearchSort
  readonly limit: number
  readonly offset: number
}

/** Score statistics over the public eligible agents; null statistics without any. */
export interface Benchmarks {
  readonly count: number
  readonly grades: Readonly<Record<string, number>>
  readonly mean: number | null
  readonly percentiles: {
    readonly p10: number | null
    readonly p25: number | null
    readonly p50: number | null
    readonly p75: number | null
    readonly p90: number | null
  }
  readonly components: Readonly<Record<string, number | null>>
}

export class ReputationRepo extends Context.Tag("candor/adapters/store/ReputationRepo")<
  ReputationRepo,
  {
    /** The agent's tally (created empty), its row locked until the ambient transaction ends. */
    readonly lockTally: (agentId: string) => Effect.Effect<TallyCounts, StoreError>
    /**
     * The chain head's size and, per session, the checkpoints at positions `from` to the head, in
     * one statement (one snapshot: the drift alerts seen are those of the checkpoints seen).
     */
    readonly scan: (
      agentId: string,
      from: number
    ) => Effect.Effect<{ readonly head: number; readonly sessions: ReadonlyArray<SessionBatch> }, StoreError>
    /** The stored state of these sessions of the agent. */
    readonly sessions: (
      agentId: string,
      sessionIds: ReadonlyArray<string>
    ) => Effect.Effect<ReadonlyMap<string, SessionState>, StoreError>
    readonly saveTally: (
      agentId: string,
      counts: TallyCounts,
      sessions: ReadonlyMap<string, SessionState>,
      at: string
    ) => Effect.Effect<void, StoreError>
    /** Sessions whose newest violation is at or after `since` (older ones weigh nothing), by session id. */
    readonly violationSessions: (
      agentId: string,
      since: string
    ) => Effect.Effect<ReadonlyArray<ViolationSession>, StoreError>
    readonly stored: (agentId: string) => Effect.Effect<StoredScore | undefined, StoreError>
    readonly saveScore: (agentId: string, score: StoredScore) => Effect.Effect<void, StoreError>
    /** The base scores (and eligibility) of those of these agents that have a stored score. */
    readonly baseScores: (
      agentIds: ReadonlyArray<string>
    ) => Effect.Effect<ReadonlyMap<string, { readonly score: number; readonly eligible: boolean }>, StoreError>
    /** The newest history score at or before `at`, if any (trend_30d). */
    readonly scoreAt: (agentId: string, at: string) => Effect.Effect<number | undefined, StoreError>
    /** Appends; a weekly snapshot (with `weekStart`) of a week that has one is not: returns whether it was. */
    readonly appendHistory: (
      agentId: string,
      item: ReputationHistoryItem,
      weekStart?: string
    ) => Effect.Effect<boolean, StoreError>
    /** Newest first, computed at or after `since`. */
    readonly history: (
      agentId: string,
      since: string,
      limit: number
    ) => Effect.Effect<ReadonlyArray<ReputationHistoryItem>, StoreError>
    /** The agent's visibility (unlisted when unclaimed), or undefined when no such agent exists. */
    readonly visibility: (agentId: string) => Effect.Effect<Visibility | undefined, StoreError>
    /** The organization the agent is claimed into (null: personal or unclaimed). */
    readonly orgOf: (agentId: string) => Effect.Effect<string | null, StoreError>
    /** {@link RecomputationReads}: six reads and four checks in one statement. */
    readonly recomputationReads: (
      agentId: string,
      at: { readonly since: string; readonly trendAt: string; readonly treeSize: number }
    ) => Effect.Effect<RecomputationReads, StoreError>
    /** Of these agents, those that exist, with their visibility and stored score (if any). */
    readonly lookup: (
      agentIds: ReadonlyArray<string>
    ) => Effect.Effect<
      ReadonlyMap<string, { readonly visibility: Visibility; readonly record: ScoreRecord | undefined }>,
      StoreError
    >
    readonly search: (
      query: SearchQuery
    ) => Effect.Effect<{ readonly items: ReadonlyArray<AgentReputation>; readonly total: number }, StoreError>
    readonly benchmarks: (components: ReadonlyArray<ComponentKey>) => Effect.Effect<Benchmarks, StoreError>
    /**
     * Agents with a log whose tally lags their chain head, or whose score is missing or older than
     * `staleBefore`, oldest score first.
     */
    readonly lagging: (staleBefore: string, limit: number) => Effect.Effect<ReadonlyArray<string>, StoreError>
  }
>() {}

const tallyOf = (row: Record<string, unknown>): TallyCounts => ({
  tree_size: toCount(row.tree_size),
  certified: toCount(row.certified),
  analysed: toCount(row.analysed),
  analysed_clear: toCount(row.analysed_clear),
  long_sessions: toCount(row.long_sessions),
  stable_sessions: toCount(row.stable_sessions)
})

interface ViolationSessionRow {
  readonly session_id: string
  readonly last_violation_at: unknown
}

// In code-unit order of the session id (not the database's collation): the impacts are summed in
// this order, and a verifier summing in the same order gets the same bits.
const violationSessionsOf = (rows: ReadonlyArray<ViolationSessionRow>): ReadonlyArray<ViolationSession> =>
  rows
    .map((row) => ({ session_id: row.session_id, last_violation_at: toIso(row.last_violation_at) }))
    .sort((a, b) => (a.session_id < b.session_id ? -1 : a.session_id > b.session_id ? 1 : 0))

interface StoredScoreRow {
  readonly result: unknown
  readonly notified_score: unknown
  readonly notified_grade: Grade | null
  readonly base_score: unknown
}

const storedScoreOf = (row: StoredScoreRow | undefined): StoredScore | undefined =>
  row === undefined
    ? undefined
    : {
        record: row.result as ScoreRecord,
        notified_score: numberOrNull(row.notified_score),
        notified_grade: row.notified_grade ?? null,
        base_score: Number(row.base_score)
      }

const isoOrNull = (value: unknown): string | null => (value === null || value === undefined ? null : toIso(value))
const numberOrNull = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value))

const historyOf = (row: Record<string, unknown>): ReputationHistoryItem => ({
  score: Number(row.score),
  grade: row.grade as Grade,
  confidence: row.confidence as Confidence,
  checkpoint_count: toCount(row.checkpoint_count),
  tree_size: toCount(row.tree_size),
  kind: row.kind as ReputationHistoryItem["kind"],
  computed_at: toIso(row.computed_at)
})

/** The stored `result` (json, so the driver hands back the object) with the claim's visibility. */
const publishedOf = (row: { readonly result: unknown; readonly visibility: Visibility | null }): AgentReputation => ({
  ...(row.result as ScoreRecord),
  visibility: row.visibility ?? "unlisted"
})

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const violationSessionsQuery = (agentId: string, since: string) =>
    sql`select session_id, last_violation_at from reputation_sessions
      where agent_id = ${agentId} and last_violation_at >= ${since}::timestamptz`
  const storedScoreQuery = (agentId: string) =>
    sql`select result, notified_score, notified_grade, base_score from reputation_scores where agent_id = ${agentId}`
  const scoreAtQuery = (agentId: string, at: string) =>
    sql`select score from reputation_history where agent_id = ${agentId} and computed_at <= ${at}::timestamptz
      order by computed_at desc, id desc limit 1`

  const readableClause = (readable: Readable) =>
    readable === "all"
      ? sql`true`
      : sql`(c.visibility = 'public' or s.agent_id in (select jsonb_array_elements_text(${json(readable)}::jsonb)))`

  const searchFilter = (query: SearchQuery) =>
    sql`${readableClause(query.readable)}
      ${query.q === undefined ? sql`` : sql`and strpos(lower(s.agent_id), lower(${query.q})) > 0`}
      ${query.grade === undefined ? sql`` : sql`and s.grade = ${query.grade}`}
      ${query.confidence === undefined ? sql`` : sql`and s.confidence = ${query.confidence}`}`

  const order = (sort: SearchSort) =>
    sort === "score_asc"
      ? sql`s.score asc, s.agent_id`
      : sort === "recent"
        ? sql`s.computed_at desc, s.agent_id`
        : sql`s.score desc, s.agent_id`

  return ReputationRepo.of({
    // One statement for an agent with a tally (every recomputation but its first); the first
    // creates it, and locks it as any other would (two first ones racing: one insert wins, both lock).
    lockTally: (agentId) =>
      Effect.gen(function* () {
        const lock = sql`select * from reputation_tallies where agent_id = ${agentId} for update`
        const [row] = yield* lock
        if (row !== undefined) return tallyOf(row)
        yield* sql`insert into reputation_tallies (agent_id) values (${agentId}) on conflict do nothing`
        const [created] = yield* lock
        return tallyOf(created!)
      }).pipe(storeError("lockTally")),

    scan: (agentId, from) =>
      sql<{
        head: unknown
        session_id: string | null
        checkpoints: unknown
        analysed: unknown
        analysed_clear: unknown
        last_violation_at: unknown
        drifted: boolean | null
      }>`
        with head as (
          select position from chain_heads where agent_id = ${agentId}
        ), batch as (
          select session_id, occurred_at,
            coalesce(body ->> 'original_verdict', verdict) as verdict,
            coalesce(body -> 'analysis_metadata' ->> 'analysis_model', 'none') <> 'none' as analysed
          from checkpoints
          where agent_id = ${agentId} and position >= ${from} and position < (select position from head)
            -- A tool result's checkpoint counts for nothing (core/ToolResultScope.ts).
            and coalesce(body -> 'analysis_metadata' ->> 'analysis_scope', '') <> 'tool_result'
        ), per_session as (
          select session_id, count(*) as checkpoints,
            count(*) filter (where analysed) as analysed,
            count(*) filter (where analysed and verdict = 'clear') as analysed_clear,
            max(occurred_at) filter (where verdict = 'boundary_violation') as last_violation_at
          from batch group by session_id
        )
        select (select position from head) as head, p.*,
          exists (
            select 1 from drift_alerts d
            where d.agent_id = ${agentId} and d.session_id = p.session_id and d.alert_id like 'ida-%'
          ) as drifted
        from (select 1) one left join per_session p on true`.pipe(
        Effect.map((rows) => ({
          head: toCount(rows[0]?.head),
          sessions: rows
            .filter((row) => row.session_id !== null)
            .map((row): SessionBatch => ({
              session_id: row.session_id!,
              checkpoints: toCount(row.checkpoints),
              analysed: toCount(row.analysed),
              analysed_clear: toCount(row.analysed_clear),
              last_violation_at: isoOrNull(row.last_violation_at),
              drifted: row.drifted === true
            }))
        })),
        storeError("reputationScan")
      ),

    sessions: (agentId, sessionIds) =>
      sessionIds.length === 0
        ? Effect.succeed(new Map())
        : sql<{ session_id: string; checkpoints: unknown; last_violation_at: unknown; drifted: boolean }>`
            select session_id, checkpoints, last_violation_at, drifted from reputation_sessions
            where agent_id = ${agentId}
              and session_id in (select jsonb_array_elements_text(${json(sessionIds)}::jsonb))`.pipe(
            Effect.map(
              (rows) =>
                new Map(
                  rows.map((row) => [
                    row.session_id,
                    {
                      checkpoints: toCount(row.checkpoints),
                      last_violation_at: isoOrNull(row.last_violation_at),
                      drifted: row.drifted === true
                    }
                  ])
                )
            ),
            storeError("reputationSessions")
          ),

    saveTally: (agentId, counts, sessions, at) =>
      Effect.gen(function* () {
        if (sessions.size > 0) {
          const rows = Array.from(sessions, ([session_id, s]) => ({ session_id, ...s }))
          yield* sql`
            insert into reputation_sessions (agent_id, session_id, checkpoints, last_violation_at, drifted)
            select ${agentId}, session_id, checkpoints, last_violation_at, drifted
            from json_to_recordset(${json(rows)}::json)
              as r(session_id text, checkpoints bigint, last_violation_at timestamptz, drifted boolean)
            on conflict (agent_id, session_id) do update set checkpoints = excluded.checkpoints,
              last_violation_at = excluded.last_violation_at, drifted = excluded.drifted`
        }
        yield* sql`
          update reputation_tallies set tree_size = ${counts.tree_size}, certified = ${counts.certified},
            analysed = ${counts.analysed}, analysed_clear = ${counts.analysed_clear},
            long_sessions = ${counts.long_sessions}, stable_sessions = ${counts.stable_sessions},
            updated_at = ${at}::timestamptz
          where agent_id = ${agentId}`
      }).pipe(storeError("saveTally")),

    violationSessions: (agentId, since) =>
      sql<ViolationSessionRow>`${violationSessionsQuery(agentId, since)}`.pipe(
        Effect.map(violationSessionsOf),
        storeError("violationSessions")
      ),

    stored: (agentId) =>
      sql<StoredScoreRow>`${storedScoreQuery(agentId)}`.pipe(
        Effect.map(([row]) => storedScoreOf(row)),
        storeError("storedScore")
      ),

    saveScore: (agentId, { base_score, notified_grade, notified_score, record }) =>
      sql`
        insert into reputation_scores (agent_id, score, grade, confidence, is_eligible, checkpoint_count, tree_size,
          component_scores, result, computed_at, notified_score, notified_grade, base_score)
        values (${agentId}, ${record.score}, ${record.grade}, ${record.confidence}, ${record.is_eligible},
          ${record.checkpoint_count}, ${record.computed_over.tree_size},
          ${json(Object.fromEntries(record.components.map((c) => [c.key, c.score])))}::jsonb, ${json(record)}::json,
          ${record.computed_at}::timestamptz, ${notified_score}, ${notified_grade}, ${base_score})
        on conflict (agent_id) do update set score = excluded.score, grade = excluded.grade,
          confidence = excluded.confidence, is_eligible = excluded.is_eligible,
          checkpoint_count = excluded.checkpoint_count, tree_size = excluded.tree_size,
          component_scores = excluded.component_scores, result = excluded.result,
          computed_at = excluded.computed_at, notified_score = excluded.notified_score,
          notified_grade = excluded.notified_grade, base_score = excluded.base_score`.pipe(
        Effect.asVoid,
        storeError("saveScore")
      ),

    baseScores: (agentIds) =>
      agentIds.length === 0
        ? Effect.succeed(new Map())
        : sql<{ agent_id: string; base_score: unknown; is_eligible: boolean }>`
            select agent_id, base_score, is_eligible from reputation_scores
            where agent_id in (select value from jsonb_array_elements_text(${json(agentIds)}::jsonb))`.pipe(
            Effect.map(
              (rows) =>
                new Map(rows.map((row) => [row.agent_id, { score: Number(row.base_score), eligible: row.is_eligible }]))
            ),
            storeError("baseScores")
          ),

    scoreAt: (agentId, at) =>
      sql<{ score: unknown }>`${scoreAtQuery(agentId, at)}`.pipe(
        Effect.map(([row]) => (row === undefined ? undefined : Number(row.score))),
        storeError("scoreAt")
      ),

    appendHistory: (agentId, item, weekStart) =>
      sql`
        insert into reputation_history (agent_id, kind, score, grade, confidence, checkpoint_count, tree_size,
          computed_at, week_start)
        values (${agentId}, ${item.kind}, ${item.score}, ${item.grade}, ${item.confidence}, ${item.checkpoint_count},
          ${item.tree_size}, ${item.computed_at}::timestamptz, ${weekStart ?? null}::timestamptz)
        on conflict (agent_id, week_start) where kind = 'weekly_snapshot' do nothing
        returning id`.pipe(
        Effect.map((rows) => rows.length > 0),
        storeError("appendHistory")
      ),

    history: (agentId, since, limit) =>
      sql`
        select kind, score, grade, confidence, checkpoint_count, tree_size, computed_at from reputation_history
        where agent_id = ${agentId} and computed_at >= ${since}::timestamptz
        order by computed_at desc, id desc limit ${limit}`.pipe(
        Effect.map((rows) => rows.map(historyOf)),
        storeError("reputationHistory")
      ),

    visibility: (agentId) =>
      sql<{ visibility: Visibility | null }>`
        select (select visibility from agent_claims where agent_id = ${agentId}) as visibility
        where exists (select 1 from agent_claims where agent_id = ${agentId})
           or exists (select 1 from agents where agent_id = ${agentId})`.pipe(
        Effect.map(([row]) => (row === undefined ? undefined : (row.visibility ?? "unlisted"))),
        storeError("agentVisibility")
      ),

    orgOf: (agentId) =>
      sql<{ org_id: string | null }>`select org_id from agent_claims where agent_id = ${agentId}`.pipe(
        Effect.map(([row]) => row?.org_id ?? null),
        storeError("agentOrg")
      ),

    // The queries of the methods above, as scalar subqueries of one statement; the tree head's is
    // Store.treeHead's at an exact size, and each check is the first condition of the read it spares
    // (a trust walk from an agent with no edge in its direction finds no edge).
    recomputationReads: (agentId, { since, treeSize, trendAt }) =>
      sql<{
        org_id: string | null
        fleet_version: string | null
        violation_sessions: ReadonlyArray<ViolationSessionRow> | null
        stored: StoredScoreRow | null
        score_at: unknown
        tree_head: { root: string; note: string } | null
        card_gaps: boolean
        reevaluations: boolean
        trusters: boolean
        trusts: boolean
      }>`
        select
          (select org_id from agent_claims where agent_id = ${agentId}) as org_id,
          ${fleetVersionOf(sql, sql`(select org_id from agent_claims where agent_id = ${agentId})`)} as fleet_version,
          (select json_agg(v) from (${violationSessionsQuery(agentId, since)}) v) as violation_sessions,
          (select row_to_json(s) from (${storedScoreQuery(agentId)}) s) as stored,
          (select score from (${scoreAtQuery(agentId, trendAt)}) h) as score_at,
          (select json_build_object('root', encode(root, 'hex'), 'note', note) from tree_heads
            where agent_id = ${agentId} and tree_size = ${treeSize}) as tree_head,
          exists (select 1 from reclassifications where agent_id = ${agentId} and new_type = 'card_gap') as card_gaps,
          exists (select 1 from governance_entries
            where log_id = ${governanceLogKey(agentGovernanceLog(agentId))}
              and record ->> 'action' = 'aip.reevaluation') as reevaluations,
          exists (select 1 from trust_edges where target_agent_id = ${agentId} and deleted_at is null) as trusters,
          exists (select 1 from trust_edges where source_agent_id = ${agentId} and deleted_at is null) as trusts`.pipe(
        Effect.map(([row]): RecomputationReads => ({
          orgId: row!.org_id,
          fleetVersion: row!.fleet_version ?? undefined,
          violationSessions: violationSessionsOf(row!.violation_sessions ?? []),
          stored: storedScoreOf(row!.stored ?? undefined),
          scoreAt: row!.score_at === null ? undefined : Number(row!.score_at),
          treeHead: row!.tree_head ?? undefined,
          mayHaveCardGaps: row!.card_gaps,
          mayHaveReevaluations: row!.reevaluations,
          mayHaveTrusters: row!.trusters,
          mayTrustOthers: row!.trusts
        })),
        storeError("recomputationReads")
      ),

    lookup: (agentIds) =>
      agentIds.length === 0
        ? Effect.succeed(new Map())
        : sql<{ agent_id: string; visibility: Visibility | null; result: unknown }>`
            with ids as (select distinct value as agent_id from jsonb_array_elements_text(${json(agentIds)}::jsonb))
            select i.agent_id, c.visibility, s.result from ids i
            left join agent_claims c on c.agent_id = i.agent_id
            left join reputation_scores s on s.agent_id = i.agent_id
            where c.agent_id is not null or exists (select 1 from agents a where a.agent_id = i.agent_id)`.pipe(
            Effect.map(
              (rows) =>
                new Map(
                  rows.map((row) => [
                    row.agent_id,
                    {
                      visibility: row.visibility ?? "unlisted",
                      record: row.result === null ? undefined : (row.result as ScoreRecord)
                    }
                  ])
                )
            ),
            storeError("reputationLookup")
          ),

    search: (query) =>
      Effect.gen(function* () {
        const [counted] = yield* sql<{ n: unknown }>`
          select count(*) as n from reputation_scores s left join agent_claims c on c.agent_id = s.agent_id
          where ${searchFilter(query)}`
        const rows = yield* sql<{ result: unknown; visibility: Visibility | null }>`
          select s.result, c.visibility from reputation_scores s left join agent_claims c on c.agent_id = s.agent_id
          where ${searchFilter(query)}
          order by ${order(query.sort)} limit ${query.limit} offset ${query.offset}`
        return { items: rows.map(publishedOf), total: toCount(counted?.n) }
      }).pipe(storeError("reputationSearch")),

    benchmarks: (components) =>
      Effect.gen(function* () {
        const means = sql.csv(
          components.map((key) => sql`avg((s.component_scores ->> ${key})::float8)::float8 as ${sql(`c_${key}`)}`)
        )
        const [stats] = yield* sql<Record<string, unknown>>`
          select count(*) as n, avg(s.score)::float8 as mean,
            percentile_cont(0.10) within group (order by s.score) as p10,
            percentile_cont(0.25) within group (order by s.score) as p25,
            percentile_cont(0.50) within group (order by s.score) as p50,
            percentile_cont(0.75) within group (order by s.score) as p75,
            percentile_cont(0.90) within group (order by s.score) as p90,
            ${means}
          from reputation_scores s join agent_claims c on c.agent_id = s.agent_id and c.visibility = 'public'
          where s.is_eligible`
        const grades = yield* sql<{ grade: string; n: unknown }>`
          select s.grade, count(*) as n
          from reputation_scores s join agent_claims c on c.agent_id = s.agent_id and c.visibility = 'public'
          where s.is_eligible group by s.grade`
        const row = stats ?? {}
        return {
          count: toCount(row.n),
          grades: Object.fromEntries(grades.map((g) => [g.grade, toCount(g.n)])),
          mean: numberOrNull(row.mean),
          percentiles: {
            p10: numberOrNull(row.p10),
            p25: numberOrNull(row.p25),
            p50: numberOrNull(row.p50),
            p75: numberOrNull(row.p75),
            p90: numberOrNull(row.p90)
          },
          components: Object.fromEntries(components.map((key) => [key, numberOrNull(row[`c_${key}`])]))
        }
      }).pipe(storeError("reputationBenchmarks")),

    lagging: (staleBefore, limit) =>
      sql<{ agent_id: string }>`
        select h.agent_id from chain_heads h
        left join reputation_tallies t on t.agent_id = h.agent_id
        left join reputation_scores s on s.agent_id = h.agent_id
        where t.agent_id is null or t.tree_size < h.position or s.agent_id is null
          or s.computed_at < ${staleBefore}::timestamptz
        order by s.computed_at nulls first, h.agent_id
        limit ${limit}`.pipe(
        Effect.map((rows) => rows.map((row) => row.agent_id)),
        storeError("reputationLagging")
      )
  })
})

export const layer: Layer.Layer<ReputationRepo, never, SqlClient.SqlClient> = Layer.effect(ReputationRepo, make)
