/**
 * What joins the reputation to the rest over HTTP: the badge and the public page read the stored
 * score (and say nothing of private or unknown agents), the certificate listing hides a private
 * agent's log, the coherence component reads the organization's cards, and a trust edge moves its
 * target's score at once (never the declarer's) and stops moving it when deleted.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"
import { IdentityRepo } from "../../adapters/store/identity/IdentityRepo.js"
import { cardFor, seed } from "./AgentData.js"
import { ApiHarness, layer as harness } from "./Support.js"

interface Component {
  readonly key: string
  readonly score: number
  readonly inputs: Record<string, unknown>
}
const coherenceOf = (body: { components: ReadonlyArray<Component> }) =>
  body.components.find((c) => c.key === "coherence_compatibility")!

const setCard = (agentId: string, declared: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const api = yield* ApiHarness
    const card = { ...cardFor(agentId, `card-${randomUUID().slice(0, 8)}`), values: { declared } }
    const res = yield* api.call("PATCH", `/v1/agents/${agentId}/card`, {
      token: api.serviceRoleKey,
      body: { card_json: card, conscience_values: [] }
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
  })

/** An agent of the fixtures' organization with `checkpoints` committed (verdicts cycling, or all clear). */
const orgAgent = (checkpoints: number, declared?: ReadonlyArray<string>, allClear = false) =>
  Effect.gen(function* () {
    const api = yield* ApiHarness
    const agentId = yield* api.claimAgent({ userId: api.fixtures.owner.userId, orgId: api.fixtures.orgId })
    if (declared !== undefined) yield* setCard(agentId, declared)
    if (checkpoints > 0) yield* Effect.orDie(seed(agentId, checkpoints, undefined, { allClear }))
    return agentId
  })

layer(harness(), { timeout: "120 seconds" })("reputation wiring", (it) => {
  it.effect("badge and page: the stored score, Not Rated and 404 for private and unknown agents alike", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const agentId = yield* orgAgent(60)
      const score = (yield* api.call("GET", `/v1/reputation/${agentId}`)).body.score as number

      const badge = yield* api.call("GET", `/v1/reputation/${agentId}/badge.svg?variant=score_tier&style=dark`)
      expect(badge.status).toBe(200)
      expect(badge.headers.get("content-type")).toContain("image/svg+xml")
      expect(badge.headers.get("cache-control")).toBe("public, max-age=3600")
      expect(String(badge.body)).toMatch(new RegExp(`<title>[^<]*${score}[^<]*</title>`))
      const bad = yield* api.call("GET", `/v1/reputation/${agentId}/badge.svg?variant=huge`)
      expect(bad.status).toBe(400)
      expect(JSON.stringify(bad.body)).toContain("variant")

      const page = yield* api.call("GET", `/agents/${agentId}/reputation`)
      expect(page.status).toBe(200)
      expect(page.headers.get("content-type")).toContain("text/html")
      expect(page.headers.get("content-security-policy")).toContain("default-src 'none'")
      expect(String(page.body)).toContain(`data-testid="score"`)
      expect(String(page.body)).toContain(String(score))
      // The page's verification is the public verify route's (the fixtures' certificates are signed
      // with a key the harness's ring does not hold, so both say so).
      const verify = yield* api.call("GET", `/v1/reputation/${agentId}/verify`)
      expect(String(page.body)).toContain(`data-testid="verification-status" data-valid="${verify.body.valid}"`)

      const unknownBadge = yield* api.call("GET", `/v1/reputation/agt-nobody/badge.svg`)
      expect(unknownBadge.status).toBe(200)
      expect(String(unknownBadge.body)).toContain("Not Rated")
      expect((yield* api.call("GET", `/agents/agt-nobody/reputation`)).status).toBe(404)

      const hide = yield* api.call("PUT", `/v1/agents/${agentId}/visibility`, {
        token: api.fixtures.owner.token,
        body: { visibility: "private" }
      })
      expect(hide.status).toBe(200)
      expect(String((yield* api.call("GET", `/v1/reputation/${agentId}/badge.svg`)).body)).toBe(
        String(unknownBadge.body)
      )
      const hidden = yield* api.call("GET", `/agents/${agentId}/reputation`)
      expect(hidden.status).toBe(404)
      expect(String(hidden.body)).not.toContain(String(score))
      expect((yield* api.call("GET", `/v1/agents/${agentId}/certificates`)).status).toBe(404)
    })
  )

  it.effect("coherence compatibility reads the organization's cards", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const alpha = yield* orgAgent(5, ["honesty", "transparency"])
      yield* orgAgent(0, ["honesty", "privacy"])
      const body = (yield* api.call("GET", `/v1/reputation/${alpha}`)).body
      const coherence = coherenceOf(body)
      expect(coherence.inputs.peers).toBeGreaterThanOrEqual(1)
      expect(coherence.inputs.mean_pair_score).toEqual(expect.any(Number))
      expect(coherence.score).not.toBe(750)
    })
  )

  it.effect("a trust edge raises its target at once, never its declarer, and deleting it takes that back", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { owner } = api.fixtures
      const truster = yield* orgAgent(60, undefined, true)
      const target = yield* orgAgent(3)
      const trusterBefore = (yield* api.call("GET", `/v1/reputation/${truster}`)).body
      const targetBefore = (yield* api.call("GET", `/v1/reputation/${target}`)).body
      expect(trusterBefore.is_eligible).toBe(true)
      expect(trusterBefore.score).toBeGreaterThan(600)
      expect(coherenceOf(targetBefore).inputs.trust_adjustment).toBe(0)

      const edge = yield* api.call("POST", `/v1/agents/${truster}/trust-edges`, {
        token: owner.token,
        body: { target_agent_id: target, trust_level: "high", reason: "reviewed its work" }
      })
      expect(edge.status, JSON.stringify(edge.body)).toBe(201)

      const targetAfter = (yield* api.call("GET", `/v1/reputation/${target}`)).body
      const coherence = coherenceOf(targetAfter)
      const expected = Math.round(100 * ((trusterBefore.score - 600) / 400) * 100) / 100
      expect(coherence.inputs.trust_adjustment).toBeCloseTo(expected, 2)
      expect(coherence.inputs.trusters).toEqual([
        expect.objectContaining({ agent_id: truster, hops: 1, base_score: trusterBefore.score })
      ])
      expect(coherence.score).toBe(coherenceOf(targetBefore).score + Math.round(expected))
      // The declarer is recomputed by nothing here, and would not move if it were.
      expect((yield* api.call("GET", `/v1/reputation/${truster}`)).body.score).toBe(trusterBefore.score)

      const removed = yield* api.call("DELETE", `/v1/agents/${truster}/trust-edges/${edge.body.id}`, {
        token: owner.token
      })
      expect(removed.status).toBe(200)
      expect(coherenceOf((yield* api.call("GET", `/v1/reputation/${target}`)).body).inputs.trust_adjustment).toBe(0)
    })
  )

  it.effect(
    "team reputation reads its members' stored scores; the team badge shows it, Not Rated for an unknown team",
    () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const { orgId, owner } = api.fixtures
        yield* Effect.orDie((yield* IdentityRepo).setOrgPlan(orgId, "enterprise"))
        const rated = yield* orgAgent(60, ["honesty"], true)
        const fresh = yield* orgAgent(0, ["honesty"])
        const memberScore = (yield* api.call("GET", `/v1/reputation/${rated}`)).body.score as number
        const created = yield* api.call("POST", "/v1/teams", {
          token: owner.token,
          body: { org_id: orgId, name: `wired-${randomUUID().slice(0, 8)}`, agent_ids: [rated, fresh] }
        })
        expect(created.status, JSON.stringify(created.body)).toBe(201)
        const teamId = created.body.team.team_id as string
        const reputation = yield* api.call("GET", `/v1/teams/${teamId}/reputation`, { token: owner.token })
        expect(reputation.status, JSON.stringify(reputation.body)).toBe(200)
        const quality = (reputation.body.components as ReadonlyArray<Component>).find(
          (c) => c.key === "member_quality"
        )!
        expect([...(quality.inputs.member_scores as ReadonlyArray<number>)].sort((a, b) => a - b)).toEqual([
          0,
          memberScore
        ])

        const badge = yield* api.call("GET", `/v1/teams/${teamId}/badge.svg?variant=score_grade&style=dark`)
        expect(badge.status).toBe(200)
        expect(badge.headers.get("cache-control")).toBe("public, max-age=3600")
        expect(String(badge.body)).toContain(`Building ${reputation.body.total_assessments}/10`)
        const unknown = yield* api.call("GET", `/v1/teams/team-${randomUUID()}/badge.svg`)
        expect(String(unknown.body)).toContain("Not Rated")
        expect((yield* api.call("GET", `/v1/teams/${teamId}/badge.svg?style=neon`)).status).toBe(400)
      })
  )
})
