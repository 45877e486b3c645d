/**
 * The recorded data team intelligence reads of a team's members (docs/intelligence.md): verdict
 * counts (`checkpoint_counts`, kept per agent and verdict), drift alerts and tool-policy outcomes of
 * a window (indexed by agent and time), and the tools their traces show them calling. Reads only;
 * each is one query over the members' ids (a team has at most 50).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { json, toCount } from "./Rows.js"
import { type StoreError, storeError } from "./Store.js"

export interface VerdictCounts {
  readonly clear: number
  readonly review_needed: number
  readonly boundary_violation: number
}

/** Distinct tool names read per team: far above any real toolset, and a bound on the policy. */
export const MAX_TOOLS_SEEN = 500

export class TeamIntelligenceInputs extends Context.Tag("candor/adapters/store/TeamIntelligenceInputs")<
  TeamIntelligenceInputs,
  {
    readonly verdictCounts: (
      agentIds: ReadonlyArray<string>
    ) => Effect.Effect<ReadonlyMap<string, VerdictCounts>, StoreError>
    readonly driftAlertsSince: (
      agentIds: ReadonlyArray<string>,
      since: string
    ) => Effect.Effect<ReadonlyMap<string, number>, StoreError>
    /** Per agent: traces of the window, and those whose `context.metadata.policy_verdict` is `fail`. */
    readonly policyOutcomesSince: (
      agentIds: ReadonlyArray<string>,
      since: string
    ) => Effect.Effect<ReadonlyMap<string, { readonly traces: number; readonly failures: number }>, StoreError>
    /** Tool name → the agents whose traces call it (actions of type `execute`), at most MAX_TOOLS_SEEN names. */
    readonly toolsSeen: (
      agentIds: ReadonlyArray<string>
    ) => Effect.Effect<ReadonlyMap<string, ReadonlyArray<string>>, StoreError>
  }
>() {}

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const ids = (agentIds: ReadonlyArray<string>) => json(agentIds)

  return TeamIntelligenceInputs.of({
    verdictCounts: (agentIds) =>
      sql<{ agent_id: string; verdict: string; count: unknown }>`
        select agent_id, verdict, count from checkpoint_counts
        where agent_id in (select value from json_array_elements_text(${ids(agentIds)}::json))`.pipe(
        Effect.map((rows) => {
          const out = new Map<string, { clear: number; review_needed: number; boundary_violation: number }>()
          for (const id of agentIds) out.set(id, { clear: 0, review_needed: 0, boundary_violation: 0 })
          for (const row of rows) {
            const counts = out.get(row.agent_id)
            if (counts !== undefined && row.verdict in counts)
              counts[row.verdict as keyof VerdictCounts] = toCount(row.count)
          }
          return out as ReadonlyMap<string, VerdictCounts>
        }),
        storeError("read the verdict counts")
      ),

    driftAlertsSince: (agentIds, since) =>
      sql<{ agent_id: string; alerts: unknown }>`
        select agent_id, count(*) as alerts from drift_alerts
        where agent_id in (select value from json_array_elements_text(${ids(agentIds)}::json))
          and detected_at >= ${since}::timestamptz
        group by agent_id`.pipe(
        Effect.map((rows) => new Map(rows.map((row) => [row.agent_id, toCount(row.alerts)]))),
        storeError("read the drift alerts")
      ),

    policyOutcomesSince: (agentIds, since) =>
      sql<{ agent_id: string; traces: unknown; failures: unknown }>`
        select agent_id, count(*) as traces,
               count(*) filter (where body->'context'->'metadata'->>'policy_verdict' = 'fail') as failures
        from traces
        where agent_id in (select value from json_array_elements_text(${ids(agentIds)}::json))
          and occurred_at >= ${since}::timestamptz
        group by agent_id`.pipe(
        Effect.map(
          (rows) =>
            new Map(rows.map((row) => [row.agent_id, { traces: toCount(row.traces), failures: toCount(row.failures) }]))
        ),
        storeError("read the policy outcomes")
      ),

    toolsSeen: (agentIds) =>
      sql<{ tool: string; agent_id: string }>`
        with tools as (
          select distinct body->'action'->>'name' as tool, agent_id from traces
          where agent_id in (select value from json_array_elements_text(${ids(agentIds)}::json))
            and body->'action'->>'type' = 'execute'
        ),
        kept as (select distinct tool from tools where tool is not null order by tool limit ${MAX_TOOLS_SEEN})
        select tool, agent_id from tools where tool in (select tool from kept) order by tool, agent_id`.pipe(
        Effect.map((rows) => {
          const out = new Map<string, Array<string>>()
          for (const row of rows) out.set(row.tool, [...(out.get(row.tool) ?? []), row.agent_id])
          return out as ReadonlyMap<string, ReadonlyArray<string>>
        }),
        storeError("read the tools seen")
      )
  })
})

/** On the process's SqlClient. */
export const layer: Layer.Layer<TeamIntelligenceInputs, never, SqlClient.SqlClient> = Layer.effect(
  TeamIntelligenceInputs,
  make
)
