/**
 * Team reputation routes. Reads (the score, the assessments, the quota) are for every member of
 * the organization, recomputing for Owner and Admin; a team the caller may not see is 404, and an
 * organization whose plan lacks `team_reputation` is 403 on every route (after the 404s, so the
 * answer never tells an outsider what plan an organization is on). The first read of a team's
 * score computes it; an archived team keeps its last score readable and is never recomputed (409).
 * The computation itself is services/TeamReputation.ts, shared with the workers.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { Conflict, Forbidden, NotFound } from "../../../adapters/http/ApiErrors.js"
import { TeamReputationRepo } from "../../../adapters/store/TeamReputationRepo.js"
import { includedComputations, periodOf } from "../../../core/TeamReputationQuota.js"
import { computeTeam, requirePlan, type TeamReputationRefused } from "../../../services/TeamReputation.js"
import { CandorApi } from "../Api.js"
import { internal, orgRole, requireOrgRole } from "./Access.js"
import { readTeam } from "./Teams.js"

const answer = (refusal: TeamReputationRefused) =>
  Effect.fail(
    refusal.reason === "plan"
      ? new Forbidden({ error: refusal.message })
      : refusal.reason === "archived"
        ? new Conflict({ error: refusal.message })
        : new NotFound({ error: refusal.message })
  )

/** The team, seen by a member of its organization whose plan has the feature. */
const readWithPlan = (teamId: string) =>
  Effect.gen(function* () {
    const found = yield* readTeam(teamId)
    yield* requirePlan(found.team.org_id)
    return found
  })

export const TeamReputationLive = HttpApiBuilder.group(CandorApi, "teamReputation", (handlers) =>
  handlers
    .handle("getTeamReputation", ({ path }) =>
      Effect.gen(function* () {
        const { team } = yield* readWithPlan(path.team_id)
        const stored = yield* (yield* TeamReputationRepo).stored(path.team_id)
        if (stored !== undefined) return stored.reputation
        if (team.status === "archived") {
          return yield* Effect.fail(
            new NotFound({
              error: `team ${path.team_id} has no reputation: it was archived before its first computation`
            })
          )
        }
        return (yield* computeTeam(path.team_id, "on_demand")).reputation
      }).pipe(Effect.catchTags({ TeamReputationRefused: answer, StoreError: internal }))
    )
    .handle("recomputeTeamReputation", ({ path }) =>
      Effect.gen(function* () {
        const { team } = yield* readTeam(path.team_id)
        yield* requireOrgRole(team.org_id, "admin", true)
        yield* requirePlan(team.org_id)
        const { computed, reputation } = yield* computeTeam(path.team_id, "on_demand")
        return { ...reputation, computed }
      }).pipe(Effect.catchTags({ TeamReputationRefused: answer, StoreError: internal }))
    )
    .handle("listTeamAssessments", ({ path, urlParams }) =>
      Effect.gen(function* () {
        yield* readWithPlan(path.team_id)
        const page = yield* (yield* TeamReputationRepo).assessments(path.team_id, urlParams.limit, urlParams.offset)
        return {
          team_id: path.team_id,
          assessments: page.items,
          total: page.total,
          limit: urlParams.limit,
          offset: urlParams.offset
        }
      }).pipe(Effect.catchTags({ TeamReputationRefused: answer, StoreError: internal }))
    )
    .handle("getTeamReputationQuota", ({ path }) =>
      Effect.gen(function* () {
        yield* orgRole(path.org_id)
        const plan = yield* requirePlan(path.org_id)
        const period = periodOf(new Date(yield* Clock.currentTimeMillis))
        const usage = yield* (yield* TeamReputationRepo).usage(path.org_id, period)
        const included = includedComputations(plan)
        return {
          org_id: path.org_id,
          period,
          plan_id: plan.plan_id,
          included,
          used: usage.used,
          overage: usage.overage,
          overage_cost: usage.overage_cost,
          unlimited: included === null
        }
      }).pipe(Effect.catchTags({ TeamReputationRefused: answer, StoreError: internal }))
    )
)
