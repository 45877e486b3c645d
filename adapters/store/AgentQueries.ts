/**
 * The management API's reads (and re-verification writes) of agent data, beside the `Store`: the
 * agents list, the re-verification batches and the integrity counts. Same SQL on PostgreSQL and
 * PGlite; the indexes are in migrations/0004_agent_queries.ts.
 *
 * Re-evaluating a checkpoint changes its verdict column, its stored body and the per-verdict
 * counters of `checkpoint_counts` (kept by the commit path, read by the checkpoint list's `total`)
 * in one statement, compare-and-set on the previous verdict: two re-verifications of one agent at
 * the same moment move each checkpoint and each counter once. Bodies are opened as read and
 * sealed again as written (./SealedFields.ts).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import type { AgentStatus } from "../../core/schema/Agent.js"
import type { IntegrityCheckpoint } from "../../core/schema/Checkpoint.js"
import type { Grade, Visibility } from "../../core/schema/Reputation.js"
import type { DriftAlert } from "../../core/schema/Drift.js"
import type { APTrace } from "../../core/schema/Trace.js"
import type { EnforcementMode, Verdict } from "../../core/schema/Verdict.js"
import type { SecretKey } from "../../core/SecretBox.js"
import { SecretKeys } from "../keys/SecretKeys.js"
import { json, toCount, toIso } from "./Rows.js"
import {
  checkpointFields,
  openBodies,
  sealBody,
  type SealedFieldUnreadable,
  type SealedRow,
  traceFields
} from "./SealedFields.js"
import {
  agentSettingsOf,
  type AgentSettingsRecord,
  type CheckpointQuery,
  type Page,
  StoreError,
  storeError
} from "./Store.js"

export type VerdictCounts = { readonly [V in Verdict]: number }

/** One row of the agents list. Agents the store has never seen (claimed, no traffic yet) get the defaults. */
export interface AgentSummary {
  readonly agent_id: string
  readonly status: AgentStatus
  readonly enforcement_mode: EnforcementMode
  /** The active Alignment Card's id; null before the first card. */
  readonly card_id: string | null
  /** Time of the newest stored checkpoint; null before the first. */
  readonly last_seen: string | null
  readonly checkpoint_counts: VerdictCounts
  /** Whether someone claimed the agent; only the service-role key sees unclaimed ones. */
  readonly claimed: boolean
  /** Who may read its reputation (an unclaimed agent: the default, unlisted). */
  readonly visibility: Visibility
  /** The organization it is claimed into; null for a personal or unclaimed agent. */
  readonly org_id: string | null
  /** That organization's name; null with `org_id`. */
  readonly org_name: string | null
  /** The name an Owner or Admin gave it, else its `x-candor-agent` label; null without either. */
  readonly display_name: string | null
  /** Its current reputation (reputation_scores); null before the first computation. */
  readonly reputation: AgentReputationSummary | null
}

export interface AgentReputationSummary {
  readonly score: number
  readonly grade: Grade
  readonly is_eligible: boolean
}

export interface TraceCounts {
  readonly total: number
  /** Traces whose stored verification failed. */
  readonly violating: number
  /** Violations over all those traces (each trace lists each violation type once). */
  readonly violations: number
}

/** A checkpoint with its new verdict (and `re_evaluated_at`, `original_verdict`), and the verdict it had. */
export interface CheckpointReevaluation {
  readonly checkpoint: IntegrityCheckpoint
  readonly previous: Verdict
}

export class AgentQueries extends Context.Tag("candor/adapters/store/AgentQueries")<
  AgentQueries,
  {
    /** The agents with these ids, in the order of the newest activity first. */
    readonly agentSummaries: (agentIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<AgentSummary>, StoreError>
    /** An agent's non-clear checkpoints, newest first: the AIP re-verification batch. */
    readonly nonClearCheckpoints: (
      agentId: string,
      limit: number,
      offset: number
    ) => Effect.Effect<ReadonlyArray<IntegrityCheckpoint>, StoreError>
    /**
     * `bounded_actions` of the agent's stored card versions with these card ids: what AIP
     * re-evaluation compares a widened envelope with (core/Reevaluation.ts). A card id whose versions
     * disagree on them is left out, as is one never stored: which one judged a checkpoint is unknown.
     */
    readonly judgedBoundedActions: (
      agentId: string,
      cardIds: ReadonlyArray<string>
    ) => Effect.Effect<ReadonlyMap<string, ReadonlyArray<string>>, StoreError>
    /** Stores the new verdicts of checkpoints still at their `previous` verdict; returns the ids it changed. */
    readonly reevaluateCheckpoints: (
      changes: ReadonlyArray<CheckpointReevaluation>
    ) => Effect.Effect<ReadonlyArray<string>, StoreError>
    /** An agent's traces whose verification failed, newest first: the AAP re-verification batch. */
    readonly violatingTraces: (
      agentId: string,
      limit: number,
      offset: number
    ) => Effect.Effect<ReadonlyArray<APTrace>, StoreError>
    /** Replaces the stored bodies of these traces (their new verification); returns how many it found. */
    readonly updateTraces: (traces: ReadonlyArray<APTrace>) => Effect.Effect<number, StoreError>
    readonly traceCounts: (agentId: string) => Effect.Effect<TraceCounts, StoreError>
    /** An agent's AIP drift alerts, newest first: all but the AAP ones (`ada-…`), which share the table. */
    readonly aipDriftAlerts: (agentId: string, limit: number) => Effect.Effect<ReadonlyArray<DriftAlert>, StoreError>
  }
>() {}

const isStrings = (value: unknown): value is ReadonlyArray<string> =>
  Array.isArray(value) && value.every((item) => typeof item === "string")

/** Deadlock or serialization failure against a concurrent commit touching the same counters: try again. */
const isLostRace = (error: SqlError): boolean => {
  const cause = error.cause
  const code = typeof cause === "object" && cause !== null && "code" in cause ? cause.code : undefined
  return code === "40P01" || code === "40001"
}

interface SummaryRow {
  readonly agent_id: string
  readonly settings: unknown
  readonly card_id: string | null
  readonly last_seen: unknown
  readonly counts: Readonly<Record<string, unknown>> | null
  readonly claimed: unknown
  readonly visibility: Visibility | null
  readonly org_id: string | null
  readonly org_name: string | null
  readonly display_name: string | null
  readonly reputation: { readonly score: unknown; readonly grade: Grade; readonly is_eligible: unknown } | null
}

const summaryOf = (row: SummaryRow, settings: AgentSettingsRecord): AgentSummary => {
  const counts = row.counts ?? {}
  return {
    agent_id: row.agent_id,
    status: settings.containment?.status ?? "active",
    enforcement_mode: settings.mode,
    card_id: row.card_id,
    last_seen: row.last_seen === null || row.last_seen === undefined ? null : toIso(row.last_seen),
    checkpoint_counts: {
      clear: toCount(counts["clear"]),
      review_needed: toCount(counts["review_needed"]),
      boundary_violation: toCount(counts["boundary_violation"])
    },
    // PGlite and PostgreSQL both answer a boolean; a driver that answers 1/0 or "t" is covered too.
    claimed: row.claimed === true || row.claimed === 1 || row.claimed === "t",
    visibility: row.visibility ?? "unlisted",
    org_id: row.org_id ?? null,
    org_name: row.org_name ?? null,
    display_name: row.display_name ?? null,
    reputation:
      row.reputation === null || row.reputation === undefined
        ? null
        : {
            score: toCount(row.reputation.score),
            grade: row.reputation.grade,
            is_eligible: row.reputation.is_eligible === true || row.reputation.is_eligible === "t"
          }
  }
}

/**
 * A page of an agent's checkpoints, newest first, with the total of the filtered set: the one query
 * of the checkpoint list (`Store.listCheckpoints`), read by the API and by the actors' rebuild.
 * Planned for deep offsets: the offset is walked in the index alone (index-only scan) and only the
 * page's rows are read.
 */
export const selectCheckpointPage = (
  sql: SqlClient.SqlClient,
  keys: ReadonlyArray<SecretKey>,
  query: CheckpointQuery
): Effect.Effect<Page<IntegrityCheckpoint>, SqlError | SealedFieldUnreadable> => {
  const filters = [
    sql`agent_id = ${query.agentId}`,
    ...(query.verdict === undefined ? [] : [sql`verdict = ${query.verdict}`]),
    ...(query.sessionId === undefined ? [] : [sql`session_id = ${query.sessionId}`])
  ]
  // The per-verdict counters keep the total flat however long the log; a session is short enough to count.
  const total =
    query.sessionId === undefined
      ? sql`select sum(count) as total from checkpoint_counts
            where agent_id = ${query.agentId} ${query.verdict === undefined ? sql`` : sql`and verdict = ${query.verdict}`}`
      : sql`select count(*) as total from checkpoints where ${sql.and(filters)}`
  // One statement, so the page and the total see one snapshot (two could disagree while a commit
  // lands: a total of 1 with an empty page). (agent_id, position) is unique: the page's positions,
  // found in the index, name its rows; an empty page is one row without an id, carrying the total.
  type PageRow = SealedRow<IntegrityCheckpoint> | { readonly id: null; readonly total: unknown }
  const rows = sql<PageRow & { readonly total: unknown }>`
    with page as (
      select position, occurred_at from checkpoints where ${sql.and(filters)}
      order by occurred_at desc, position desc
      limit ${query.limit} offset ${query.offset}
    ), counted as (${total})
    select counted.total, c.checkpoint_id as id, c.sealed_by, c.body
    from counted
    left join page on true
    left join checkpoints c on c.agent_id = ${query.agentId} and c.position = page.position
    order by page.occurred_at desc, page.position desc`
  return Effect.flatMap(rows, (all) =>
    Effect.map(
      openBodies(
        checkpointFields,
        keys,
        all.filter((row): row is SealedRow<IntegrityCheckpoint> & { readonly total: unknown } => row.id !== null)
      ),
      (items) => ({ items, total: toCount(all[0]?.total) })
    )
  )
}

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const secretKeys = yield* SecretKeys

  const agentSummaries = (agentIds: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<AgentSummary>, StoreError> =>
    agentIds.length === 0
      ? Effect.succeed([])
      : sql<SummaryRow>`
          with ids as (select distinct value as agent_id from json_array_elements_text(${json(agentIds)}::json))
          select i.agent_id, a.settings,
            (select k.card_id from cards k where k.agent_id = i.agent_id and k.active) as card_id,
            (select max(c.occurred_at) from checkpoints c where c.agent_id = i.agent_id) as last_seen,
            (select json_object_agg(n.verdict, n.count) from checkpoint_counts n where n.agent_id = i.agent_id) as counts,
            exists (select 1 from agent_claims l where l.agent_id = i.agent_id) as claimed,
            (select l.visibility from agent_claims l where l.agent_id = i.agent_id) as visibility,
            (select l.org_id from agent_claims l where l.agent_id = i.agent_id) as org_id,
            (select o.name from agent_claims l join orgs o on o.org_id = l.org_id where l.agent_id = i.agent_id) as org_name,
            coalesce(a.display_name, a.default_name) as display_name,
            (select json_build_object('score', r.score, 'grade', r.grade, 'is_eligible', r.is_eligible)
               from reputation_scores r where r.agent_id = i.agent_id) as reputation
          from ids i left join agents a on a.agent_id = i.agent_id`.pipe(
          Effect.flatMap((rows) =>
            Effect.forEach(rows, (row) => Effect.map(agentSettingsOf(row.settings), (s) => summaryOf(row, s)))
          ),
          Effect.map((summaries) =>
            summaries.sort(
              (a, b) => (b.last_seen ?? "").localeCompare(a.last_seen ?? "") || a.agent_id.localeCompare(b.agent_id)
            )
          ),
          storeError("agentSummaries")
        )

  const nonClearCheckpoints = (agentId: string, limit: number, offset: number) =>
    sql<SealedRow<IntegrityCheckpoint>>`
      select checkpoint_id as id, sealed_by, body from checkpoints where agent_id = ${agentId} and verdict <> 'clear'
      order by occurred_at desc, position desc limit ${limit} offset ${offset}`.pipe(
      Effect.flatMap((rows) => openBodies(checkpointFields, secretKeys.all, rows)),
      storeError("nonClearCheckpoints")
    )

  const judgedBoundedActions = (agentId: string, cardIds: ReadonlyArray<string>) =>
    cardIds.length === 0
      ? Effect.succeed(new Map<string, ReadonlyArray<string>>())
      : sql<{ card_id: string; bounded: unknown }>`
          select card_id, jsonb_agg(distinct card -> 'autonomy_envelope' -> 'bounded_actions') as bounded from cards
          where agent_id = ${agentId} and card_id in (select jsonb_array_elements_text(${json([...new Set(cardIds)])}::jsonb))
          group by card_id`.pipe(
          Effect.map((rows) => {
            const found = new Map<string, ReadonlyArray<string>>()
            for (const row of rows) {
              const versions = (typeof row.bounded === "string" ? JSON.parse(row.bounded) : row.bounded) as unknown
              if (Array.isArray(versions) && versions.length === 1 && isStrings(versions[0]))
                found.set(row.card_id, versions[0])
            }
            return found
          }),
          storeError("judgedBoundedActions")
        )

  const reevaluateCheckpoints = (changes: ReadonlyArray<CheckpointReevaluation>) => {
    if (changes.length === 0) return Effect.succeed([])
    const rows = changes.map(({ checkpoint, previous }) => ({
      checkpoint_id: checkpoint.checkpoint_id,
      previous,
      verdict: checkpoint.verdict,
      body: sealBody(checkpointFields, secretKeys.active, checkpoint.checkpoint_id, checkpoint)
    }))
    // Counter rows are upserted in (agent, verdict) order, so concurrent writers lock them alike.
    return sql<{ checkpoint_id: string }>`
      with r as (
        select * from json_to_recordset(${json(rows)}::json) as r(checkpoint_id text, previous text, verdict text, body json)
      ), updated as (
        update checkpoints c set verdict = r.verdict, body = r.body, sealed_by = ${secretKeys.active.keyId}
        from r where c.checkpoint_id = r.checkpoint_id and c.verdict = r.previous
        returning c.checkpoint_id, c.agent_id, r.previous, r.verdict
      ), deltas as (
        select agent_id, previous as verdict, -1 as delta from updated
        union all
        select agent_id, verdict, 1 as delta from updated
      ), counted as (
        insert into checkpoint_counts (agent_id, verdict, count)
        select agent_id, verdict, sum(delta) from deltas group by agent_id, verdict order by agent_id, verdict
        on conflict (agent_id, verdict) do update set count = checkpoint_counts.count + excluded.count
      )
      select checkpoint_id from updated`.pipe(
      Effect.retry({ while: isLostRace, schedule: Schedule.recurs(3) }),
      Effect.map((updated) => updated.map((row) => row.checkpoint_id)),
      storeError("reevaluateCheckpoints")
    )
  }

  const violatingTraces = (agentId: string, limit: number, offset: number) =>
    sql<SealedRow<APTrace>>`
      select trace_id as id, sealed_by, body from traces
      where agent_id = ${agentId} and (body -> 'verification' ->> 'verified') = 'false'
      order by occurred_at desc, trace_id limit ${limit} offset ${offset}`.pipe(
      Effect.flatMap((rows) => openBodies(traceFields, secretKeys.all, rows)),
      storeError("violatingTraces")
    )

  const updateTraces = (traces: ReadonlyArray<APTrace>) =>
    traces.length === 0
      ? Effect.succeed(0)
      : sql<{ trace_id: string }>`
          update traces t set body = r.body, sealed_by = ${secretKeys.active.keyId}
          from json_to_recordset(${json(
            traces.map((trace) => ({
              trace_id: trace.trace_id,
              body: sealBody(traceFields, secretKeys.active, trace.trace_id, trace)
            }))
          )}::json)
            as r(trace_id text, body json)
          where t.trace_id = r.trace_id
          returning t.trace_id`.pipe(
          Effect.map((rows) => rows.length),
          storeError("updateTraces")
        )

  const traceCounts = (agentId: string) =>
    sql<{ total: unknown; violating: unknown; violations: unknown }>`
      select
        (select count(*) from traces where agent_id = ${agentId}) as total,
        v.violating, v.violations
      from (
        select count(*) as violating,
               coalesce(sum(json_array_length(body -> 'verification' -> 'violations')), 0) as violations
        from traces where agent_id = ${agentId} and (body -> 'verification' ->> 'verified') = 'false'
      ) v`.pipe(
      Effect.map(([row]) => ({
        total: toCount(row?.total),
        violating: toCount(row?.violating),
        violations: toCount(row?.violations)
      })),
      storeError("traceCounts")
    )

  const aipDriftAlerts = (agentId: string, limit: number) =>
    sql<{ body: unknown }>`
      select body from drift_alerts where agent_id = ${agentId} and alert_id not like 'ada-%'
      order by detected_at desc, alert_id limit ${limit}`.pipe(
      Effect.map((rows) => rows.map((row) => row.body as DriftAlert)),
      storeError("aipDriftAlerts")
    )

  return AgentQueries.of({
    agentSummaries,
    nonClearCheckpoints,
    judgedBoundedActions,
    reevaluateCheckpoints,
    violatingTraces,
    updateTraces,
    traceCounts,
    aipDriftAlerts
  })
})

/** The queries on whichever `SqlClient` is provided; the schema must be migrated (see StoreDatabase). */
export const layer: Layer.Layer<AgentQueries, never, SqlClient.SqlClient | SecretKeys> = Layer.effect(
  AgentQueries,
  make
)
