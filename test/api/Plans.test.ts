/**
 * The commercial and directory routes end to end: plans (the four seeded, every spec field),
 * promo validation, enterprise contact, the blog (the Agent record as author, posts paged), and
 * claiming an agent by its provider key.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"
import { agentIdOf } from "../../adapters/gateway/AgentIdentity.js"
import { sha256Hex } from "../../adapters/providers/Identity.js"
import { seed } from "./AgentData.js"
import * as Harness from "./Support.js"
import { ApiHarness } from "./Support.js"

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/

layer(Harness.layer(), { timeout: "60 seconds" })("catalog", (it) => {
  describe("GET /v1/plans", () => {
    it.effect("lists Free, Developer, Team and Enterprise with every Plan field and the spec's rates", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const res = yield* api.call("GET", "/v1/plans", { token: api.fixtures.member.token })
        expect(res.status).toBe(200)
        expect(Object.keys(res.body)).toStrictEqual(["plans"])
        const plans: Array<any> = res.body.plans
        expect(plans.map((p) => p.display_name)).toStrictEqual(["Free", "Developer", "Team", "Enterprise"])
        for (const plan of plans) {
          expect(Object.keys(plan).sort()).toStrictEqual([
            "annual_price_cents",
            "base_price_cents",
            "billing_model",
            "description",
            "display_name",
            "feature_flags",
            "included_checks",
            "limits",
            "per_check_price",
            "plan_id",
            "sort_order",
            "trace_retention_days"
          ])
          for (const field of [
            "base_price_cents",
            "annual_price_cents",
            "included_checks",
            "trace_retention_days",
            "sort_order"
          ]) {
            expect(Number.isInteger(plan[field]), field).toBe(true)
          }
          expect(typeof plan.per_check_price).toBe("number")
          expect(typeof plan.feature_flags).toBe("object")
        }
        expect(plans[0]).toMatchObject({ plan_id: "free", billing_model: "none", base_price_cents: 0 })
        expect(plans.map((p) => p.limits.requests_per_second)).toStrictEqual([10, 50, 200, null])
      })
    )
  })

  describe("POST /v1/billing/validate-promo", () => {
    it.effect("a seeded code is valid (case-insensitive); an unknown one is valid: false; an empty one a 400", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const token = api.fixtures.userA.token
        const launch = yield* api.call("POST", "/v1/billing/validate-promo", { token, body: { code: "launch20" } })
        expect(launch).toMatchObject({
          status: 200,
          body: { valid: true, discount_percent: 20, discount_amount_cents: 0, name: expect.any(String) }
        })
        expect(Object.keys(launch.body).sort()).toStrictEqual([
          "discount_amount_cents",
          "discount_percent",
          "name",
          "valid"
        ])
        const unknown = yield* api.call("POST", "/v1/billing/validate-promo", { token, body: { code: "NOPE" } })
        expect(unknown.body).toStrictEqual({ valid: false, discount_percent: 0, discount_amount_cents: 0, name: "" })
        const empty = yield* api.call("POST", "/v1/billing/validate-promo", { token, body: { code: "" } })
        expect(empty.status).toBe(400)
        expect(empty.body.error).toMatch(/^code: /)

        const configured = yield* api.call("PUT", "/v1/admin/promos/SPRING", {
          token: api.serviceRoleKey,
          body: { name: "Spring", discount_percent: 0, discount_amount_cents: 500 }
        })
        expect(configured.status).toBe(200)
        const spring = yield* api.call("POST", "/v1/billing/validate-promo", { token, body: { code: "Spring" } })
        expect(spring.body).toStrictEqual({
          valid: true,
          discount_percent: 0,
          discount_amount_cents: 500,
          name: "Spring"
        })
      })
    )
  })

  describe("POST /v1/enterprise/contact", () => {
    it.effect("stores the request and answers its id; a bad email or a missing field is a 400 naming it", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const token = api.fixtures.userA.token
        const body = {
          name: "Ada",
          email: "ada@example.test",
          company: "Analytical",
          role: "CTO",
          company_size: "51-200",
          message: "We run 400 agents."
        }
        const res = yield* api.call("POST", "/v1/enterprise/contact", { token, body })
        expect(res.status).toBe(201)
        expect(Object.keys(res.body)).toStrictEqual(["id"])
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql`select email, company, user_id from enterprise_contacts where id = ${res.body.id}`
        expect(rows).toStrictEqual([
          { email: "ada@example.test", company: "Analytical", user_id: api.fixtures.userA.userId }
        ])
        const bad = yield* api.call("POST", "/v1/enterprise/contact", { token, body: { ...body, email: "ada@" } })
        expect(bad).toMatchObject({
          status: 400,
          body: { error: expect.stringMatching(/^email: must be an email address/) }
        })
        const { company: _, ...missing } = body
        const noCompany = yield* api.call("POST", "/v1/enterprise/contact", { token, body: missing })
        expect(noCompany.status).toBe(400)
        expect(noCompany.body.error).toMatch(/^company\b/)
      })
    )
  })

  describe("blog", () => {
    it.effect("GET /v1/blog/authors/{agent_id}: the Agent record with the spec's fields and its posts", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const { agentA, userA } = api.fixtures
        yield* seed(agentA, 1)
        const post = yield* api.call("PUT", "/v1/admin/blog/posts/post-1", {
          token: api.serviceRoleKey,
          body: {
            agent_id: agentA,
            title: "Hello",
            slug: "hello-world",
            summary: "first",
            published_at: "2026-11-01T00:00:00Z"
          }
        })
        expect(post.status).toBe(200)
        const res = yield* api.call("GET", `/v1/blog/authors/${agentA}`, { token: userA.token })
        expect(res.status).toBe(200)
        expect(Object.keys(res.body).sort()).toStrictEqual(["author", "posts"])
        const author = res.body.author
        expect(Object.keys(author).sort()).toStrictEqual([
          "agent_hash",
          "aip_enforcement_mode",
          "billing_account_id",
          "claimed_at",
          "created_at",
          "email",
          "id",
          "last_seen",
          "public",
          "status",
          "user_id",
          "visibility"
        ])
        expect(author).toMatchObject({
          id: agentA,
          user_id: userA.userId,
          email: userA.email,
          status: "active",
          public: false,
          visibility: "unlisted",
          aip_enforcement_mode: "observe"
        })
        expect(author.agent_hash).toMatch(/^[0-9a-f]{64}$/)
        for (const field of ["claimed_at", "last_seen", "created_at"]) expect(author[field], field).toMatch(ISO)
        expect(typeof author.billing_account_id).toBe("string")
        expect(res.body.posts).toStrictEqual([
          {
            post_id: "post-1",
            agent_id: agentA,
            title: "Hello",
            slug: "hello-world",
            summary: "first",
            published_at: "2026-11-01T00:00:00.000Z"
          }
        ])
        // Not public: another user does not see it; an unknown agent is not found either.
        expect((yield* api.call("GET", `/v1/blog/authors/${agentA}`, { token: api.fixtures.userB.token })).status).toBe(
          404
        )
        expect((yield* api.call("GET", "/v1/blog/authors/agt-unknown", { token: userA.token })).status).toBe(404)
      })
    )

    it.effect("GET /v1/blog/posts pages with limit and offset (1..100), newest first", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const { agentA, member } = api.fixtures
        for (const day of [2, 3, 4]) {
          yield* api.call("PUT", `/v1/admin/blog/posts/p-${day}`, {
            token: api.serviceRoleKey,
            body: {
              agent_id: agentA,
              title: `Day ${day}`,
              slug: `day-${day}`,
              published_at: `2026-11-0${day}T00:00:00Z`
            }
          })
        }
        const first = yield* api.call("GET", "/v1/blog/posts?limit=2", { token: member.token })
        expect(first.status).toBe(200)
        expect(first.body.limit).toBe(2)
        expect(first.body.offset).toBe(0)
        expect(first.body.posts.map((p: any) => p.post_id)).toStrictEqual(["p-4", "p-3"])
        const next = yield* api.call("GET", "/v1/blog/posts?limit=2&offset=2", { token: member.token })
        expect(next.body.posts.map((p: any) => p.post_id)[0]).toBe("p-2")
        const defaults = yield* api.call("GET", "/v1/blog/posts", { token: member.token })
        expect(defaults.body).toMatchObject({ limit: 20, offset: 0 })
        for (const query of ["limit=0", "limit=101", "offset=-1", "limit=abc"]) {
          const bad = yield* api.call("GET", `/v1/blog/posts?${query}`, { token: member.token })
          expect(bad.status, query).toBe(400)
          expect(bad.body.error).toMatch(/^(limit|offset): must be an integer/)
        }
      })
    )
  })

  describe("POST /v1/agents/claim", () => {
    it.effect("derives the gateway's agent id from the key, keeps only its hash, and refuses another claimer", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const user = yield* api.freshUser
        const providerKey = `sk-ant-${randomUUID()}`
        const res = yield* api.call("POST", "/v1/agents/claim", {
          token: user.token,
          body: { provider_key: providerKey, agent_name: "support-bot" }
        })
        expect(res.status).toBe(200)
        const keyHash = sha256Hex(providerKey)
        expect(res.body).toMatchObject({
          agent_id: agentIdOf(keyHash, "support-bot"),
          agent_hash: keyHash,
          user_id: user.userId,
          org_id: null
        })
        const sql = yield* SqlClient.SqlClient
        const dump = JSON.stringify(yield* sql`select * from agent_claims`)
        expect(dump).not.toContain(providerKey)

        const listed = yield* api.call("GET", "/v1/agents", { token: user.token })
        expect(listed.body.agents.map((a: any) => a.agent_id)).toStrictEqual([res.body.agent_id])
        const again = yield* api.call("POST", "/v1/agents/claim", {
          token: user.token,
          body: { provider_key: providerKey, agent_name: "support-bot" }
        })
        expect(again.status).toBe(200)
        const thief = yield* api.freshUser
        const stolen = yield* api.call("POST", "/v1/agents/claim", {
          token: thief.token,
          body: { provider_key: providerKey, agent_name: "support-bot" }
        })
        expect(stolen.status).toBe(403)
        expect(
          (yield* api.call("GET", `/v1/agents/${res.body.agent_id}/enforcement`, { token: thief.token })).status
        ).toBe(404)
      })
    )

    it.effect("agent_name is what the gateway takes in x-candor-agent (1 to 128 printable ASCII), else 400", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const user = yield* api.freshUser
        for (const agent_name of ["caf\u00e9", "a".repeat(129), " edge", "tab\there", ""]) {
          const res = yield* api.call("POST", "/v1/agents/claim", {
            token: user.token,
            body: { provider_key: `sk-ant-${randomUUID()}`, agent_name }
          })
          expect(res.status, JSON.stringify(agent_name)).toBe(400)
          expect(res.body.error).toMatch(/^agent_name: /)
        }
        const name = `bot #1 ~ ${"x".repeat(119)}`
        const ok = yield* api.call("POST", "/v1/agents/claim", {
          token: user.token,
          body: { provider_key: `sk-ant-${randomUUID()}`, agent_name: name }
        })
        expect(ok.status).toBe(200)
      })
    )

    it.effect("claims into an organization need Admin there; members then read the agent", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const { admin, member, orgId } = api.fixtures
        const providerKey = `sk-${randomUUID()}`
        const byMember = yield* api.call("POST", "/v1/agents/claim", {
          token: member.token,
          body: { provider_key: providerKey, org_id: orgId }
        })
        expect(byMember.status).toBe(403)
        const byAdmin = yield* api.call("POST", "/v1/agents/claim", {
          token: admin.token,
          body: { provider_key: providerKey, org_id: orgId }
        })
        expect(byAdmin).toMatchObject({ status: 200, body: { org_id: orgId, user_id: admin.userId } })
        const read = yield* api.call("GET", `/v1/agents/${byAdmin.body.agent_id}/enforcement`, { token: member.token })
        expect(read.status).toBe(200)
        const blank = yield* api.call("POST", "/v1/agents/claim", { token: admin.token, body: { provider_key: "" } })
        expect(blank.status).toBe(400)
        expect(blank.body.error).toMatch(/^provider_key/)
      })
    )
  })
})
