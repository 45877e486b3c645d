/**
 * GET /v1/drift/{agent_id} (AAP drift of the agent's traces), GET /v1/agents/{agent_id}/drift/aip
 * (stored AIP alerts) and GET /v1/ssm/{agent_id} (pairwise behavioural similarity) over HTTP.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { APTrace } from "../../core/schema/Trace.js"
import { seed, withTrace } from "./AgentData.js"
import { ApiHarness, layer as harness } from "./Support.js"

/** Shares no behavioural feature with the fixtures' `execute reply` traces. */
const drifted = (trace: APTrace): APTrace => ({
  ...trace,
  action: { type: "recommend", name: "transfer_funds", category: "escalation_trigger" },
  decision: {
    ...trace.decision,
    values_applied: ["speed"],
    alternatives_considered: [
      { option_id: "a", description: "a" },
      { option_id: "b", description: "b" }
    ]
  },
  escalation: { evaluated: true, required: true, reason: "amount" }
})

layer(harness(), { timeout: "90 seconds" })("drift and ssm API", (it) => {
  it.effect("AAP drift: similarities to the baseline and an alert for a sustained streak", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { agentA, userA } = api.fixtures
      const inputs = yield* seed(agentA, 15, (input, i) => (i >= 12 ? withTrace(input, drifted) : input))
      const response = yield* api.call("GET", `/v1/drift/${agentA}`, { token: userA.token })
      expect(response.status).toBe(200)
      expect(Object.keys(response.body).sort()).toEqual(["agent_id", "analyzed_traces", "drift"])
      const { drift } = response.body
      expect(response.body).toMatchObject({ agent_id: agentA, analyzed_traces: 15 })
      // The batch baseline of 15 traces is its oldest 3 (max(3, min(10, 15 / 4))).
      expect(drift).toMatchObject({ baseline_size: 3, similarity_threshold: 0.3, sustained_traces: 3 })
      expect(drift.similarities).toEqual(
        inputs.slice(3).map((input, i) => ({ trace_id: input.trace.trace_id, similarity: i + 3 >= 12 ? 0 : 1 }))
      )
      expect(drift.mean_similarity).toBe(0.75)
      expect(drift.alerts).toHaveLength(1)
      const [{ alert, indicators }] = drift.alerts
      expect(alert).toMatchObject({
        agent_id: agentA,
        alert_id: expect.stringMatching(/^ada-[0-9a-f]{32}$/),
        trace_ids: inputs.slice(12).map((input) => input.trace.trace_id),
        sustained_checks: 3,
        severity: "high",
        drift_direction: expect.any(String),
        message: expect.any(String)
      })
      expect(indicators.length).toBeGreaterThan(0)
      expect(indicators[0]).toEqual({
        indicator: expect.any(String),
        baseline: expect.any(Number),
        current: expect.any(Number),
        description: expect.any(String)
      })
    })
  )

  it.effect("AAP drift of an agent without traces is empty", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { orgAgent, member } = api.fixtures
      const response = yield* api.call("GET", `/v1/drift/${orgAgent}`, { token: member.token })
      expect(response.body).toEqual({
        agent_id: orgAgent,
        analyzed_traces: 0,
        drift: {
          baseline_size: 0,
          similarity_threshold: 0.3,
          sustained_traces: 3,
          mean_similarity: null,
          similarities: [],
          alerts: []
        }
      })
    })
  )

  it.effect("AIP alerts: the stored ones, newest first, without the AAP ones", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { agentB, userB } = api.fixtures
      const inputs = yield* seed(
        agentB,
        3,
        (input, i) =>
          i === 1
            ? { ...input, alerts: input.alerts.map((alert) => ({ ...alert, alert_id: `ada-${alert.alert_id}` })) }
            : input,
        { alerts: true }
      )
      const response = yield* api.call("GET", `/v1/agents/${agentB}/drift/aip`, { token: userB.token })
      expect(response.status).toBe(200)
      expect(response.body).toEqual({ alerts: [inputs[2]!.alerts[0], inputs[0]!.alerts[0]], agent_id: agentB })
      const alert = response.body.alerts[0]
      for (const field of [
        "alert_id",
        "agent_id",
        "session_id",
        "checkpoint_ids",
        "sustained_checks",
        "severity",
        "drift_direction",
        "message",
        "detection_timestamp"
      ]) {
        expect(alert).toHaveProperty(field)
      }
      const none = yield* api.call("GET", `/v1/agents/${api.fixtures.agentA}/drift/aip`, {
        token: api.fixtures.userA.token
      })
      expect(none.body).toEqual({ alerts: [], agent_id: api.fixtures.agentA })
    })
  )

  it.effect("SSM: each trace with its similarity to every trace, oldest first", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { userA } = api.fixtures
      const agent = yield* api.claimAgent({ userId: userA.userId })
      const inputs = yield* seed(agent, 3, (input, i) => (i === 2 ? withTrace(input, drifted) : input))
      const response = yield* api.call("GET", `/v1/ssm/${agent}`, { token: userA.token })
      expect(response.status).toBe(200)
      expect(response.body).toEqual({
        agent_id: agent,
        trace_count: 3,
        traces: [
          { similarities: [1, 1, 0], mean_similarity: 0.5 },
          { similarities: [1, 1, 0], mean_similarity: 0.5 },
          { similarities: [0, 0, 1], mean_similarity: 0 }
        ].map((row, i) => ({
          trace_id: inputs[i]!.trace.trace_id,
          timestamp: inputs[i]!.trace.timestamp,
          action: inputs[i]!.trace.action,
          verified: true,
          ...row
        }))
      })
      const empty = yield* api.claimAgent({ userId: userA.userId })
      expect((yield* api.call("GET", `/v1/ssm/${empty}`, { token: userA.token })).body).toEqual({
        agent_id: empty,
        trace_count: 0,
        traces: []
      })
    })
  )

  it.effect("404 for agents the caller may not see, 401 without credentials", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { agentA, agentB, userA } = api.fixtures
      for (const path of [`/v1/drift/${agentB}`, `/v1/agents/${agentB}/drift/aip`, `/v1/ssm/${agentB}`]) {
        expect(yield* api.call("GET", path, { token: userA.token })).toMatchObject({
          status: 404,
          body: { error: `agent ${agentB} not found` }
        })
      }
      for (const path of [`/v1/drift/${agentA}`, `/v1/agents/${agentA}/drift/aip`, `/v1/ssm/${agentA}`]) {
        expect((yield* api.call("GET", path)).status).toBe(401)
        expect((yield* api.call("GET", path, { token: api.serviceRoleKey })).status).toBe(200)
      }
    })
  )
})
