/**
 * GET /v1/agents/{agent_id}/permissions: what the console enables for the caller, answered by the
 * same rules the routes enforce (an Owner kills, an Admin pauses, a Member reads; keys act with their
 * role; an impersonation session reads only), and checked against those routes' own answers.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { ApiHarness, layer as harness } from "./Support.js"

const NONE = { write: false, pause: false, resume: false, kill: false, reactivate: false }
const ALL = { write: true, pause: true, resume: true, kill: true, reactivate: true }

layer(harness(), { timeout: "90 seconds" })("agent permissions API", (it) => {
  it.effect("answers each caller's role and actions on an organization's agent and a personal one", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { admin, agentA, member, orgAgent, orgId, owner, userA } = api.fixtures
      const adminKey = yield* api.createApiKey(admin.userId, { orgId, role: "admin" })
      const memberKey = yield* api.createApiKey(member.userId, { orgId, role: "member" })
      const ADMIN = { write: true, pause: true, resume: true, kill: false, reactivate: false }
      const cases = [
        [orgAgent, { token: owner.token }, "owner", ALL],
        [orgAgent, { token: admin.token }, "admin", ADMIN],
        [orgAgent, { apiKey: adminKey }, "admin", ADMIN],
        [orgAgent, { token: member.token }, "member", NONE],
        [orgAgent, { apiKey: memberKey }, "member", NONE],
        [orgAgent, { token: api.serviceRoleKey }, "service", ALL],
        // The claimer of a personal agent is its Owner.
        [agentA, { token: userA.token }, "owner", ALL]
      ] as const
      for (const [agent, credential, role, may] of cases) {
        const answer = yield* api.call("GET", `/v1/agents/${agent}/permissions`, credential)
        expect(answer, `${role} ${JSON.stringify(credential).slice(0, 30)}`).toMatchObject({ status: 200 })
        expect(answer.body).toEqual({ agent_id: agent, role, may: { read: true, ...may } })
      }
    })
  )

  it.effect("agrees with the routes: what it denies is refused, what it allows goes through", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { admin, member, orgAgent } = api.fixtures
      for (const user of [member, admin]) {
        const { may } = (yield* api.call("GET", `/v1/agents/${orgAgent}/permissions`, { token: user.token })).body
        const kill = yield* api.call("POST", `/v1/agents/${orgAgent}/kill`, { token: user.token })
        expect(kill.status).toBe(may.kill ? 200 : 403)
        const pause = yield* api.call("POST", `/v1/agents/${orgAgent}/pause`, { token: user.token })
        expect(pause.status).toBe(may.pause ? 200 : 403)
        const mode = yield* api.call("PUT", `/v1/agents/${orgAgent}/enforcement`, {
          token: user.token,
          body: { mode: "observe" }
        })
        expect(mode.status).toBe(may.write ? 200 : 403)
      }
    })
  )

  it.effect("an impersonation session reads only", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { agentA, userA } = api.fixtures
      const started = yield* api.call("POST", "/v1/admin/impersonate", {
        token: api.serviceRoleKey,
        body: { user_id: userA.userId, reason: "support" }
      })
      expect(started.status).toBe(201)
      const answer = yield* api.call("GET", `/v1/agents/${agentA}/permissions`, { token: started.body.token })
      expect(answer).toMatchObject({ status: 200, body: { role: "member", may: { read: true, ...NONE } } })
    })
  )

  it.effect("404 for an agent the caller may not see, 401 without credentials", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { agentB, userA } = api.fixtures
      const hidden = yield* api.call("GET", `/v1/agents/${agentB}/permissions`, { token: userA.token })
      expect(hidden).toMatchObject({ status: 404, body: { error: `agent ${agentB} not found` } })
      const missing = yield* api.call("GET", "/v1/agents/agt-nobody/permissions", { token: userA.token })
      expect(missing).toMatchObject({ status: 404, body: { error: "agent agt-nobody not found" } })
      expect((yield* api.call("GET", `/v1/agents/${agentB}/permissions`)).status).toBe(401)
    })
  )
})
