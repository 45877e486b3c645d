/**
 * GET /v1/agents over HTTP: each caller sees exactly the agents of their own and of their
 * organizations (an organization key: its organization's; the service-role key: every agent,
 * claimed or not), each with its status, enforcement mode, card, last activity, checkpoint counts
 * and whether it is claimed. GET and PATCH /v1/agents/{agent_id}: one agent, and its display name
 * (the gateway's label by default), never on a public route.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"
import { agentIdOf } from "../../adapters/gateway/AgentIdentity.js"
import { sha256Hex } from "../../adapters/providers/Identity.js"
import { GovernanceLog } from "../../adapters/store/GovernanceLog.js"
import { Store } from "../../adapters/store/Store.js"
import { agentGovernanceLog } from "../../core/Governance.js"
import { PUBLIC_ROUTES } from "../../src/http/PublicRoutes.js"
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
        display_name: null,
        status: "paused",
        enforcement_mode: "nudge",
        card_id: "card-listed",
        last_seen: inputs.at(-1)!.checkpoint.timestamp,
        total_checkpoints: 5,
        checkpoint_counts: { clear: 2, review_needed: 2, boundary_violation: 1 },
        claimed: true,
        visibility: "unlisted",
        org_id: null,
        org_name: null,
        reputation: null
      })
      // Never seen by the gateway: the defaults, not an error.
      expect(response.body.agents.find((a: { agent_id: string }) => a.agent_id === api.fixtures.agentA)).toEqual({
        agent_id: api.fixtures.agentA,
        display_name: null,
        status: "active",
        enforcement_mode: "observe",
        card_id: null,
        last_seen: null,
        total_checkpoints: 0,
        checkpoint_counts: { clear: 0, review_needed: 0, boundary_violation: 0 },
        claimed: true,
        visibility: "unlisted",
        org_id: null,
        org_name: null,
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

  /** Checkpoints of the agent committed as the worker commits a gateway event carrying `x-candor-agent: label`. */
  const seenAs = (agentId: string, label: string, count = 2) =>
    seed(agentId, count, (input) => ({ ...input, agentName: label }))

  const rename = (agentId: string, token: string, body: unknown) =>
    Effect.flatMap(ApiHarness, (api) => api.call("PATCH", `/v1/agents/${agentId}`, { token, body }))

  it.effect("the gateway's label is the default name; Owner and Admin rename, null falls back to the label", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { admin, member, orgId, owner, userB } = api.fixtures
      const agent = yield* api.claimAgent({ userId: owner.userId, orgId })
      const orgName = (yield* api.call("GET", `/v1/orgs/${orgId}`, { token: owner.token })).body.name
      expect(orgName).toEqual(expect.any(String))
      const one = (token: string) => api.call("GET", `/v1/agents/${agent}`, { token })

      expect((yield* one(member.token)).body).toMatchObject({ agent_id: agent, display_name: null, org_name: orgName })
      yield* seenAs(agent, "billing-bot")
      const seen = yield* one(member.token)
      expect(seen.status).toBe(200)
      expect(seen.body).toMatchObject({
        agent_id: agent,
        display_name: "billing-bot",
        org_id: orgId,
        org_name: orgName
      })

      const renamed = yield* rename(agent, admin.token, { display_name: "  Billing Bot (EU)  ", ignored: true })
      expect(renamed.status, JSON.stringify(renamed.body)).toBe(200)
      expect(renamed.body).toMatchObject({ agent_id: agent, display_name: "Billing Bot (EU)", org_name: orgName })
      // Every reader sees it where the console reads agents: the list and the agent.
      const listed = (yield* api.call("GET", "/v1/agents", { token: member.token })).body.agents.find(
        (a: { agent_id: string }) => a.agent_id === agent
      )
      expect(listed).toMatchObject({ display_name: "Billing Bot (EU)", org_name: orgName })
      expect((yield* one(member.token)).body).toEqual(listed)

      expect((yield* rename(agent, member.token, { display_name: "Member's" })).status).toBe(403)
      expect((yield* rename(agent, userB.token, { display_name: "Other org" })).status).toBe(404)
      expect((yield* api.call("GET", `/v1/agents/${agent}`, { token: userB.token })).status).toBe(404)
      const cleared = yield* rename(agent, owner.token, { display_name: null })
      expect(cleared).toMatchObject({ status: 200, body: { display_name: "billing-bot" } })

      const log = yield* Effect.orDie((yield* GovernanceLog).entries(agentGovernanceLog(agent), 0, 100))
      expect(
        log.entries
          .filter((entry) => entry.record.action === "agent.display_name")
          .map(({ record }) => [record.actor, record.previous_state, record.new_state])
      ).toEqual([
        [admin.userId, { display_name: null }, { display_name: "Billing Bot (EU)" }],
        [owner.userId, { display_name: "Billing Bot (EU)" }, { display_name: null }]
      ])
    })
  )

  it.effect("a personal agent's claimer names it; an unclaimed agent only the service-role key", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { agentA, userA } = api.fixtures
      const named = yield* rename(agentA, userA.token, { display_name: "Mine" })
      expect(named).toMatchObject({ status: 200, body: { display_name: "Mine", org_id: null, org_name: null } })
      const unclaimed = agentIdOf(sha256Hex(`sk-unclaimed-${randomUUID()}`), "worker-7")
      yield* seenAs(unclaimed, "worker-7", 1)
      expect((yield* rename(unclaimed, userA.token, { display_name: "Not mine" })).status).toBe(404)
      const byService = yield* rename(unclaimed, api.serviceRoleKey, { display_name: "Operator's" })
      expect(byService).toMatchObject({ status: 200, body: { display_name: "Operator's", claimed: false } })
    })
  )

  it.effect("refuses a display name that is not 1 to 100 characters of text with 400 {error}", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { orgId, owner } = api.fixtures
      const agent = yield* api.claimAgent({ userId: owner.userId, orgId })
      for (const body of [
        {},
        { display_name: "" },
        { display_name: "   " },
        { display_name: "x".repeat(101) },
        { display_name: 42 },
        { display_name: ["a"] },
        { display_name: "line\nbreak" },
        { display_name: "nul\u0000" },
        { display_name: "del\u007f" },
        { display_name: "\u202egnp.exe" },
        { display_name: "sep\u2028arator" },
        { display_name: "lone \ud800" }
      ]) {
        const refused = yield* rename(agent, owner.token, body)
        expect(refused.status, JSON.stringify(body)).toBe(400)
        expect(Object.keys(refused.body)).toEqual(["error"])
        expect(refused.body.error).toContain("display_name")
      }
      expect((yield* api.call("GET", `/v1/agents/${agent}`, { token: owner.token })).body.display_name).toBeNull()
      const longest = "é".repeat(100)
      expect((yield* rename(agent, owner.token, { display_name: longest })).body.display_name).toBe(longest)
      // Text, not markup: stored and answered as sent.
      const markup = `<img src=x onerror=alert(1)> "Ünïcode" 🤖`
      expect((yield* rename(agent, owner.token, { display_name: markup })).body.display_name).toBe(markup)
    })
  )

  it.effect("the default name is the label of the agent's first checkpoint, also when the agent row came first", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { orgId, owner } = api.fixtures
      const agent = yield* api.claimAgent({ userId: owner.userId, orgId })
      // Its settings row exists before any traffic.
      const put = yield* api.call("PUT", `/v1/agents/${agent}/enforcement`, {
        token: owner.token,
        body: { mode: "nudge" }
      })
      expect(put.status).toBe(200)
      yield* seenAs(agent, "first-label")
      // Only the chain head's insert writes it: later batches do not touch the agents row.
      yield* seenAs(agent, "later-label")
      const read = yield* api.call("GET", `/v1/agents/${agent}`, { token: owner.token })
      expect(read.body).toMatchObject({ display_name: "first-label", enforcement_mode: "nudge", total_checkpoints: 4 })
      // Named by hand before its first request: the name stays, the label is kept beneath it.
      const early = yield* api.claimAgent({ userId: owner.userId, orgId })
      expect((yield* rename(early, owner.token, { display_name: "Early" })).status).toBe(200)
      yield* seenAs(early, "early-label")
      expect((yield* api.call("GET", `/v1/agents/${early}`, { token: owner.token })).body.display_name).toBe("Early")
      expect((yield* rename(early, owner.token, { display_name: null })).body.display_name).toBe("early-label")
    })
  )

  it.effect("a claim naming the agent_name gives the unseen agent that label as its default name", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { userA } = api.fixtures
      const providerKey = `sk-claim-${randomUUID()}`
      const claim = (agentName?: string) =>
        api.call("POST", "/v1/agents/claim", {
          token: userA.token,
          body: { provider_key: providerKey, ...(agentName === undefined ? {} : { agent_name: agentName }) }
        })
      const named = yield* claim("support bot #2")
      expect(named.status, JSON.stringify(named.body)).toBe(200)
      expect(named.body.agent_id).toBe(agentIdOf(sha256Hex(providerKey), "support bot #2"))
      const read = yield* api.call("GET", `/v1/agents/${named.body.agent_id}`, { token: userA.token })
      expect(read.body).toMatchObject({ display_name: "support bot #2", last_seen: null })
      // The key's unnamed agent has no label: no name.
      const unnamed = yield* claim()
      expect(
        (yield* api.call("GET", `/v1/agents/${unnamed.body.agent_id}`, { token: userA.token })).body
      ).toMatchObject({ display_name: null })
    })
  )

  it.effect("no public route carries the name, not even of a public agent", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { orgId, owner } = api.fixtures
      const agent = yield* api.claimAgent({ userId: owner.userId, orgId })
      const label = `label-${randomUUID().slice(0, 8)}`
      const name = `Name ${randomUUID().slice(0, 8)}`
      const inputs = yield* seenAs(agent, label, 3)
      expect((yield* rename(agent, owner.token, { display_name: name })).status).toBe(200)
      const visibility = yield* api.call("PUT", `/v1/agents/${agent}/visibility`, {
        token: owner.token,
        body: { visibility: "public" }
      })
      expect(visibility.status).toBe(200)
      // The name is there for the agent's readers...
      expect((yield* api.call("GET", `/v1/agents/${agent}`, { token: owner.token })).body.display_name).toBe(name)
      // ...and on no public route, anonymous or with the owner's own credential.
      const ids = { agent, checkpoint: inputs[0]!.checkpoint.checkpoint_id, team: "team-none" }
      let answered = 0
      for (const route of PUBLIC_ROUTES) {
        if (route.method !== "GET" || route.path.includes("*") || route.path === "/metrics") continue
        const path = route.path
          .replace(":agent_id", ids.agent)
          .replace(":checkpoint_id", ids.checkpoint)
          .replace(":team_id", ids.team)
          .concat(route.path.endsWith("/consistency-proof") ? "?from=1" : "")
        for (const token of [undefined, owner.token]) {
          const res = yield* api.call("GET", path, { token })
          const text = typeof res.body === "string" ? res.body : JSON.stringify(res.body)
          expect(text, `GET ${path}`).not.toContain(name)
          expect(text, `GET ${path}`).not.toContain(label)
          if (res.status === 200 && route.subject === "agent") answered++
        }
      }
      // The agent's own records did answer (reputation, its page, badge, certificates, root, verify).
      expect(answered).toBeGreaterThanOrEqual(10)
    })
  )
})
