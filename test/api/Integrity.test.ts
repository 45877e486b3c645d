/** GET /v1/integrity/{agent_id} over HTTP: trace verification counts and the score they make. */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { seed, withTrace } from "./AgentData.js"
import { ApiHarness, layer as harness } from "./Support.js"

layer(harness(), { timeout: "90 seconds" })("integrity API", (it) => {
  it.effect("counts traces, verified ones and violations; the score is their ratio", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { member, orgAgent } = api.fixtures
      const violations = [[], ["UNBOUNDED_ACTION"], [], ["FORBIDDEN_ACTION", "UNDECLARED_VALUE"]]
      yield* seed(orgAgent, 4, (input, i) =>
        withTrace(input, (trace) => ({
          ...trace,
          verification: { verified: violations[i]!.length === 0, violations: violations[i]! }
        }))
      )
      const response = yield* api.call("GET", `/v1/integrity/${orgAgent}`, { token: member.token })
      expect(response.status).toBe(200)
      expect(response.body).toEqual({
        agent_id: orgAgent,
        total_traces: 4,
        verified_traces: 2,
        violation_count: 3,
        integrity_score: 0.5
      })
    })
  )

  it.effect("scores an agent without traces 1", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { agentA, userA } = api.fixtures
      const response = yield* api.call("GET", `/v1/integrity/${agentA}`, { token: userA.token })
      expect(response.body).toEqual({
        agent_id: agentA,
        total_traces: 0,
        verified_traces: 0,
        violation_count: 0,
        integrity_score: 1
      })
    })
  )

  it.effect("404 for agents the caller may not see, 401 without credentials", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { agentA, agentB, userA, userB } = api.fixtures
      expect(yield* api.call("GET", `/v1/integrity/${agentB}`, { token: userA.token })).toMatchObject({
        status: 404,
        body: { error: `agent ${agentB} not found` }
      })
      expect((yield* api.call("GET", `/v1/integrity/nobody`, { token: userB.token })).status).toBe(404)
      expect((yield* api.call("GET", `/v1/integrity/${agentA}`)).status).toBe(401)
    })
  )
})
