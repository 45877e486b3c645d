/** GET /v1/traces/{trace_id} over HTTP: the stored AP-Trace for callers who may see its agent, else 404. */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { seed } from "./AgentData.js"
import { ApiHarness, layer as harness } from "./Support.js"

layer(harness(), { timeout: "90 seconds" })("traces API", (it) => {
  it.effect("returns the AP-Trace with the spec's fields", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { agentA, userA } = api.fixtures
      const [input] = yield* seed(agentA, 1)
      const response = yield* api.call("GET", `/v1/traces/${input!.trace.trace_id}`, { token: userA.token })
      expect(response.status).toBe(200)
      expect(response.body).toEqual(input!.trace)
      const trace = response.body
      expect(trace).toMatchObject({ trace_id: input!.trace.trace_id, agent_id: agentA })
      expect(trace.action).toEqual({ type: "execute", name: "reply", category: "bounded" })
      expect(trace.decision).toMatchObject({
        selected: "reply",
        selection_reasoning: expect.any(String),
        values_applied: ["honesty"]
      })
      expect(trace.verification).toEqual({ verified: true, violations: [] })
      expect(Date.parse(trace.timestamp)).not.toBeNaN()
      expect(Date.parse(trace.created_at)).not.toBeNaN()
    })
  )

  it.effect("answers 404 alike for unknown traces and for traces of agents the caller may not see", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { agentB, member, userA, userB } = api.fixtures
      const [input] = yield* seed(agentB, 1)
      const id = input!.trace.trace_id
      expect((yield* api.call("GET", `/v1/traces/${id}`, { token: userB.token })).status).toBe(200)
      for (const token of [userA.token, member.token]) {
        const hidden = yield* api.call("GET", `/v1/traces/${id}`, { token })
        expect(hidden).toMatchObject({ status: 404, body: { error: `trace ${id} not found` } })
      }
      const unknown = yield* api.call("GET", "/v1/traces/tr-unknown", { token: userA.token })
      expect(unknown).toMatchObject({ status: 404, body: { error: "trace tr-unknown not found" } })
      expect((yield* api.call("GET", `/v1/traces/${id}`, { token: api.serviceRoleKey })).status).toBe(200)
      expect((yield* api.call("GET", `/v1/traces/${id}`)).status).toBe(401)
    })
  )
})
