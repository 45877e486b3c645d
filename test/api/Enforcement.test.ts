/**
 * GET and PUT /v1/agents/{agent_id}/enforcement over HTTP: the mode is stored with its governance
 * entry and reaches the gateways (AgentState); Members read it, Owners, Admins and the service-role key set it.
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
})
