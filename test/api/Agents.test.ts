/**
 * GET /v1/agents over HTTP: each caller sees exactly the agents of their own and of their
 * organizations (an organization key: its organization's; the service-role key: every agent,
 * claimed or not), each with its status, enforcement mode, card, last activity, checkpoint counts
 * and whether it is claimed.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"
import { agentIdOf } from "../../adapters/gateway/AgentIdentity.js"
import { sha256Hex } from "../../adapters/providers/Identity.js"
import { Store } from "../../adapters/store/Store.js"
import { cardFor, seed } from "./AgentData.js"
import { ApiHarness, layer as harness } from "./Support.js"

const ids = (body: { agents: ReadonlyArray<{ agent_id: string }> }) => body.agents.map((agent) => agent.agent_id).sort()

layer(harness(), { timeout: "90 seconds" })("agents API", (it) => {
  it.effect("lists an agent with its settings, card, last activity and counts", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const store = yield* Store
      const { userA } = api.fixtures
      const agent = yield* api.claimAgent({ userId: userA.userId })
      const inputs = yield* seed(agent, 5)
      yield* store.putCard(agent, cardFor(agent, "card-listed"))
      yield* store.putAgentSettings(agent, {
        mode: "nudge",
        containment: {
          status: "paused",
          reason: "test",
          contained_at: "2026-11-01T00:00:00.000Z",
          contained_by: "system"
        }
      })

      const response = yield* api.call("GET", "/v1/agents", { token: userA.token })
      expect(response.status).toBe(200)
      expect(Object.keys(response.body)).toEqual(["agents"])
      expect(response.body.agents.find((a: { agent_id: string }) => a.agent_id === agent)).toEqual({
        agent_id: agent,
        status: "paused",
        enforcement_mode: "nudge",
        card_id: "card-listed",
        last_seen: inputs.at(-1)!.checkpoint.timestamp,
        total_checkpoints: 5,
        checkpoint_counts: { clear: 2, review_needed: 2, boundary_violation: 1 },
        claimed: true,
        visibility: "unlisted",
        org_id: null,
        reputation: null
      })
      // Never seen by the gateway: the defaults, not an error.
      expect(response.body.agents.find((a: { agent_id: string }) => a.agent_id === api.fixtures.agentA)).toEqual({
        agent_id: api.fixtures.agentA,
        status: "active",
        enforcement_mode: "observe",
        card_id: null,
        last_seen: null,
        total_checkpoints: 0,
        checkpoint_counts: { clear: 0, review_needed: 0, boundary_violation: 0 },
        claimed: true,
        visibility: "unlisted",
        org_id: null,
        reputation: null
      })
      // Newest activity first.
      expect(response.body.agents[0].agent_id).toBe(agent)
    })
  )

  it.effect("shows each caller only what they may see", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { admin, agentA, agentB, member, orgAgent, orgId, owner, userA, userB } = api.fixtures
      const asUser = (token: string) => Effect.map(api.call("GET", "/v1/agents", { token }), (r) => ids(r.body))

      expect(yield* asUser(userA.token)).toContain(agentA)
      expect(yield* asUser(userA.token)).not.toContain(orgAgent)
      expect(yield* asUser(userA.token)).not.toContain(agentB)
      for (const user of [owner, admin, member]) expect(yield* asUser(user.token)).toEqual([orgAgent])
      expect(yield* asUser(userB.token)).toEqual([agentB])
      const stranger = yield* api.freshUser
      expect(yield* asUser(stranger.token)).toEqual([])

      const orgKey = yield* api.createApiKey(member.userId, { orgId, role: "member" })
      expect(ids((yield* api.call("GET", "/v1/agents", { apiKey: orgKey })).body)).toEqual([orgAgent])
      const personalKey = yield* api.createApiKey(userB.userId)
      expect(ids((yield* api.call("GET", "/v1/agents", { apiKey: personalKey })).body)).toEqual([agentB])

      const all = ids((yield* api.call("GET", "/v1/agents", { token: api.serviceRoleKey })).body)
      expect(all).toEqual(expect.arrayContaining([agentA, agentB, orgAgent]))
    })
  )

  it.effect("the service-role key also sees agents nobody claimed, flagged claimed: false", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { agentA, userA } = api.fixtures
      // Traffic through the gateway commits checkpoints for an agent before anyone claims it.
      const unclaimed = agentIdOf(sha256Hex(`sk-unclaimed-${randomUUID()}`), undefined)
      yield* seed(unclaimed, 2)

      const service = yield* api.call("GET", "/v1/agents", { token: api.serviceRoleKey })
      expect(service.status).toBe(200)
      const listed = service.body.agents.find((a: { agent_id: string }) => a.agent_id === unclaimed)
      expect(listed).toMatchObject({ agent_id: unclaimed, claimed: false, total_checkpoints: 2 })
      expect(service.body.agents.find((a: { agent_id: string }) => a.agent_id === agentA)).toMatchObject({
        claimed: true
      })

      const user = yield* api.call("GET", "/v1/agents", { token: userA.token })
      expect(ids(user.body)).not.toContain(unclaimed)
      expect(user.body.agents.every((a: { claimed: boolean }) => a.claimed)).toBe(true)
    })
  )

  it.effect("needs credentials", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const none = yield* api.call("GET", "/v1/agents")
      expect(none.status).toBe(401)
      expect(Object.keys(none.body)).toEqual(["error"])
      const expired = yield* api.token(api.fixtures.userA.userId, {
        issuedAt: Math.floor(Date.now() / 1000) - 7200,
        ttlSeconds: 60
      })
      expect((yield* api.call("GET", "/v1/agents", { token: expired })).status).toBe(401)
      expect((yield* api.call("GET", "/v1/agents", { apiKey: "cnd_not_a_key" })).status).toBe(401)
    })
  )

  it.effect("carries the organization and the current reputation grade (the console's fleet page)", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { orgId, owner } = api.fixtures
      const agent = yield* api.claimAgent({ userId: owner.userId, orgId })
      yield* Effect.orDie(seed(agent, 60))
      const published = (yield* api.call("GET", `/v1/reputation/${agent}`, { token: owner.token })).body
      expect(published.grade).toEqual(expect.any(String))
      const listed = (yield* api.call("GET", "/v1/agents", { token: owner.token })).body.agents.find(
        (a: { agent_id: string }) => a.agent_id === agent
      )
      expect(listed).toMatchObject({
        org_id: orgId,
        reputation: { score: published.score, grade: published.grade, is_eligible: published.is_eligible }
      })
    })
  )
})
