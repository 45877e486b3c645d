/**
 * The reputation routes over HTTP: the public reads (with private agents and unknown ids alike
 * 404), history, benchmarks over public agents only, the authenticated batch, search and compare
 * (limits, errors, nothing leaked), and visibility (who may set it, its governance entry, where it
 * is read).
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { GovernanceLog } from "../../adapters/store/GovernanceLog.js"
import { agentGovernanceLog } from "../../core/Governance.js"
import { seed } from "./AgentData.js"
import { ApiHarness, layer as harness } from "./Support.js"

/** An agent of `orgId` (or personal) with `checkpoints` committed, then scored by a read. */
const agentWith = (owner: { readonly userId: string; readonly orgId?: string }, checkpoints: number) =>
  Effect.gen(function* () {
    const api = yield* ApiHarness
    const agentId = yield* api.claimAgent(owner)
    if (checkpoints > 0) yield* Effect.orDie(seed(agentId, checkpoints))
    return agentId
  })

const setVisibility = (agentId: string, visibility: string, token: string) =>
  Effect.flatMap(ApiHarness, (api) =>
    api.call("PUT", `/v1/agents/${agentId}/visibility`, { token, body: { visibility } })
  )

layer(harness(), { timeout: "120 seconds" })("reputation API", (it) => {
  it.effect("public read: unlisted by default, NR over the empty log, computed on read and then stored", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { agentA } = api.fixtures
      const empty = yield* api.call("GET", `/v1/reputation/${agentA}`)
      expect(empty.status).toBe(200)
      expect(empty.body).toMatchObject({
        agent_id: agentA,
        grade: "NR",
        tier: "Not Rated",
        is_eligible: false,
        checkpoint_count: 0,
        confidence: "insufficient",
        computed_over: { tree_size: 0, root: null, checkpoint: null },
        trend_30d: null,
        visibility: "unlisted"
      })
      expect(empty.body.components.map((c: { key: string }) => c.key)).toEqual([
        "integrity_ratio",
        "compliance",
        "drift_stability",
        "trace_completeness",
        "coherence_compatibility"
      ])

      const scored = yield* agentWith({ userId: api.fixtures.userA.userId }, 60)
      const first = yield* api.call("GET", `/v1/reputation/${scored}`)
      expect(first.status).toBe(200)
      expect(first.body).toMatchObject({ agent_id: scored, is_eligible: true, checkpoint_count: 60 })
      expect(first.body.computed_over.tree_size).toBe(60)
      expect(first.body.computed_over.checkpoint).toContain(`/agents/${scored}`)
      // Stored: read again, the same computation.
      const again = yield* api.call("GET", `/v1/reputation/${scored}`)
      expect(again.body).toEqual(first.body)
    })
  )

  it.effect("a tool result's checkpoints are in the log but not in the score's counts (issue 28)", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const agentId = yield* api.claimAgent({ userId: api.fixtures.userA.userId })
      // 60 checkpoints of which the first 20 judge tool results the agent read.
      yield* Effect.orDie(
        seed(agentId, 60, (input, i) =>
          i < 20
            ? {
                ...input,
                checkpoint: {
                  ...input.checkpoint,
                  analysis_metadata: { ...input.checkpoint.analysis_metadata, analysis_scope: "tool_result" }
                }
              }
            : input
        )
      )
      const read = yield* api.call("GET", `/v1/reputation/${agentId}`)
      expect(read.status).toBe(200)
      // Counted, they would make 60.
      expect(read.body).toMatchObject({ checkpoint_count: 40 })
      expect(read.body.computed_over.tree_size).toBe(60)
    })
  )

  it.effect("private and unknown agents are 404 alike on every public route", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { owner, orgId } = api.fixtures
      const hidden = yield* agentWith({ userId: owner.userId, orgId }, 3)
      expect((yield* setVisibility(hidden, "private", owner.token)).status).toBe(200)
      for (const id of [hidden, "agt-nobody"]) {
        for (const path of [`/v1/reputation/${id}`, `/v1/reputation/${id}/history`]) {
          const res = yield* api.call("GET", path)
          expect(res, path).toMatchObject({ status: 404, body: { error: `agent ${id} not found` } })
        }
      }
      // A credential that may read the agent reads it on the public route too (issue 24); another does not.
      expect((yield* api.call("GET", `/v1/reputation/${hidden}`, { token: owner.token })).status).toBe(200)
      const stranger = yield* api.call("GET", `/v1/reputation/${hidden}`, { token: api.fixtures.userB.token })
      expect(stranger).toMatchObject({ status: 404, body: { error: `agent ${hidden} not found` } })
      const batch = yield* api.call("POST", "/v1/reputation/batch", {
        token: owner.token,
        body: { agent_ids: [hidden] }
      })
      expect(batch.body.reputations.map((r: { agent_id: string }) => r.agent_id)).toEqual([hidden])
      expect(batch.body.reputations[0].visibility).toBe("private")
    })
  )

  it.effect("history: newest first within `days`, limits checked", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const agentId = yield* agentWith({ userId: api.fixtures.userA.userId }, 5)
      yield* api.call("GET", `/v1/reputation/${agentId}`)
      const res = yield* api.call("GET", `/v1/reputation/${agentId}/history`)
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({ agent_id: agentId, days: 90 })
      expect(res.body.history.map((h: { kind: string }) => h.kind).sort()).toEqual(["recomputation", "weekly_snapshot"])
      expect(res.body.history[0]).toMatchObject({ tree_size: 5, checkpoint_count: 5, grade: "NR" })
      expect((yield* api.call("GET", `/v1/reputation/${agentId}/history?limit=1`)).body.history).toHaveLength(1)
      for (const query of ["days=0", "days=366", "limit=0", "days=abc"]) {
        const bad = yield* api.call("GET", `/v1/reputation/${agentId}/history?${query}`)
        expect(bad.status, query).toBe(400)
        expect(bad.body.error, query).toContain(query.split("=")[0])
      }
    })
  )

  it.effect("visibility: Owner and Admin set it, with a governance entry; Members 403, others 404", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { admin, member, orgAgent, owner, userA, userB } = api.fixtures
      const set = yield* setVisibility(orgAgent, "public", admin.token)
      expect(set).toMatchObject({ status: 200, body: { agent_id: orgAgent, visibility: "public" } })
      expect((yield* setVisibility(orgAgent, "private", member.token)).status).toBe(403)
      expect((yield* setVisibility(orgAgent, "private", userB.token)).status).toBe(404)
      expect((yield* setVisibility(orgAgent, "private", userA.token)).status).toBe(404)
      const bad = yield* setVisibility(orgAgent, "secret", owner.token)
      expect(bad.status).toBe(400)
      expect(bad.body.error).toContain("visibility")
      // Impersonation is read-only.
      const session = yield* api.call("POST", "/v1/admin/impersonate", {
        token: api.serviceRoleKey,
        body: { user_id: owner.userId }
      })
      expect((yield* setVisibility(orgAgent, "private", session.body.token)).status).toBe(403)
      // An unclaimed agent has no visibility to set, even for the service-role key.
      expect((yield* setVisibility("agt-unclaimed", "public", api.serviceRoleKey)).status).toBe(404)

      const log = yield* Effect.orDie((yield* GovernanceLog).entries(agentGovernanceLog(orgAgent), 0, 100))
      const entry = log.entries.find((e) => e.record.action === "agent.visibility")!
      expect(entry.record).toMatchObject({
        actor: admin.userId,
        previous_state: { visibility: "unlisted" },
        new_state: { visibility: "public" }
      })
      // Read where the agent is read: the agents list and the Agent record (its blog author page).
      const list = yield* api.call("GET", "/v1/agents", { token: member.token })
      expect(list.body.agents.find((a: { agent_id: string }) => a.agent_id === orgAgent).visibility).toBe("public")
      const author = yield* api.call("GET", `/v1/blog/authors/${orgAgent}`, { token: userB.token })
      expect(author.body.author).toMatchObject({ visibility: "public", public: true })
      expect((yield* api.call("GET", `/v1/reputation/${orgAgent}`)).body.visibility).toBe("public")
      expect((yield* setVisibility(orgAgent, "unlisted", owner.token)).status).toBe(200)
    })
  )

  it.effect("batch: the caller's agents and public ones; anything else not found; 1 to 50 ids", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { otherOrgId, userB } = api.fixtures
      const { owner, orgId } = api.fixtures
      const mine = yield* agentWith({ userId: owner.userId, orgId }, 2)
      const theirsPublic = yield* agentWith({ userId: userB.userId, orgId: otherOrgId }, 2)
      const theirsUnlisted = yield* agentWith({ userId: userB.userId, orgId: otherOrgId }, 2)
      const theirsPrivate = yield* agentWith({ userId: userB.userId, orgId: otherOrgId }, 2)
      yield* setVisibility(theirsPublic, "public", userB.token)
      yield* setVisibility(theirsPrivate, "private", userB.token)
      const res = yield* api.call("POST", "/v1/reputation/batch", {
        token: owner.token,
        body: { agent_ids: [theirsPublic, mine, theirsUnlisted, "agt-none", theirsPrivate, mine] }
      })
      expect(res.status).toBe(200)
      expect(res.body.reputations.map((r: { agent_id: string }) => r.agent_id)).toEqual([theirsPublic, mine])
      expect(res.body.not_found).toEqual([theirsUnlisted, "agt-none", theirsPrivate])
      // The service-role key reads every agent.
      const all = yield* api.call("POST", "/v1/reputation/batch", {
        token: api.serviceRoleKey,
        body: { agent_ids: [theirsPrivate, theirsUnlisted] }
      })
      expect(all.body.not_found).toEqual([])

      for (const agent_ids of [[], Array.from({ length: 51 }, (_, i) => `agt-${i}`)]) {
        const bad = yield* api.call("POST", "/v1/reputation/batch", { token: owner.token, body: { agent_ids } })
        expect(bad.status).toBe(400)
        expect(bad.body.error).toContain("agent_ids")
      }
      expect((yield* api.call("POST", "/v1/reputation/batch", { body: { agent_ids: [mine] } })).status).toBe(401)
    })
  )

  it.effect("search: filters, sorts and pages over readable and public agents", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { otherOrgId, owner, orgId, userB } = api.fixtures
      const mine = yield* agentWith({ userId: owner.userId, orgId }, 60)
      const theirsPublic = yield* agentWith({ userId: userB.userId, orgId: otherOrgId }, 3)
      const theirsUnlisted = yield* agentWith({ userId: userB.userId, orgId: otherOrgId }, 3)
      yield* setVisibility(theirsPublic, "public", userB.token)
      for (const id of [mine, theirsPublic, theirsUnlisted]) yield* api.call("GET", `/v1/reputation/${id}`)

      const ids = (body: { reputations: ReadonlyArray<{ agent_id: string }> }) =>
        body.reputations.map((r) => r.agent_id)
      const res = yield* api.call("GET", "/v1/reputation/search?limit=100", { token: owner.token })
      expect(res.status).toBe(200)
      expect(ids(res.body)).toContain(mine)
      expect(ids(res.body)).toContain(theirsPublic)
      expect(ids(res.body)).not.toContain(theirsUnlisted)
      expect(res.body.total).toBe(res.body.reputations.length)
      const scores = res.body.reputations.map((r: { score: number }) => r.score)
      expect(scores).toEqual([...scores].sort((a, b) => b - a))

      const byId = yield* api.call("GET", `/v1/reputation/search?q=${mine.slice(4, 14).toUpperCase()}`, {
        token: owner.token
      })
      expect(ids(byId.body)).toEqual([mine])
      const nr = yield* api.call("GET", "/v1/reputation/search?grade=NR&sort=score_asc&limit=100", {
        token: owner.token
      })
      expect(ids(nr.body)).not.toContain(mine)
      expect(ids(nr.body)).toContain(theirsPublic)
      const page = yield* api.call("GET", "/v1/reputation/search?limit=1&offset=1&sort=recent", {
        token: owner.token
      })
      expect(page.body).toMatchObject({ limit: 1, offset: 1, total: res.body.total })
      expect(page.body.reputations).toHaveLength(1)
      for (const query of ["limit=101", "sort=best", "grade=Z", "confidence=total", "offset=-1"]) {
        const bad = yield* api.call("GET", `/v1/reputation/search?${query}`, { token: owner.token })
        expect(bad.status, query).toBe(400)
        expect(bad.body.error, query).toContain(query.split("=")[0])
      }
    })
  )

  it.effect("compare: 2 to 10 readable agents side by side with the per-component differences", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { otherOrgId, owner, orgId, userB } = api.fixtures
      const a = yield* agentWith({ userId: owner.userId, orgId }, 60)
      const b = yield* agentWith({ userId: owner.userId, orgId }, 0)
      const hidden = yield* agentWith({ userId: userB.userId, orgId: otherOrgId }, 0)
      const res = yield* api.call("GET", `/v1/reputation/compare?agent_ids=${a},${b}`, { token: owner.token })
      expect(res.status).toBe(200)
      expect(res.body.agent_ids).toEqual([a, b])
      expect(res.body.reputations.map((r: { agent_id: string }) => r.agent_id)).toEqual([a, b])
      const [ra, rb] = res.body.reputations
      expect(res.body.score_spread).toBe(Math.abs(ra.score - rb.score))
      const integrity = res.body.differences.find((d: { key: string }) => d.key === "integrity_ratio")
      expect(integrity).toEqual({
        key: "integrity_ratio",
        label: "Integrity Ratio",
        scores: [ra.components[0].score, 0],
        spread: ra.components[0].score,
        highest: a
      })
      expect(res.body.differences).toHaveLength(5)

      const notFound = yield* api.call("GET", `/v1/reputation/compare?agent_ids=${a},${hidden}`, {
        token: owner.token
      })
      expect(notFound).toMatchObject({ status: 404, body: { error: `agent ${hidden} not found` } })
      const eleven = Array.from({ length: 11 }, (_, i) => `agt-${i}`).join(",")
      for (const list of [a, `${a},${a}`, eleven, `${a},`]) {
        const bad = yield* api.call("GET", `/v1/reputation/compare?agent_ids=${list}`, { token: owner.token })
        expect(bad.status, list).toBe(400)
        expect(bad.body.error, list).toContain("agent_ids")
      }
      expect((yield* api.call("GET", "/v1/reputation/compare", { token: owner.token })).status).toBe(400)
    })
  )

  it.effect("benchmarks: the distribution over public eligible agents only", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { owner, orgId } = api.fixtures
      const empty = yield* api.call("GET", "/v1/reputation/benchmarks")
      expect(empty.status).toBe(200)
      expect(empty.body).toMatchObject({
        count: 0,
        mean: null,
        percentiles: { p10: null, p25: null, p50: null, p75: null, p90: null },
        grades: { AAA: 0, AA: 0, A: 0, BBB: 0, BB: 0, B: 0, CCC: 0 },
        components: { integrity_ratio: null }
      })

      const rated = [
        yield* agentWith({ userId: owner.userId, orgId }, 60),
        yield* agentWith({ userId: owner.userId, orgId }, 90)
      ]
      const unrated = yield* agentWith({ userId: owner.userId, orgId }, 10)
      const unlisted = yield* agentWith({ userId: owner.userId, orgId }, 60)
      for (const id of [...rated, unrated]) yield* setVisibility(id, "public", owner.token)
      const scores: Array<number> = []
      for (const id of [...rated, unrated, unlisted]) {
        const res = yield* api.call("GET", `/v1/reputation/${id}`)
        if (rated.includes(id)) scores.push(res.body.score)
      }
      const res = yield* api.call("GET", "/v1/reputation/benchmarks")
      expect(res.body.count).toBe(2)
      expect(res.body.mean).toBeCloseTo((scores[0]! + scores[1]!) / 2, 6)
      const [low, high] = [...scores].sort((x, y) => x - y) as [number, number]
      expect(res.body.percentiles.p10).toBeCloseTo(low + 0.1 * (high - low), 6)
      expect(res.body.percentiles.p50).toBeCloseTo((low + high) / 2, 6)
      const grades = Object.values(res.body.grades as Record<string, number>)
      expect(grades.reduce((x, y) => x + y, 0)).toBe(2)
      expect(res.body.components.coherence_compatibility).toBe(750)
    })
  )
})
