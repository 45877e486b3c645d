/**
 * GET and PUT /v1/agents/{agent_id}/enforcement over HTTP: the mode is stored with its governance
 * entry and reaches the gateways (AgentState); Members read it, Owners, Admins and the service-role key set it.
 * PUT /v1/agents/{agent_id}/failure-policy likewise (issue 24).
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { AgentState } from "../../adapters/bus/AgentState.js"
import { GovernanceLog } from "../../adapters/store/GovernanceLog.js"
import { Store } from "../../adapters/store/Store.js"
import { agentGovernanceLog } from "../../core/Governance.js"
import { ApiHarness, layer as harness } from "./Support.js"

layer(harness(), { timeout: "90 seconds" })("enforcement API", (it) => {
  it.effect("reads observe by default, then whatever was set, in any order", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const store = yield* Store
      const state = yield* AgentState
      const { agentA, userA } = api.fixtures
      const read = api.call("GET", `/v1/agents/${agentA}/enforcement`, { token: userA.token })
      expect(yield* read).toMatchObject({ status: 200, body: { agent_id: agentA, enforcement_mode: "observe" } })
      expect(Object.keys((yield* read).body).sort()).toEqual(["agent_id", "enforcement_mode"])

      for (const mode of ["enforce", "nudge", "observe", "enforce"] as const) {
        const put = yield* api.call("PUT", `/v1/agents/${agentA}/enforcement`, { token: userA.token, body: { mode } })
        expect(put).toMatchObject({ status: 200, body: { agent_id: agentA, enforcement_mode: mode } })
        expect((yield* read).body).toEqual({ agent_id: agentA, enforcement_mode: mode })
        expect((yield* store.agentSettings(agentA)).mode).toBe(mode)
        expect((yield* state.get(agentA)).mode).toBe(mode)
      }
      // Each change is in the agent's governance log, by who made it, with the mode before and after.
      const { entries } = yield* (yield* GovernanceLog).entries(agentGovernanceLog(agentA), 0, 100)
      expect(
        entries.map(({ record }) => [record.action, record.actor, record.previous_state, record.new_state])
      ).toEqual([
        ["enforcement.mode", userA.userId, { mode: "observe" }, { mode: "enforce" }],
        ["enforcement.mode", userA.userId, { mode: "enforce" }, { mode: "nudge" }],
        ["enforcement.mode", userA.userId, { mode: "nudge" }, { mode: "observe" }],
        ["enforcement.mode", userA.userId, { mode: "observe" }, { mode: "enforce" }]
      ])
    })
  )

  it.effect("lets Owners, Admins, admin-role keys and the service-role key set it; Members only read", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { admin, member, orgAgent, orgId, owner } = api.fixtures
      const adminKey = yield* api.createApiKey(admin.userId, { orgId, role: "admin" })
      const memberKey = yield* api.createApiKey(member.userId, { orgId, role: "member" })
      const path = `/v1/agents/${orgAgent}/enforcement`
      for (const [credential, mode] of [
        [{ token: owner.token }, "nudge"],
        [{ token: admin.token }, "enforce"],
        [{ apiKey: adminKey }, "observe"],
        [{ token: api.serviceRoleKey }, "nudge"]
      ] as const) {
        const put = yield* api.call("PUT", path, { ...credential, body: { mode } })
        expect(put).toMatchObject({ status: 200, body: { enforcement_mode: mode } })
      }
      for (const credential of [{ token: member.token }, { apiKey: memberKey }]) {
        const refused = yield* api.call("PUT", path, { ...credential, body: { mode: "enforce" } })
        expect(refused.status).toBe(403)
        expect(Object.keys(refused.body)).toEqual(["error"])
        expect((yield* api.call("GET", path, credential)).body).toEqual({
          agent_id: orgAgent,
          enforcement_mode: "nudge"
        })
      }
    })
  )

  it.effect("404 for agents the caller may not see, 400 naming the field, 401 without credentials", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { agentA, agentB, userA, userB } = api.fixtures
      for (const method of ["GET", "PUT"]) {
        const body = method === "PUT" ? { mode: "enforce" } : undefined
        const hidden = yield* api.call(method, `/v1/agents/${agentB}/enforcement`, { token: userA.token, body })
        expect(hidden).toMatchObject({ status: 404, body: { error: `agent ${agentB} not found` } })
        expect(
          (yield* api.call(method, `/v1/agents/unknown-agent/enforcement`, { token: userB.token, body })).status
        ).toBe(404)
        expect((yield* api.call(method, `/v1/agents/${agentA}/enforcement`, { body })).status).toBe(401)
      }
      for (const [body, message] of [
        [{ mode: "block" }, "mode: must be one of observe, nudge, enforce"],
        [{}, "mode"],
        [{ mode: 3 }, "mode"]
      ] as const) {
        const bad = yield* api.call("PUT", `/v1/agents/${agentA}/enforcement`, { token: userA.token, body })
        expect(bad.status).toBe(400)
        expect(bad.body.error).toContain(message)
      }
    })
  )
  it.effect(
    "PUT failure-policy: stored with its governance entry, pushed to the gateways, Owners and Admins only",
    () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const store = yield* Store
        const state = yield* AgentState
        const { admin, member, orgAgent, owner } = api.fixtures
        const path = `/v1/agents/${orgAgent}/failure-policy`
        expect((yield* store.agentSettings(orgAgent)).failure_policy).toBe("fail_open")
        for (const [token, failure_policy] of [
          [owner.token, "fail_closed"],
          [admin.token, "fail_open"],
          [api.serviceRoleKey, "fail_closed"]
        ] as const) {
          const put = yield* api.call("PUT", path, { token, body: { failure_policy } })
          expect(put).toMatchObject({ status: 200, body: { agent_id: orgAgent, failure_policy } })
          expect(Object.keys(put.body).sort()).toEqual(["agent_id", "failure_policy"])
          expect((yield* store.agentSettings(orgAgent)).failure_policy).toBe(failure_policy)
          // Pushed before the API answered: the very next request at a gateway is under it.
          expect((yield* state.get(orgAgent)).failurePolicy).toBe(failure_policy)
        }
        const refused = yield* api.call("PUT", path, { token: member.token, body: { failure_policy: "fail_open" } })
        expect(refused.status).toBe(403)
        expect(Object.keys(refused.body)).toEqual(["error"])
        expect((yield* state.get(orgAgent)).failurePolicy).toBe("fail_closed")
        const { entries } = yield* (yield* GovernanceLog).entries(agentGovernanceLog(orgAgent), 0, 100)
        expect(
          entries
            .filter(({ record }) => record.action === "enforcement.failure_policy")
            .map(({ record }) => [record.actor, record.previous_state, record.new_state])
        ).toEqual([
          [owner.userId, { failure_policy: "fail_open" }, { failure_policy: "fail_closed" }],
          [admin.userId, { failure_policy: "fail_closed" }, { failure_policy: "fail_open" }],
          ["service", { failure_policy: "fail_open" }, { failure_policy: "fail_closed" }]
        ])
        for (const [body, message] of [
          [{ failure_policy: "fail_shut" }, "failure_policy: must be one of fail_open, fail_closed"],
          [{}, "failure_policy"]
        ] as const) {
          const bad = yield* api.call("PUT", path, { token: owner.token, body })
          expect(bad.status).toBe(400)
          expect(bad.body.error).toContain(message)
        }
        const { agentB, userA } = api.fixtures
        expect(
          (yield* api.call("PUT", `/v1/agents/${agentB}/failure-policy`, {
            token: userA.token,
            body: { failure_policy: "fail_closed" }
          })).status
        ).toBe(404)
      })
  )
})
