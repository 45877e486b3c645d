/**
 * GET /v1/orgs/{org_id}/coherence over real HTTP (PGlite): who may read it, what it answers for a
 * fleet (the same numbers as core/Coherence.ts on the same cards), for fleets of 0 and 1 carded
 * agents, the five-minute cache under the test clock (which the served API shares), and its refresh
 * at once after a card changes, through the API or straight in the store as another process would.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import { randomUUID } from "node:crypto"
import { IdentityRepo } from "../../adapters/store/identity/IdentityRepo.js"
import { Store } from "../../adapters/store/Store.js"
import { fleetCoherence } from "../../core/Coherence.js"
import { OrgCoherence } from "../../core/schema/Coherence.js"
import { MAX_FLEET_AGENTS } from "../../services/Coherence.js"
import { cardFor } from "./AgentData.js"
import * as Harness from "./Support.js"
import { ApiHarness } from "./Support.js"

/** The test clock at least at the real time, never back (the API's rate limiter must not see time run backwards). */
const realTime = Effect.flatMap(Clock.currentTimeMillis, (at) => TestClock.setTime(Math.max(at, Date.now())))

/** A new organization owned by the fixtures' owner, with the admin and the member. */
const freshOrg = Effect.gen(function* () {
  const { admin, member, owner } = (yield* ApiHarness).fixtures
  const orgId = `org_${randomUUID()}`
  const repo = yield* IdentityRepo
  yield* Effect.orDie(
    repo.createOrg({
      org_id: orgId,
      name: "Fleet",
      slug: `fleet-${randomUUID().slice(0, 8)}`,
      billing_account_id: `ba_${randomUUID()}`,
      owner_user_id: owner.userId
    })
  )
  yield* Effect.orDie(repo.putMember(orgId, admin.userId, "admin"))
  yield* Effect.orDie(repo.putMember(orgId, member.userId, "member"))
  return orgId
})

/** A card with these values, set through the API's card update (service-role key). */
const setCard = (agentId: string, declared: ReadonlyArray<string>, conflicts_with?: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const api = yield* ApiHarness
    const base = cardFor(agentId, `card-${randomUUID().slice(0, 8)}`)
    const card = { ...base, values: { declared, ...(conflicts_with === undefined ? {} : { conflicts_with }) } }
    const res = yield* api.call("PATCH", `/v1/agents/${agentId}/card`, {
      token: api.serviceRoleKey,
      body: { card_json: card, conscience_values: [] }
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
  })

/** An agent claimed into the organization, with a card when values are given. */
const orgAgent = (orgId: string, declared?: ReadonlyArray<string>, conflicts_with?: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const api = yield* ApiHarness
    const agentId = yield* api.claimAgent({ userId: api.fixtures.owner.userId, orgId })
    if (declared !== undefined) yield* setCard(agentId, declared, conflicts_with)
    return agentId
  })

const coherence = (orgId: string, who: { token?: string; apiKey?: string } = {}) =>
  Effect.gen(function* () {
    const api = yield* ApiHarness
    return yield* api.call("GET", `/v1/orgs/${orgId}/coherence`, {
      token: who.apiKey === undefined ? (who.token ?? api.fixtures.member.token) : undefined,
      apiKey: who.apiKey
    })
  })

const decode = Schema.decodeUnknownSync(OrgCoherence)

layer(Harness.layer(), { timeout: "60 seconds" })("fleet coherence", (it) => {
  it.effect("members of every role read it; another organization gets 404, no credentials 401", () =>
    Effect.gen(function* () {
      yield* realTime
      const api = yield* ApiHarness
      const { admin, member, owner, userB } = api.fixtures
      const orgId = yield* freshOrg
      yield* orgAgent(orgId, ["honesty"])
      for (const token of [owner.token, admin.token, member.token, api.serviceRoleKey]) {
        expect((yield* coherence(orgId, { token })).status).toBe(200)
      }
      const memberKey = yield* api.createApiKey(owner.userId, { orgId, role: "member" })
      expect((yield* coherence(orgId, { apiKey: memberKey })).status).toBe(200)
      // A key of another organization, a user of another one, an unknown id (even for the service-role key): 404.
      const otherKey = yield* api.createApiKey(userB.userId, { orgId: api.fixtures.otherOrgId, role: "owner" })
      expect(yield* coherence(orgId, { apiKey: otherKey })).toMatchObject({
        status: 404,
        body: { error: `organization ${orgId} not found` }
      })
      expect((yield* coherence(orgId, { token: userB.token })).status).toBe(404)
      const unknown = `org_${randomUUID()}`
      expect((yield* coherence(unknown, { token: api.serviceRoleKey })).status).toBe(404)
      const anonymous = yield* api.call("GET", `/v1/orgs/${orgId}/coherence`)
      expect(anonymous.status).toBe(401)
      expect(Object.keys(anonymous.body)).toStrictEqual(["error"])
    })
  )

  it.effect("answers the fleet of the agents with an active card, as core/Coherence.ts computes it", () =>
    Effect.gen(function* () {
      yield* realTime
      const orgId = yield* freshOrg
      const alpha = yield* orgAgent(orgId, ["honesty", "transparency", "privacy"])
      const beta = yield* orgAgent(orgId, ["Honesty", "transparency", "privacy", "fairness"])
      const delta = yield* orgAgent(orgId, ["honesty", "principal_benefit"], ["transparency"])
      yield* orgAgent(orgId)
      // An agent of another organization and a personal agent are not part of the fleet.
      yield* orgAgent((yield* ApiHarness).fixtures.otherOrgId, ["honesty"])

      const res = yield* coherence(orgId)
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      const body = decode(res.body)
      expect(body).toMatchObject({ org_id: orgId, agent_count: 3, agents_without_card: 1 })
      const expected = fleetCoherence([
        { agent_id: alpha, values: ["honesty", "transparency", "privacy"] },
        { agent_id: beta, values: ["Honesty", "transparency", "privacy", "fairness"] },
        { agent_id: delta, values: ["honesty", "principal_benefit"], conflicts_with: ["transparency"] }
      ])
      const { org_id, agent_count, agents_without_card, computed_at, cached_until, ...fleet } = body
      expect(fleet).toStrictEqual(expected)
      expect(body.pairwise.agent_ids).toStrictEqual([alpha, beta, delta].sort())
      expect(body.fleet_score).toBeCloseTo((0.75 + 0.21875 + 0.18) / 3, 12)
      expect(Date.parse(cached_until) - Date.parse(computed_at)).toBe(5 * 60_000)
    })
  )

  it.effect("no carded agent: nothing to score; one: itself without peers", () =>
    Effect.gen(function* () {
      yield* realTime
      const empty = yield* freshOrg
      expect(decode((yield* coherence(empty)).body)).toMatchObject({
        agent_count: 0,
        agents_without_card: 0,
        fleet_score: null,
        pairwise: { agent_ids: [], scores: [], pairs: [] },
        clusters: [],
        agent_summaries: []
      })
      const orgId = yield* freshOrg
      yield* orgAgent(orgId)
      expect(decode((yield* coherence(orgId)).body)).toMatchObject({
        agent_count: 0,
        agents_without_card: 1,
        fleet_score: null,
        min_pair_score: null,
        max_pair_score: null
      })
      const solo = yield* orgAgent(orgId, ["honesty"])
      expect(decode((yield* coherence(orgId)).body)).toMatchObject({
        agent_count: 1,
        agents_without_card: 1,
        fleet_score: null,
        pairwise: { agent_ids: [solo], scores: [[1]], pairs: [] },
        outliers: [],
        clusters: [{ agent_ids: [solo], shared_values: ["honesty"], mean_pair_score: null }],
        agent_summaries: [{ agent_id: solo, mean_pair_score: null, peers: 0, compatible_peers: 0 }]
      })
    })
  )

  it.effect("is served from cache for five minutes, and computed again after", () =>
    Effect.gen(function* () {
      yield* realTime
      const orgId = yield* freshOrg
      yield* orgAgent(orgId, ["honesty", "privacy"])
      yield* orgAgent(orgId, ["honesty"])
      const first = decode((yield* coherence(orgId)).body)
      expect(first.fleet_score).toBe(0.5)
      expect(Date.parse(first.computed_at)).toBe(yield* Clock.currentTimeMillis)

      yield* TestClock.adjust("4 minutes")
      const cached = decode((yield* coherence(orgId)).body)
      expect(cached.computed_at).toBe(first.computed_at)
      expect(cached.cached_until).toBe(first.cached_until)
      yield* TestClock.adjust("1 minute")
      expect(decode((yield* coherence(orgId)).body).computed_at).toBe(first.computed_at)

      yield* TestClock.adjust("1 millis")
      const fresh = decode((yield* coherence(orgId)).body)
      expect(Date.parse(fresh.computed_at)).toBe(yield* Clock.currentTimeMillis)
      expect(Date.parse(fresh.computed_at) - Date.parse(first.computed_at)).toBe(5 * 60_000 + 1)
    })
  )

  it.effect("is computed again at once after a card changes, through the API or in the store by another process", () =>
    Effect.gen(function* () {
      yield* realTime
      const orgId = yield* freshOrg
      const a = yield* orgAgent(orgId, ["honesty", "privacy"])
      const b = yield* orgAgent(orgId, ["honesty"])
      const first = decode((yield* coherence(orgId)).body)
      expect(first.fleet_score).toBe(0.5)

      yield* TestClock.adjust("1 second")
      yield* setCard(b, ["honesty", "privacy"])
      const afterPatch = decode((yield* coherence(orgId)).body)
      expect(afterPatch.fleet_score).toBe(1)
      expect(Date.parse(afterPatch.computed_at) - Date.parse(first.computed_at)).toBe(1000)

      // Another process's write: the store's card update, not this API's route.
      yield* TestClock.adjust("1 second")
      const store = yield* Store
      const card = cardFor(a, "card-elsewhere")
      yield* Effect.orDie(store.putCard(a, { ...card, values: { declared: ["honesty"], conflicts_with: ["privacy"] } }))
      const afterStore = decode((yield* coherence(orgId)).body)
      expect(afterStore.pairwise.pairs[0]).toMatchObject({
        conflicting_values: [{ value: "privacy", declared_by: b, conflicts_with_of: a }]
      })
      expect(afterStore.fleet_score).toBe(0.5 * (1 - 0.5 * 0.5))

      // An agent joining the organization changes the answer too, card or not.
      yield* TestClock.adjust("1 second")
      yield* orgAgent(orgId)
      expect(decode((yield* coherence(orgId)).body).agents_without_card).toBe(1)

      // Nothing changed: the cached answer again.
      yield* TestClock.adjust("1 second")
      const again = decode((yield* coherence(orgId)).body)
      const unchanged = decode((yield* coherence(orgId)).body)
      expect(unchanged.computed_at).toBe(again.computed_at)
    })
  )

  it.effect(`refuses fleets of more than ${MAX_FLEET_AGENTS} carded agents (400)`, () =>
    Effect.gen(function* () {
      yield* realTime
      const api = yield* ApiHarness
      const orgId = yield* freshOrg
      const sql = yield* SqlClient.SqlClient
      const prefix = `bulk-${randomUUID().slice(0, 8)}`
      const card = cardFor("x", "card-bulk")
      yield* Effect.orDie(sql`
        insert into agent_claims (agent_id, agent_hash, user_id, org_id)
        select ${prefix} || '-' || i, ${prefix} || '-' || i, ${api.fixtures.owner.userId}, ${orgId}
        from generate_series(1, ${MAX_FLEET_AGENTS + 1}) as i`)
      yield* Effect.orDie(sql`
        insert into cards (agent_id, version, card_id, card, retention_days, active)
        select ${prefix} || '-' || i, 1, 'card-bulk', ${JSON.stringify(card)}::jsonb, 90, true
        from generate_series(1, ${MAX_FLEET_AGENTS + 1}) as i`)
      expect(yield* coherence(orgId)).toMatchObject({
        status: 400,
        body: {
          error:
            `organization ${orgId} has ${MAX_FLEET_AGENTS + 1} agents with an active card; ` +
            `fleet coherence is computed for at most ${MAX_FLEET_AGENTS}`
        }
      })
    })
  )
})
