/**
 * Team reputation over HTTP, on PGlite: the first read computes, unchanged inputs compute nothing
 * and cost nothing, a roster change records a new assessment, the published assessments and roster
 * recompute the score with core, eligibility at 10 assessments, the monthly quota (Team included,
 * warning once at 80%, exceeded once at the first overage, overage cost, Enterprise unlimited,
 * Free 403), score events from the last NOTIFIED score (a slow slide alerts) and grade events,
 * who may do what, archived teams, and the automatic recomputations: after a roster or card
 * change, coalesced to one an hour, and the periodic refresh (driven by the TestClock).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import { randomUUID } from "node:crypto"
import { IdentityRepo } from "../../adapters/store/identity/IdentityRepo.js"
import * as MemberScores from "../../adapters/store/MemberScores.js"
import { Store } from "../../adapters/store/Store.js"
import * as TeamRepo from "../../adapters/store/TeamRepo.js"
import * as TeamReputationRepo from "../../adapters/store/TeamReputationRepo.js"
import type { AlignmentCard } from "../../core/schema/Card.js"
import { TeamAssessmentList, TeamReputation, TeamReputationQuota } from "../../core/schema/TeamReputation.js"
import { computeTeamReputation } from "../../core/TeamReputation.js"
import { PLAN_REFUSAL } from "../../core/TeamReputationQuota.js"
import { markMemberChanged } from "../../services/TeamReputation.js"
import * as TeamReputationRefresh from "../../streams/TeamReputationRefresh.js"
import { card as baseCard } from "../adapters/store/Fixtures.js"
import { outboxEvents } from "../support/EventOutbox.js"
import { ApiHarness, layer as harness } from "./Support.js"

/** The test clock at least at the real time, never back (the rate limiter must not see time run backwards). */
const realTime = Effect.flatMap(Clock.currentTimeMillis, (at) => TestClock.setTime(Math.max(at, Date.now())))

const TeamReputationLayers = Layer.mergeAll(TeamRepo.layer, TeamReputationRepo.layer, MemberScores.layer)

/** A plan like Team but with `included` computations a month, to reach 80% and 100% quickly. */
const smallTeamPlan = (included: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const planId = `team-small-${randomUUID().slice(0, 8)}`
    yield* Effect.orDie(sql`
      insert into plans (plan_id, display_name, description, billing_model, base_price_cents, annual_price_cents,
        per_check_price, included_checks, trace_retention_days, feature_flags, limits, sort_order)
      select ${planId}, display_name, description, billing_model, base_price_cents, annual_price_cents,
        per_check_price, included_checks, trace_retention_days, feature_flags,
        jsonb_set(limits, '{team_reputation_computations_per_month}', ${String(included)}::jsonb), 99
      from plans where plan_id = 'team'`)
    return planId
  })

const setCard = (agentId: string, declared: ReadonlyArray<string>, conflicts: ReadonlyArray<string> = []) =>
  Effect.flatMap(Store, (store) => {
    const base = baseCard(agentId, 90, `card-${randomUUID().slice(0, 8)}`)
    const card: AlignmentCard = {
      ...base,
      values: { declared, ...(conflicts.length > 0 ? { conflicts_with: conflicts } : {}) }
    }
    return Effect.orDie(store.putCard(agentId, card))
  })

/** A new organization on `plan` (the fixtures' owner, admin and member in it), its agents carded with `declared`. */
const freshOrg = (plan: string, agents = 3, declared: ReadonlyArray<string> = ["honesty"]) =>
  Effect.gen(function* () {
    const api = yield* ApiHarness
    const repo = yield* IdentityRepo
    const { admin, member, owner } = api.fixtures
    const orgId = `org_${randomUUID()}`
    yield* Effect.orDie(
      repo.createOrg({
        org_id: orgId,
        name: "Team reputation",
        slug: `trep-${randomUUID().slice(0, 8)}`,
        billing_account_id: `ba_${randomUUID()}`,
        owner_user_id: owner.userId
      })
    )
    if (plan !== "free") yield* Effect.orDie(repo.setOrgPlan(orgId, plan))
    yield* Effect.orDie(repo.putMember(orgId, admin.userId, "admin"))
    yield* Effect.orDie(repo.putMember(orgId, member.userId, "member"))
    const agentIds: Array<string> = []
    for (let i = 0; i < agents; i++) {
      const agentId = yield* api.claimAgent({ userId: owner.userId, orgId })
      yield* setCard(agentId, declared)
      agentIds.push(agentId)
    }
    return { orgId, agentIds }
  })

const createTeam = (orgId: string, agentIds: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const api = yield* ApiHarness
    const res = yield* api.call("POST", "/v1/teams", {
      token: api.fixtures.owner.token,
      body: { org_id: orgId, name: `team-${randomUUID().slice(0, 8)}`, agent_ids: agentIds }
    })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    return res.body.team.team_id as string
  })

const teamCard = (declared: ReadonlyArray<string>) => ({
  principal: { type: "organization", relationship: "delegated_authority" },
  values: { declared },
  autonomy_envelope: { bounded_actions: ["reply"], escalation_triggers: [] },
  audit_commitment: { retention_days: 30, queryable: true }
})

/** PUT as an Admin: an automatic trigger once it commits. */
const putTeamCard = (teamId: string, declared: ReadonlyArray<string>) =>
  Effect.flatMap(ApiHarness, (api) =>
    api.call("PUT", `/v1/teams/${teamId}/card`, {
      token: api.fixtures.admin.token,
      body: { card_json: teamCard(declared) }
    })
  )

const decodeReputation = Schema.decodeUnknownSync(TeamReputation)

const getReputation = (teamId: string, token?: string) =>
  Effect.gen(function* () {
    const api = yield* ApiHarness
    const res = yield* api.call("GET", `/v1/teams/${teamId}/reputation`, { token: token ?? api.fixtures.member.token })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    return decodeReputation(res.body)
  })

const recompute = (teamId: string) =>
  Effect.gen(function* () {
    const api = yield* ApiHarness
    const res = yield* api.call("POST", `/v1/teams/${teamId}/reputation/recompute`, { token: api.fixtures.admin.token })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    return res.body as TeamReputation & { computed: boolean }
  })

const assessments = (teamId: string) =>
  Effect.gen(function* () {
    const api = yield* ApiHarness
    const res = yield* api.call("GET", `/v1/teams/${teamId}/assessments`, { token: api.fixtures.member.token })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    return Schema.decodeUnknownSync(TeamAssessmentList)(res.body)
  })

const quota = (orgId: string) =>
  Effect.gen(function* () {
    const api = yield* ApiHarness
    const res = yield* api.call("GET", `/v1/orgs/${orgId}/team-reputation/quota`, { token: api.fixtures.member.token })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    return Schema.decodeUnknownSync(TeamReputationQuota)(res.body)
  })

const assessmentCount = (teamId: string) => Effect.map(assessments(teamId), (list) => list.total)

layer(harness(), { timeout: "120 seconds" })("team reputation", (it) => {
  it.effect(
    "first read computes; unchanged inputs compute nothing and cost nothing; a roster change is a new assessment; core recomputes the published score",
    () =>
      Effect.gen(function* () {
        yield* realTime
        const api = yield* ApiHarness
        const { orgId, agentIds } = yield* freshOrg("team", 4)
        const [a, b, c, d] = agentIds as [string, string, string, string]
        yield* setCard(a, ["honesty", "privacy"])
        yield* setCard(b, ["honesty", "privacy"])
        yield* setCard(c, ["honesty"])
        const teamId = yield* createTeam(orgId, [a, b, c])
        // A team card: PUT is an automatic trigger, the team's first computation.
        const put = yield* putTeamCard(teamId, ["honesty"])
        expect(put.status).toBe(200)

        const first = yield* getReputation(teamId)
        const now = new Date(yield* Clock.currentTimeMillis).toISOString()
        expect(first).toMatchObject({
          team_id: teamId,
          org_id: orgId,
          grade: "NR",
          tier: "Not Rated",
          is_eligible: false,
          total_assessments: 1,
          last_assessed: now,
          member_count: 3,
          confidence: "insufficient",
          computed_at: now,
          trend_30d: null
        })
        expect(first.components.map((component) => component.key)).toEqual([
          "coherence_history",
          "member_quality",
          "operational_record",
          "structural_stability",
          "assessment_density"
        ])
        const [assessment] = (yield* assessments(teamId)).assessments
        // Pairs a–b 1, a–c ½, b–c ½: 2/3. With the team card [honesty]: ½, ½, 1: 2/3.
        expect(assessment!.member_coherence).toBeCloseTo(2 / 3, 12)
        expect(assessment!.card_coherence).toBeCloseTo(2 / 3, 12)
        // Members not rated yet: unknown is not low.
        expect(assessment!.risk_level).toBe("medium")
        expect(assessment!.member_scores.map((m) => m.agent_id)).toEqual([a, b, c].sort())
        expect(assessment).toMatchObject({ team_id: teamId, org_id: orgId, source: "computation" })
        expect(assessment!.assessment_id).toMatch(/^tas-[0-9a-f-]{36}$/)
        expect((yield* quota(orgId)).used).toBe(1)

        // Nothing moved: nothing recorded, nothing counted, however often.
        for (let i = 0; i < 3; i++) {
          const again = yield* recompute(teamId)
          expect(again.computed).toBe(false)
          expect(again.computed_at).toBe(first.computed_at)
        }
        expect(yield* assessmentCount(teamId)).toBe(1)
        expect((yield* quota(orgId)).used).toBe(1)

        // A roster change is recomputed after its commit: at once, the hour after the last automatic
        // recomputation (the card PUT's) having passed.
        yield* TestClock.adjust("1 hour")
        const added = yield* api.call("POST", `/v1/teams/${teamId}/members`, {
          token: api.fixtures.admin.token,
          body: { agent_ids: [d] }
        })
        expect(added.status).toBe(200)
        const second = yield* getReputation(teamId)
        expect(second.total_assessments).toBe(2)
        expect(second.member_count).toBe(4)
        expect(second.components.find((x) => x.key === "structural_stability")!.score).toBe(950)
        expect((yield* quota(orgId)).used).toBe(2)

        // Anyone in the organization recomputes it from what is published.
        const list = yield* assessments(teamId)
        const history = yield* api.call("GET", `/v1/teams/${teamId}/roster-history`, {
          token: api.fixtures.member.token
        })
        const team = yield* api.call("GET", `/v1/teams/${teamId}`, { token: api.fixtures.member.token })
        const newest = list.assessments[list.assessments.length - 1]!
        const recomputed = computeTeamReputation(
          {
            assessments: list.assessments,
            member_scores: newest.member_scores.map((m) => m.score),
            roster_changes: history.body.changes
              .filter((change: any) => change.created_at > team.body.team.created_at)
              .map((change: any) => change.created_at)
              .reverse()
          },
          new Date(second.computed_at)
        )
        expect(recomputed.score).toBe(second.score)
        expect(recomputed.components.map((x) => x.score)).toEqual(second.components.map((x) => x.score))
      })
  )

  it.effect("eligible from 10 assessments; a score event at every change of the score; the grade event at 10", () =>
    Effect.gen(function* () {
      yield* realTime
      const { orgId, agentIds } = yield* freshOrg("team", 3)
      const teamId = yield* createTeam(orgId, agentIds)
      const scores: Array<number> = []
      for (let n = 1; n <= 11; n++) {
        // A value nobody declares in conflicts_with: new inputs, the same coherence (1).
        yield* setCard(
          agentIds[0]!,
          ["honesty"],
          Array.from({ length: n }, (_, i) => `never-${i}`)
        )
        const result = yield* recompute(teamId)
        expect(result.computed).toBe(true)
        expect(result.total_assessments).toBe(n)
        expect(result.is_eligible).toBe(n >= 10)
        expect(result.grade === "NR").toBe(n < 10)
        scores.push(result.score)
      }
      // Density alone moves it (every assessment at the same instant): log(1 + n) / log(31).
      expect(scores).toEqual([670, 682, 690, 697, 702, 707, 711, 714, 717, 720, 722])
      const last = yield* getReputation(teamId)
      expect(last).toMatchObject({ grade: "A", tier: "Reliable", confidence: "low", is_eligible: true })

      const moved = yield* outboxEvents({ orgId, type: "team_reputation.score_changed" })
      // 670 notified first; every change after it fires, from the score before it.
      expect(moved.map((e) => [(e.data as any).score_before, (e.data as any).score_after])).toEqual(
        scores.slice(1).map((after, i) => [scores[i], after])
      )
      expect(moved[0]!.data).toMatchObject({
        team_id: teamId,
        grade: "NR",
        components: { coherence_history: 1000, member_quality: 0, operational_record: 1000 }
      })
      expect(moved.every((e) => e.org_id === orgId && e.agent_id === undefined)).toBe(true)
      const graded = yield* outboxEvents({ orgId, type: "team_reputation.grade_changed" })
      expect(graded.map((e) => e.data)).toEqual([{ team_id: teamId, grade_before: "NR", grade_after: "A", score: 720 }])
    })
  )

  it.effect("quota: Team includes 200; warning once at 80%, exceeded once at the first overage, overage cost", () =>
    Effect.gen(function* () {
      yield* realTime
      const team = yield* freshOrg("team", 2)
      const teamQuota = yield* quota(team.orgId)
      const period = new Date(yield* Clock.currentTimeMillis).toISOString().slice(0, 7)
      expect(teamQuota).toEqual({
        org_id: team.orgId,
        period,
        plan_id: "team",
        included: 200,
        used: 0,
        overage: 0,
        overage_cost: 0,
        unlimited: false
      })

      const planId = yield* smallTeamPlan(5)
      const { agentIds, orgId } = yield* freshOrg(planId, 2)
      const teamId = yield* createTeam(orgId, agentIds)
      const warnings = () => outboxEvents({ orgId, type: "quota.team_reputation_warning" })
      const exceeded = () => outboxEvents({ orgId, type: "quota.team_reputation_exceeded" })
      for (let n = 1; n <= 8; n++) {
        yield* setCard(agentIds[1]!, ["honesty"], [`never-${n}`])
        expect((yield* recompute(teamId)).computed).toBe(true)
        // 80% of 5 is the 4th; the 6th is the first overage.
        expect((yield* warnings()).length).toBe(n >= 4 ? 1 : 0)
        expect((yield* exceeded()).length).toBe(n >= 6 ? 1 : 0)
      }
      expect((yield* warnings())[0]!.data).toEqual({
        org_id: orgId,
        usage_percent: 80,
        computations_used: 4,
        computations_included: 5
      })
      expect((yield* exceeded())[0]!.data).toEqual({
        org_id: orgId,
        usage_percent: 120,
        computations_used: 6,
        computations_included: 5
      })
      expect(yield* quota(orgId)).toEqual({
        org_id: orgId,
        period,
        plan_id: planId,
        included: 5,
        used: 8,
        overage: 3,
        overage_cost: 0.015,
        unlimited: false
      })
      const sql = yield* SqlClient.SqlClient
      const ledger = yield* Effect.orDie(sql<{ overage: boolean; cost: unknown; period: string }>`
        select overage, cost, period from team_reputation_computations where org_id = ${orgId} order by computation_id`)
      expect(ledger.map((row) => [row.overage, Number(row.cost), row.period])).toEqual([
        ...Array.from({ length: 5 }, () => [false, 0, period]),
        ...Array.from({ length: 3 }, () => [true, 0.005, period])
      ])
    })
  )

  it.effect("Enterprise is unlimited (no overage, no quota events); Free answers 403 on every route", () =>
    Effect.gen(function* () {
      yield* realTime
      const api = yield* ApiHarness
      const enterprise = yield* freshOrg("enterprise", 2)
      const teamId = yield* createTeam(enterprise.orgId, enterprise.agentIds)
      for (let n = 1; n <= 3; n++) {
        yield* setCard(enterprise.agentIds[0]!, ["honesty"], [`never-${n}`])
        expect((yield* recompute(teamId)).computed).toBe(true)
      }
      expect(yield* quota(enterprise.orgId)).toMatchObject({
        plan_id: "enterprise",
        included: null,
        used: 3,
        overage: 0,
        overage_cost: 0,
        unlimited: true
      })
      expect(yield* outboxEvents({ orgId: enterprise.orgId, type: "quota.team_reputation_warning" })).toEqual([])

      const free = yield* freshOrg("free", 2)
      const freeTeam = yield* createTeam(free.orgId, free.agentIds)
      const { admin, member } = api.fixtures
      for (const [method, path, token] of [
        ["GET", `/v1/teams/${freeTeam}/reputation`, member.token],
        ["POST", `/v1/teams/${freeTeam}/reputation/recompute`, admin.token],
        ["GET", `/v1/teams/${freeTeam}/assessments`, member.token],
        ["GET", `/v1/orgs/${free.orgId}/team-reputation/quota`, member.token]
      ] as const) {
        const res = yield* api.call(method, path, { token })
        expect(res, `${method} ${path}`).toMatchObject({ status: 403, body: { error: PLAN_REFUSAL } })
      }
      // A roster change on Free still succeeds: the recomputation it asks for is refused, quietly.
      const third = yield* api.claimAgent({ userId: api.fixtures.owner.userId, orgId: free.orgId })
      const added = yield* api.call("POST", `/v1/teams/${freeTeam}/members`, {
        token: admin.token,
        body: { agent_ids: [third] }
      })
      expect(added.status).toBe(200)
      const sql = yield* SqlClient.SqlClient
      const rows = yield* Effect.orDie(sql`select 1 from team_assessments where team_id = ${freeTeam}`)
      expect(rows).toEqual([])

      // An admin moves the organization to Team: the routes open.
      const moved = yield* api.call("PUT", `/v1/admin/orgs/${free.orgId}/plan`, {
        token: api.serviceRoleKey,
        body: { plan_id: "team" }
      })
      expect(moved.status).toBe(200)
      expect((yield* getReputation(freeTeam)).total_assessments).toBe(1)
    })
  )

  it.effect(
    "roles: members read, Owner and Admin recompute; other organizations 404; archived: reads work, recompute 409",
    () =>
      Effect.gen(function* () {
        yield* realTime
        const api = yield* ApiHarness
        const { admin, member, owner, userB } = api.fixtures
        const { agentIds, orgId } = yield* freshOrg("team", 2)
        const teamId = yield* createTeam(orgId, agentIds)
        const memberKey = yield* api.createApiKey(owner.userId, { orgId, role: "member" })

        expect((yield* api.call("GET", `/v1/teams/${teamId}/reputation`, { apiKey: memberKey })).status).toBe(200)
        const refused = yield* api.call("POST", `/v1/teams/${teamId}/reputation/recompute`, { token: member.token })
        expect(refused).toMatchObject({
          status: 403,
          body: { error: "this needs the admin role in the organization; you are member" }
        })
        expect(
          (yield* api.call("POST", `/v1/teams/${teamId}/reputation/recompute`, { apiKey: memberKey })).status
        ).toBe(403)
        for (const token of [owner.token, admin.token, api.serviceRoleKey]) {
          expect((yield* api.call("POST", `/v1/teams/${teamId}/reputation/recompute`, { token })).status).toBe(200)
        }
        for (const path of [
          `/v1/teams/${teamId}/reputation`,
          `/v1/teams/${teamId}/assessments`,
          `/v1/orgs/${orgId}/team-reputation/quota`
        ]) {
          const res = yield* api.call("GET", path, { token: userB.token })
          expect(res.status, path).toBe(404)
        }
        const outsider = yield* api.call("POST", `/v1/teams/${teamId}/reputation/recompute`, { token: userB.token })
        expect(outsider).toMatchObject({ status: 404, body: { error: `team ${teamId} not found` } })
        const unknown = `team-${randomUUID()}`
        expect((yield* api.call("GET", `/v1/teams/${unknown}/reputation`, { token: member.token })).status).toBe(404)
        const badLimit = yield* api.call("GET", `/v1/teams/${teamId}/assessments?limit=0`, { token: member.token })
        expect(badLimit.status).toBe(400)
        expect(badLimit.body.error).toContain("limit")

        // Archived: the last score and the assessments stay readable; recomputing is 409.
        const before = yield* getReputation(teamId)
        expect((yield* api.call("DELETE", `/v1/teams/${teamId}`, { token: admin.token })).status).toBe(200)
        expect(yield* getReputation(teamId)).toEqual(before)
        expect((yield* assessments(teamId)).total).toBe(1)
        const archived = yield* api.call("POST", `/v1/teams/${teamId}/reputation/recompute`, { token: admin.token })
        expect(archived).toMatchObject({ status: 409, body: { error: `team ${teamId} is archived` } })
        // Archived before its first computation: nothing to read.
        const other = yield* freshOrg("team", 2)
        const never = yield* createTeam(other.orgId, other.agentIds)
        yield* api.call("DELETE", `/v1/teams/${never}`, { token: admin.token })
        const none = yield* api.call("GET", `/v1/teams/${never}/reputation`, { token: member.token })
        expect(none.status).toBe(404)
        expect(none.body.error).toContain("archived before its first computation")
      })
  )

  it.effect(
    "automatic recomputations are coalesced to one an hour; the refresh runs the waiting one, then teams unchecked for 24 h, at most N a pass",
    () =>
      Effect.gen(function* () {
        yield* realTime
        const { agentIds, orgId } = yield* freshOrg("team", 3)
        const teamId = yield* createTeam(orgId, agentIds)
        const pass = (batch = 1000) => Effect.provide(TeamReputationRefresh.refreshPass(batch), TeamReputationLayers)

        // The first automatic recomputation runs at once.
        expect((yield* putTeamCard(teamId, ["honesty"])).status).toBe(200)
        expect(yield* assessmentCount(teamId)).toBe(1)
        // Within the hour: a card change, a member's grade change, a roster change all wait.
        yield* TestClock.adjust("10 minutes")
        expect((yield* putTeamCard(teamId, ["honesty", "privacy"])).status).toBe(200)
        yield* setCard(agentIds[0]!, ["honesty"], ["never"])
        expect(yield* Effect.provide(markMemberChanged(agentIds[0]!), TeamReputationLayers)).toEqual([teamId])
        expect(yield* assessmentCount(teamId)).toBe(1)
        expect(yield* pass()).not.toContain(teamId)

        // The hour is over: one computation for all three.
        yield* TestClock.adjust("50 minutes")
        expect(yield* pass()).toContain(teamId)
        expect(yield* assessmentCount(teamId)).toBe(2)
        const [, latest] = (yield* assessments(teamId)).assessments
        expect(latest!.card_coherence).toBeCloseTo(0.5, 12)
        expect(yield* pass()).not.toContain(teamId)

        // Asked again at once: waits for the next hour.
        yield* setCard(agentIds[1]!, ["honesty"], ["never"])
        yield* Effect.provide(markMemberChanged(agentIds[1]!), TeamReputationLayers)
        expect(yield* assessmentCount(teamId)).toBe(2)
        yield* TestClock.adjust("1 hour")
        expect(yield* pass()).toContain(teamId)
        expect(yield* assessmentCount(teamId)).toBe(3)

        // A day later the refresh looks again; unchanged inputs record nothing, and it is not due again.
        const checked = (yield* getReputation(teamId)).computed_at
        yield* TestClock.adjust("24 hours")
        yield* TestClock.adjust("1 millis")
        expect(yield* pass()).toContain(teamId)
        expect(yield* assessmentCount(teamId)).toBe(3)
        expect((yield* getReputation(teamId)).computed_at).toBe(checked)
        expect(yield* pass()).not.toContain(teamId)

        // At most N a pass, most overdue first.
        const more: Array<string> = []
        for (let i = 0; i < 3; i++) {
          const org = yield* freshOrg("team", 2)
          const id = yield* createTeam(org.orgId, org.agentIds)
          yield* getReputation(id)
          more.push(id)
        }
        yield* TestClock.adjust("25 hours")
        expect((yield* pass(2)).length).toBe(2)
      })
  )

  it.scoped(
    "the refresh fiber (as the worker role runs it) runs the waiting recomputation once the hour has passed",
    () =>
      Effect.gen(function* () {
        yield* realTime
        // Started here, at the real time: from the test clock's zero its hourly passes would replay decades.
        yield* Effect.provide(TeamReputationRefresh.runRefresh({ interval: "1 hour" }), TeamReputationLayers)
        const { agentIds, orgId } = yield* freshOrg("team", 2)
        const teamId = yield* createTeam(orgId, agentIds)
        expect((yield* putTeamCard(teamId, ["honesty"])).status).toBe(200)
        expect((yield* putTeamCard(teamId, ["honesty", "privacy"])).status).toBe(200)
        expect(yield* assessmentCount(teamId)).toBe(1)
        yield* TestClock.adjust("1 hour")
        // The pass runs on the fiber: wait (in real time) for what it writes.
        let count = 1
        for (let i = 0; i < 500 && count < 2; i++) {
          yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
          count = yield* assessmentCount(teamId)
        }
        expect(count).toBe(2)
      })
  )
})
