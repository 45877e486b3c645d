/**
 * GET /v1/agents/{agent_id}/checkpoints and /checkpoints/{checkpoint_id}, over HTTP: the page's
 * shape and order, limit/offset/verdict/session filters with their totals, the documented limits as 400s
 * naming the field, and who may read (404 for agents the caller may not see, 401 without credentials).
 */
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { CommitInput } from "../../adapters/store/Store.js"
import { seed } from "./AgentData.js"
import { ApiHarness, layer as harness } from "./Support.js"

const newestFirst = (inputs: ReadonlyArray<CommitInput>) => [...inputs].reverse().map((input) => input.checkpoint)

layer(harness(), { timeout: "90 seconds" })("checkpoints API", (it) => {
  describe("list", () => {
    it.effect("pages newest first with the spec's fields, default limit 20, total of all pages", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const { agentA, userA } = api.fixtures
        const inputs = yield* seed(agentA, 25, undefined, { sessionId: (position) => `s-${agentA}-${position % 2}` })
        const all = newestFirst(inputs)

        const first = yield* api.call("GET", `/v1/agents/${agentA}/checkpoints`, { token: userA.token })
        expect(first.status).toBe(200)
        expect(Object.keys(first.body).sort()).toEqual(["checkpoints", "limit", "offset", "total"])
        expect(first.body).toMatchObject({ total: 25, limit: 20, offset: 0 })
        expect(first.body.checkpoints).toEqual(all.slice(0, 20))
        // Field by field, as the Checkpoint schema lists them (stored values, no more, no less).
        const one = first.body.checkpoints[0]
        for (const field of [
          "checkpoint_id",
          "agent_id",
          "card_id",
          "session_id",
          "timestamp",
          "thinking_block_hash",
          "provider",
          "model",
          "verdict",
          "concerns",
          "reasoning_summary",
          "conscience_context",
          "window_position",
          "analysis_metadata",
          "linked_trace_id",
          "re_evaluated_at",
          "original_verdict"
        ])
          expect(one).toHaveProperty(field)
        expect(one.checkpoint_id).toMatch(/^ic-[0-9a-f-]{36}$/)
        const concern = first.body.checkpoints.find((c: { concerns: Array<unknown> }) => c.concerns.length > 0)
          .concerns[0]
        expect(concern).toEqual(
          expect.objectContaining({
            category: expect.any(String),
            severity: expect.any(String),
            description: expect.any(String),
            evidence: expect.any(String)
          })
        )
        expect(one.window_position).toEqual({ index: expect.any(Number), window_size: expect.any(Number) })

        const second = yield* api.call("GET", `/v1/agents/${agentA}/checkpoints?limit=20&offset=20`, {
          token: userA.token
        })
        expect(second.body).toEqual({ checkpoints: all.slice(20), total: 25, limit: 20, offset: 20 })
        const small = yield* api.call("GET", `/v1/agents/${agentA}/checkpoints?limit=1&offset=3`, {
          token: userA.token
        })
        expect(small.body).toEqual({ checkpoints: all.slice(3, 4), total: 25, limit: 1, offset: 3 })
        const past = yield* api.call("GET", `/v1/agents/${agentA}/checkpoints?offset=1000`, { token: userA.token })
        expect(past.body).toEqual({ checkpoints: [], total: 25, limit: 20, offset: 1000 })
        const max = yield* api.call("GET", `/v1/agents/${agentA}/checkpoints?limit=1000`, { token: userA.token })
        expect(max.body.checkpoints).toHaveLength(25)

        // Filters, alone and together, each with the total of what matches.
        for (const verdict of ["clear", "review_needed", "boundary_violation"] as const) {
          const expected = all.filter((c) => c.verdict === verdict)
          const page = yield* api.call("GET", `/v1/agents/${agentA}/checkpoints?verdict=${verdict}&limit=1000`, {
            token: userA.token
          })
          expect(page.body).toEqual({ checkpoints: expected, total: expected.length, limit: 1000, offset: 0 })
        }
        const session = `s-${agentA}-1`
        const inSession = all.filter((c) => c.session_id === session)
        const bySession = yield* api.call("GET", `/v1/agents/${agentA}/checkpoints?session_id=${session}&limit=5`, {
          token: userA.token
        })
        expect(bySession.body).toEqual({
          checkpoints: inSession.slice(0, 5),
          total: inSession.length,
          limit: 5,
          offset: 0
        })
        const both = inSession.filter((c) => c.verdict === "clear")
        const combined = yield* api.call(
          "GET",
          `/v1/agents/${agentA}/checkpoints?session_id=${session}&verdict=clear`,
          { token: userA.token }
        )
        expect(combined.body).toEqual({ checkpoints: both, total: both.length, limit: 20, offset: 0 })
      })
    )

    it.effect("is empty, not missing, for a visible agent without checkpoints", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const agent = yield* api.claimAgent({ userId: api.fixtures.userA.userId })
        const page = yield* api.call("GET", `/v1/agents/${agent}/checkpoints`, { token: api.fixtures.userA.token })
        expect(page).toMatchObject({ status: 200, body: { checkpoints: [], total: 0, limit: 20, offset: 0 } })
      })
    )

    it.effect(
      "refuses limits outside 1..1000, a negative offset and an unknown verdict with a 400 naming the field",
      () =>
        Effect.gen(function* () {
          const api = yield* ApiHarness
          const { agentA, userA } = api.fixtures
          const cases: ReadonlyArray<readonly [string, string]> = [
            ["limit=0", "limit: must be an integer from 1 to 1000"],
            ["limit=1001", "limit: must be an integer from 1 to 1000"],
            ["limit=ten", "limit: must be an integer from 1 to 1000"],
            ["limit=2.5", "limit: must be an integer from 1 to 1000"],
            ["offset=-1", "offset: must be an integer of at least 0"],
            ["verdict=fine", "verdict: must be one of clear, review_needed, boundary_violation"]
          ]
          for (const [query, message] of cases) {
            const response = yield* api.call("GET", `/v1/agents/${agentA}/checkpoints?${query}`, { token: userA.token })
            expect(response.status, query).toBe(400)
            expect(Object.keys(response.body)).toEqual(["error"])
            expect(response.body.error).toContain(message)
          }
        })
    )

    it.effect("lets org members read their organization's agent, and no one else's", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const { agentA, agentB, member, orgAgent, userA, userB } = api.fixtures
        yield* seed(orgAgent, 2)
        const asMember = yield* api.call("GET", `/v1/agents/${orgAgent}/checkpoints`, { token: member.token })
        expect(asMember).toMatchObject({ status: 200, body: { total: 2 } })
        const memberKey = yield* api.createApiKey(member.userId, { orgId: api.fixtures.orgId, role: "member" })
        expect((yield* api.call("GET", `/v1/agents/${orgAgent}/checkpoints`, { apiKey: memberKey })).status).toBe(200)
        expect(
          (yield* api.call("GET", `/v1/agents/${orgAgent}/checkpoints`, { token: api.serviceRoleKey })).status
        ).toBe(200)

        for (const [token, agent] of [
          [userB.token, agentA],
          [userA.token, orgAgent],
          [member.token, agentB],
          [userA.token, "no-such-agent"]
        ] as const) {
          const response = yield* api.call("GET", `/v1/agents/${agent}/checkpoints`, { token })
          expect(response.status).toBe(404)
          expect(response.body).toEqual({ error: `agent ${agent} not found` })
        }
        // An organization key does not reach outside its organization.
        expect((yield* api.call("GET", `/v1/agents/${agentA}/checkpoints`, { apiKey: memberKey })).status).toBe(404)
      })
    )

    it.effect("needs credentials: 401 without or with an expired token", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const { agentA, userA } = api.fixtures
        const none = yield* api.call("GET", `/v1/agents/${agentA}/checkpoints`)
        expect(none.status).toBe(401)
        expect(Object.keys(none.body)).toEqual(["error"])
        const expired = yield* api.token(userA.userId, {
          issuedAt: Math.floor(Date.now() / 1000) - 7200,
          ttlSeconds: 60
        })
        expect((yield* api.call("GET", `/v1/agents/${agentA}/checkpoints`, { token: expired })).status).toBe(401)
        expect((yield* api.call("GET", `/v1/agents/${agentA}/checkpoints`, { token: "not-a-jwt" })).status).toBe(401)
      })
    )
  })

  describe("one checkpoint", () => {
    it.effect("returns the stored checkpoint; 404 for unknown ids and for a checkpoint of another agent", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const { agentA, orgAgent, owner, userA, userB } = api.fixtures
        const [input] = yield* seed(agentA, 1)
        const id = input!.checkpoint.checkpoint_id
        const found = yield* api.call("GET", `/v1/agents/${agentA}/checkpoints/${id}`, { token: userA.token })
        expect(found).toMatchObject({ status: 200, body: input!.checkpoint })
        expect(found.body).toEqual(input!.checkpoint)

        const unknown = yield* api.call(
          "GET",
          `/v1/agents/${agentA}/checkpoints/ic-00000000-0000-4000-8000-000000000000`,
          { token: userA.token }
        )
        expect(unknown).toMatchObject({ status: 404, body: { error: expect.stringContaining("not found") } })
        expect(
          (yield* api.call("GET", `/v1/agents/${agentA}/checkpoints/nonsense`, { token: userA.token })).status
        ).toBe(404)
        // The owner of orgAgent may see orgAgent, but agentA's checkpoint is not under it.
        const elsewhere = yield* api.call("GET", `/v1/agents/${orgAgent}/checkpoints/${id}`, { token: owner.token })
        expect(elsewhere.status).toBe(404)
        expect((yield* api.call("GET", `/v1/agents/${agentA}/checkpoints/${id}`, { token: userB.token })).status).toBe(
          404
        )
        expect((yield* api.call("GET", `/v1/agents/${agentA}/checkpoints/${id}`)).status).toBe(401)
      })
    )
  })
})
