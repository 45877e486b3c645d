/**
 * Team reputation routes, through the TeamReputation service (services/TeamReputation.ts, which
 * shares its computation with the workers). Reads (the score, the assessments, the quota) are for
 * every member of the organization, recomputing for Owner and Admin; a team the caller may not see
 * is 404, and an organization whose plan lacks `team_reputation` is 403 on every route (after the
 * 404s, so the answer never tells an outsider what plan an organization is on). The first read of a
 * team's score computes it; an archived team keeps its last score readable and is never recomputed (409).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { Conflict, Forbidden, NotFound } from "../../../adapters/http/ApiErrors.js"
import { TeamReputation, type TeamReputationRefused } from "../../../services/TeamReputation.js"
import { CandorApi } from "../Api.js"
import { orgRole, requireOrgRole } from "./Access.js"
import { readTeam } from "./Teams.js"

const answer = (refusal: TeamReputationRefused) =>
  Effect.fail(
    refusal.reason === "plan"
      ? new Forbidden({ error: refusal.message })
      : refusal.reason === "archived"
        ? new Conflict({ error: refusal.message })
        : new NotFound({ error: refusal.message })
  )

export const TeamReputationLive = HttpApiBuilder.group(CandorApi, "teamReputation", (handlers) =>
  Effect.map(TeamReputation, (teamReputation) =>
    handlers
      .handle("getTeamReputation", ({ path }) =>
        Effect.flatMap(readTeam(path.team_id), ({ team }) => teamReputation.reputation(team)).pipe(
          Effect.catchTag("TeamReputationRefused", answer)
        )
      )
      .handle("recomputeTeamReputation", ({ path }) =>
        Effect.gen(function* () {
          const { team } = yield* readTeam(path.team_id)
          yield* requireOrgRole(team.org_id, "admin", true)
          return yield* teamReputation.recompute(team)
        }).pipe(Effect.catchTag("TeamReputationRefused", answer))
      )
      .handle("listTeamAssessments", ({ path, urlParams }) =>
        Effect.flatMap(readTeam(path.team_id), ({ team }) => teamReputation.assessments(team, urlParams)).pipe(
          Effect.catchTag("TeamReputationRefused", answer)
        )
      )
      .handle("getTeamReputationQuota", ({ path }) =>
        Effect.zipRight(orgRole(path.org_id), teamReputation.quota(path.org_id)).pipe(
          Effect.catchTag("TeamReputationRefused", answer)
        )
      )
  )
)
