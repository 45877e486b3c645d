/**
 * The agent-data endpoints over HTTP on PostgreSQL (a throwaway database) rather than PGlite: the
 * same SQL, but `pg` hands back int8 as strings and runs statements concurrently, so counts, totals
 * and re-verification writes are checked here end to end once more.
 */
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Store } from "../../adapters/store/Store.js"
import { PROTOCOL_DISCLAIMER } from "../../core/schema/Disclaimer.js"
import { cardFor, seed, withTrace } from "./AgentData.js"
import { ApiHarness, layer as harness } from "./Support.js"
import { layerIntegration } from "../support/Integration.js"

layerIntegration("postgres", harness({ database: "postgres" }), { timeout: "90 seconds" })(
  "agent data API on PostgreSQL",
  (it) => {
    it.effect("lists, counts, re-verifies and summarises", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const store = yield* Store
        const { agentA, userA } = api.fixtures
        const inputs = yield* seed(agentA, 9, (input, i) =>
          i === 4
            ? withTrace(input, (trace) => ({
                ...trace,
                verification: { verified: false, violations: ["UNDECLARED_VALUE"] }
              }))
            : input
        )
        const token = { token: userA.token }

        const agents = yield* api.call("GET", "/v1/agents", token)
        expect(agents.body.agents).toEqual([
          expect.objectContaining({
            agent_id: agentA,
            last_seen: inputs.at(-1)!.checkpoint.timestamp,
            total_checkpoints: 9,
            checkpoint_counts: { clear: 3, review_needed: 3, boundary_violation: 3 }
          })
        ])
        const page = yield* api.call(
          "GET",
          `/v1/agents/${agentA}/checkpoints?limit=2&offset=1&verdict=review_needed`,
          token
        )
        expect(page.body).toEqual({
          checkpoints: [inputs[4]!.checkpoint, inputs[1]!.checkpoint],
          total: 3,
          limit: 2,
          offset: 1
        })
        expect((yield* api.call("GET", `/v1/agents/${agentA}/checkpoints?limit=1001`, token)).status).toBe(400)

        yield* store.putCard(agentA, cardFor(agentA, "card-pg"))
        const aap = yield* api.call("POST", `/v1/agents/${agentA}/reverify`, token)
        expect(aap.body).toMatchObject({
          total_traces_in_batch: 1,
          reverified: 1,
          now_clean: 1,
          still_violating: 0,
          errors: null,
          disclaimer: PROTOCOL_DISCLAIMER
        })
        // Fixture checkpoints' verdicts already follow their concerns: nothing changes, all are kept.
        const aip = yield* api.call("POST", `/v1/agents/${agentA}/reverify/aip`, token)
        expect(aip.body).toMatchObject({
          card_id: "card-pg",
          total_in_batch: 6,
          re_evaluated: 6,
          resolved_to_clear: 0,
          kept_non_clear: 6,
          disclaimer: PROTOCOL_DISCLAIMER
        })

        const integrity = yield* api.call("GET", `/v1/integrity/${agentA}`, token)
        expect(integrity.body).toEqual({
          agent_id: agentA,
          total_traces: 9,
          verified_traces: 9,
          violation_count: 0,
          integrity_score: 1
        })
        const put = yield* api.call("PUT", `/v1/agents/${agentA}/enforcement`, { ...token, body: { mode: "enforce" } })
        expect(put.body).toEqual({ agent_id: agentA, enforcement_mode: "enforce" })
        expect((yield* api.call("GET", `/v1/agents/${agentA}/enforcement`, token)).body.enforcement_mode).toBe(
          "enforce"
        )
      })
    )
  }
)
