/**
 * Team reputation on PostgreSQL (a throwaway database): TeamReputationRepo as `pg` returns its
 * rows (numeric costs as strings, int8 counts, doubles kept exactly), a quota notice claimed once
 * by concurrent claimers, the coalescing marks, and concurrent recomputations of one team's new
 * inputs recording one computation (the organization's row lock and the hash re-checked under it).
 */
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"
import { IdentityRepo } from "../../adapters/store/identity/IdentityRepo.js"
import * as MemberScores from "../../adapters/store/MemberScores.js"
import { Store } from "../../adapters/store/Store.js"
import * as TeamRepo from "../../adapters/store/TeamRepo.js"
import * as TeamReputationRepo from "../../adapters/store/TeamReputationRepo.js"
import { layerIntegration } from "../support/Integration.js"
import { cardFor } from "./AgentData.js"
import { ApiHarness, layer as harness } from "./Support.js"

const Repos = Layer.mergeAll(TeamRepo.layer, TeamReputationRepo.layer, MemberScores.layer)

/** An organization on the Team plan with a team of `agents` carded agents. */
const teamOnTeamPlan = (agents = 2) =>
  Effect.gen(function* () {
    const api = yield* ApiHarness
    const { admin, member, owner } = api.fixtures
    const identity = yield* IdentityRepo
    const orgId = `org_${randomUUID()}`
    yield* Effect.orDie(
      identity.createOrg({
        org_id: orgId,
        name: "Team reputation",
        slug: `trep-${randomUUID().slice(0, 8)}`,
        billing_account_id: `ba_${randomUUID()}`,
        owner_user_id: owner.userId
      })
    )
    yield* Effect.orDie(identity.setOrgPlan(orgId, "team"))
    yield* Effect.orDie(identity.putMember(orgId, admin.userId, "admin"))
    yield* Effect.orDie(identity.putMember(orgId, member.userId, "member"))
    const store = yield* Store
    const agentIds: Array<string> = []
    for (let i = 0; i < agents; i++) {
      const agentId = yield* api.claimAgent({ userId: owner.userId, orgId })
      yield* Effect.orDie(store.putCard(agentId, cardFor(agentId, `card-${randomUUID().slice(0, 8)}`)))
      agentIds.push(agentId)
    }
    const created = yield* api.call("POST", "/v1/teams", {
      token: owner.token,
      body: { org_id: orgId, name: `team-${randomUUID().slice(0, 8)}`, agent_ids: agentIds }
    })
    expect(created.status).toBe(201)
    return { orgId, agentIds, teamId: created.body.team.team_id as string }
  })

layerIntegration("postgres", harness({ database: "postgres" }), { timeout: "90 seconds" })(
  "team reputation on PostgreSQL",
  (it) => {
    it.effect("the repository's rows as pg returns them; a notice is claimed once; coalescing marks", () =>
      Effect.gen(function* () {
        const { orgId, teamId } = yield* teamOnTeamPlan()
        const repo = yield* Effect.provide(TeamReputationRepo.TeamReputationRepo, Repos)

        const plan = yield* Effect.orDie(repo.plan(orgId))
        expect(plan?.plan_id).toBe("team")
        expect(plan?.limits["team_reputation_computations_per_month"]).toBe(200)

        const assessment = {
          assessment_id: `tas-${randomUUID()}`,
          team_id: teamId,
          org_id: orgId,
          assessed_at: "2026-05-02T00:00:00.000Z",
          member_coherence: 2 / 3,
          card_coherence: null,
          risk_level: "medium" as const,
          member_scores: [],
          inputs_hash: "ab".repeat(32),
          source: "computation"
        }
        yield* Effect.orDie(repo.recordAssessment(assessment))
        const page = yield* Effect.orDie(repo.assessments(teamId, 10, 0))
        expect(page).toEqual({ items: [assessment], total: 1 })
        expect(yield* Effect.orDie(repo.assessmentInputs(teamId))).toEqual([
          { assessed_at: assessment.assessed_at, member_coherence: 2 / 3, card_coherence: null, risk_level: "medium" }
        ])

        for (const [at, overage] of [
          ["2026-05-02T00:00:00.000Z", false],
          ["2026-05-03T00:00:00.000Z", true],
          ["2026-05-04T00:00:00.000Z", true]
        ] as const) {
          yield* Effect.orDie(
            repo.recordComputation({
              org_id: orgId,
              team_id: teamId,
              assessment_id: assessment.assessment_id,
              score: overage ? 700 : 650,
              computed_at: at,
              period: "2026-05",
              overage,
              cost: overage ? 0.005 : 0
            })
          )
        }
        expect(yield* Effect.orDie(repo.usage(orgId, "2026-05"))).toEqual({ used: 3, overage: 2, overage_cost: 0.01 })
        expect(yield* Effect.orDie(repo.usage(orgId, "2026-06"))).toEqual({ used: 0, overage: 0, overage_cost: 0 })
        expect(yield* Effect.orDie(repo.scoreAt(teamId, "2026-05-02T12:00:00.000Z"))).toBe(650)
        expect(yield* Effect.orDie(repo.scoreAt(teamId, "2026-05-01T00:00:00.000Z"))).toBeUndefined()

        // Concurrent claimers (separate connections): one gets it.
        const claims = yield* Effect.all(
          Array.from({ length: 8 }, () => repo.claimNotice(orgId, "2026-05", "warning", "2026-05-04T00:00:00.000Z")),
          { concurrency: "unbounded" }
        ).pipe(Effect.orDie)
        expect(claims.filter(Boolean).length).toBe(1)
        expect(yield* Effect.orDie(repo.claimNotice(orgId, "2026-05", "exceeded", "2026-05-04T00:00:00.000Z"))).toBe(
          true
        )

        // The earliest wait is kept; an automatic computation clears it.
        yield* Effect.orDie(repo.markAutomatic(teamId, "2026-05-04T00:00:00.000Z"))
        yield* Effect.orDie(repo.markPending(teamId, "2026-05-04T00:10:00.000Z"))
        yield* Effect.orDie(repo.markPending(teamId, "2026-05-04T00:20:00.000Z"))
        expect(yield* Effect.orDie(repo.triggerState(teamId))).toEqual({
          last_automatic_at: "2026-05-04T00:00:00.000Z",
          pending_since: "2026-05-04T00:10:00.000Z"
        })
        expect(
          yield* Effect.orDie(repo.dueTeams("2026-05-03T23:59:59.000Z", "2000-01-01T00:00:00.000Z", 1000))
        ).not.toContain(teamId)
        expect(
          yield* Effect.orDie(repo.dueTeams("2026-05-04T00:00:00.000Z", "2000-01-01T00:00:00.000Z", 1000))
        ).toContain(teamId)
        yield* Effect.orDie(repo.markAutomatic(teamId, "2026-05-04T01:00:00.000Z"))
        expect((yield* Effect.orDie(repo.triggerState(teamId))).pending_since).toBeNull()
      })
    )

    it.effect("concurrent recomputations of new inputs record one computation", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const { orgId, teamId } = yield* teamOnTeamPlan(3)
        const results = yield* Effect.all(
          Array.from({ length: 6 }, () =>
            api.call("POST", `/v1/teams/${teamId}/reputation/recompute`, { token: api.fixtures.admin.token })
          ),
          { concurrency: "unbounded" }
        )
        expect(results.map((res) => res.status)).toEqual(Array.from({ length: 6 }, () => 200))
        expect(results.filter((res) => res.body.computed === true).length).toBe(1)
        expect(new Set(results.map((res) => res.body.computed_at)).size).toBe(1)
        const list = yield* api.call("GET", `/v1/teams/${teamId}/assessments`, { token: api.fixtures.member.token })
        expect(list.body.total).toBe(1)
        const quota = yield* api.call("GET", `/v1/orgs/${orgId}/team-reputation/quota`, {
          token: api.fixtures.member.token
        })
        expect(quota.body).toMatchObject({ plan_id: "team", included: 200, used: 1, overage: 0, overage_cost: 0 })
      })
    )
  }
)
