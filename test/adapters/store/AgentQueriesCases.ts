/**
 * The API's agent-data queries' cases, run in the repository conformance suite
 * (RepositoryConformance.ts) on PGlite and PostgreSQL, beside the store that wrote the rows:
 * summaries, re-verification batches, and that re-evaluating checkpoints keeps the per-verdict
 * counters (the checkpoint list's `total`) in step with the rows, even when two re-evaluations of
 * the same checkpoints race.
 */
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as AgentQueries from "../../../adapters/store/AgentQueries.js"
import { type CommitInput, Store } from "../../../adapters/store/Store.js"
import { VERDICTS } from "../../../core/schema/Verdict.js"
import { fresh, makeInputs, uniqueId } from "./Fixtures.js"

/** Traces of odd positions fail verification (two violation types each). */
const withViolations = (inputs: ReadonlyArray<CommitInput>) =>
  inputs.map((input, i) =>
    i % 2 === 0
      ? input
      : {
          ...input,
          trace: {
            ...input.trace,
            verification: { verified: false, violations: ["UNBOUNDED_ACTION", "UNDECLARED_VALUE"] }
          }
        }
  )

const seed = (count: number) =>
  Effect.gen(function* () {
    const store = yield* Store
    const agentId = uniqueId("agent")
    const { inputs } = makeInputs(agentId, fresh(agentId), count)
    const committed = withViolations(inputs)
    expect(yield* store.commitBatch(committed)).toEqual({ _tag: "Committed" })
    return { agentId, inputs: committed }
  })

/** The list's totals (from the counters) against a count of the rows, per verdict. */
const expectCountersMatchRows = (agentId: string) =>
  Effect.gen(function* () {
    const store = yield* Store
    for (const verdict of VERDICTS) {
      const counted = yield* store.listCheckpoints({ agentId, limit: 1000, offset: 0, verdict })
      expect(counted.total).toBe(counted.items.length)
    }
  })

export const summaries = Effect.gen(function* () {
  const queries = yield* AgentQueries.AgentQueries
  const store = yield* Store
  const { agentId, inputs } = yield* seed(7)
  yield* store.putAgentSettings(agentId, {
    mode: "enforce",
    containment: { status: "paused", reason: "r", contained_at: "2026-11-01T00:00:00.000Z", contained_by: "system" }
  })
  const stranger = uniqueId("unseen")
  const summaries = yield* queries.agentSummaries([stranger, agentId, agentId])
  expect(summaries).toEqual([
    {
      agent_id: agentId,
      status: "paused",
      enforcement_mode: "enforce",
      card_id: null,
      last_seen: inputs.at(-1)!.checkpoint.timestamp,
      checkpoint_counts: { clear: 3, review_needed: 2, boundary_violation: 2 },
      claimed: false,
      visibility: "unlisted",
      org_id: null,
      org_name: null,
      display_name: null,
      reputation: null
    },
    {
      agent_id: stranger,
      status: "active",
      enforcement_mode: "observe",
      card_id: null,
      last_seen: null,
      checkpoint_counts: { clear: 0, review_needed: 0, boundary_violation: 0 },
      claimed: false,
      visibility: "unlisted",
      org_id: null,
      org_name: null,
      display_name: null,
      reputation: null
    }
  ])
  expect(yield* queries.agentSummaries([])).toEqual([])
})

export const namesByFirstLabel = Effect.gen(function* () {
  const queries = yield* AgentQueries.AgentQueries
  const store = yield* Store
  const commit = (agentId: string, label: string, count: number) =>
    Effect.gen(function* () {
      const { inputs } = makeInputs(agentId, yield* store.loadLogState(agentId), count)
      const labelled = inputs.map((input) => ({ ...input, agentName: label }))
      expect(yield* store.commitBatch(labelled)).toEqual({ _tag: "Committed" })
    })
  const seen = uniqueId("agent")
  const settled = uniqueId("agent")
  // Its settings row before any checkpoint (an enforcement mode set ahead of traffic).
  yield* store.putAgentSettings(settled, { mode: "nudge" })
  yield* commit(seen, "first", 2)
  yield* commit(settled, "settled", 1)
  yield* commit(seen, "later", 2)
  const named = yield* queries.agentSummaries([seen, settled])
  expect(named.map((agent) => [agent.agent_id, agent.display_name, agent.enforcement_mode]).sort()).toEqual(
    [
      [seen, "first", "observe"],
      [settled, "settled", "nudge"]
    ].sort()
  )
})

export const pagesAndCounts = Effect.gen(function* () {
  const queries = yield* AgentQueries.AgentQueries
  const { agentId, inputs } = yield* seed(9)
  const nonClear = inputs
    .filter((input) => input.checkpoint.verdict !== "clear")
    .map((input) => input.checkpoint.checkpoint_id)
    .reverse()
  const page1 = yield* queries.nonClearCheckpoints(agentId, 4, 0)
  const page2 = yield* queries.nonClearCheckpoints(agentId, 4, 4)
  expect([...page1, ...page2].map((c) => c.checkpoint_id)).toEqual(nonClear)

  const violating = inputs
    .filter((_, i) => i % 2 === 1)
    .map((input) => input.trace.trace_id)
    .reverse()
  expect((yield* queries.violatingTraces(agentId, 40, 0)).map((t) => t.trace_id)).toEqual(violating)
  expect((yield* queries.violatingTraces(agentId, 2, 1)).map((t) => t.trace_id)).toEqual(violating.slice(1, 3))
  expect(yield* queries.traceCounts(agentId)).toEqual({ total: 9, violating: 4, violations: 8 })

  // A trace made clean leaves the violating set and the counts.
  const [first] = yield* queries.violatingTraces(agentId, 1, 0)
  expect(yield* queries.updateTraces([{ ...first!, verification: { verified: true, violations: [] } }])).toBe(1)
  expect(yield* queries.traceCounts(agentId)).toEqual({ total: 9, violating: 3, violations: 6 })
  expect((yield* (yield* Store).getTrace(first!.trace_id))?.verification).toEqual({
    verified: true,
    violations: []
  })
})

export const concurrentReevaluation = Effect.gen(function* () {
  const queries = yield* AgentQueries.AgentQueries
  const store = yield* Store
  const { agentId } = yield* seed(12)
  const batch = yield* queries.nonClearCheckpoints(agentId, 40, 0)
  const changes = batch.map((checkpoint) => ({
    previous: checkpoint.verdict,
    checkpoint: {
      ...checkpoint,
      verdict: "clear" as const,
      re_evaluated_at: "2026-11-02T00:00:00.000Z",
      original_verdict: checkpoint.verdict
    }
  }))
  const [a, b] = yield* Effect.all([queries.reevaluateCheckpoints(changes), queries.reevaluateCheckpoints(changes)], {
    concurrency: 2
  })
  // Each checkpoint moved by exactly one of the two calls.
  expect([...a!, ...b!].sort()).toEqual(batch.map((c) => c.checkpoint_id).sort())
  expect(yield* queries.nonClearCheckpoints(agentId, 40, 0)).toEqual([])
  yield* expectCountersMatchRows(agentId)
  expect((yield* store.listCheckpoints({ agentId, limit: 1, offset: 0 })).total).toBe(12)
  const stored = yield* store.getCheckpoint(batch[0]!.checkpoint_id)
  expect(stored).toMatchObject({
    verdict: "clear",
    original_verdict: batch[0]!.verdict,
    re_evaluated_at: "2026-11-02T00:00:00.000Z"
  })
  expect((yield* queries.agentSummaries([agentId]))[0]?.checkpoint_counts).toEqual({
    clear: 12,
    review_needed: 0,
    boundary_violation: 0
  })
})

export const aipDriftAlertsOnly = Effect.gen(function* () {
  const store = yield* Store
  const queries = yield* AgentQueries.AgentQueries
  const agentId = uniqueId("agent")
  const { inputs } = makeInputs(agentId, fresh(agentId), 3)
  const withAlerts = inputs.map((input, i) => ({
    ...input,
    alerts: [
      {
        alert_id: `${i === 1 ? "ada" : "ida"}-${i}${agentId}`,
        agent_id: agentId,
        session_id: "s",
        checkpoint_ids: [input.checkpoint.checkpoint_id],
        sustained_checks: 3,
        severity: "low" as const,
        drift_direction: "unknown",
        message: "m",
        detection_timestamp: input.checkpoint.timestamp
      }
    ]
  }))
  expect(yield* store.commitBatch(withAlerts)).toEqual({ _tag: "Committed" })
  const alerts = yield* queries.aipDriftAlerts(agentId, 10)
  expect(alerts.map((alert) => alert.alert_id)).toEqual([`ida-2${agentId}`, `ida-0${agentId}`])
})
