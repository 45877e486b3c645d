/**
 * Team intelligence routes (docs/intelligence.md), through the TeamIntelligence service
 * (services/TeamIntelligence.ts). Each reads the team (a member of its organization, else 404) and
 * answers what the service computes of its current members' records. The forecast, which may add a
 * model's narrative, needs Admin; the other two any member.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { Forbidden } from "../../../adapters/http/ApiErrors.js"
import { TeamIntelligence } from "../../../services/TeamIntelligence.js"
import { CandorApi } from "../Api.js"
import { requireOrgRole } from "./Access.js"
import { readTeam } from "./Teams.js"

/**
 * The team, for an Admin or Owner of its organization (404 unless a member of it, 403 below Admin):
 * the forecast is the one intelligence call that may spend a model's tokens (ANALYSIS_MODEL), so
 * whatever the deployment's model, setting one never widens who may spend it.
 */
const teamForAdmin = (teamId: string) =>
  Effect.gen(function* () {
    const found = yield* readTeam(teamId)
    yield* requireOrgRole(found.team.org_id, "admin", false).pipe(
      Effect.catchTag("Forbidden", ({ error }) =>
        Effect.fail(new Forbidden({ error: `the team forecast may call a model: ${error}` }))
      )
    )
    return found
  })

export const TeamIntelligenceLive = HttpApiBuilder.group(CandorApi, "teamIntelligence", (handlers) =>
  Effect.map(TeamIntelligence, (intelligence) =>
    handlers
      .handle("teamFaultLines", ({ payload }) => Effect.flatMap(readTeam(payload.team_id), intelligence.faultLines))
      .handle("teamForecast", ({ payload }) => Effect.flatMap(teamForAdmin(payload.team_id), intelligence.forecast))
      .handle("recommendTeamPolicy", ({ payload }) =>
        Effect.flatMap(readTeam(payload.team_id), intelligence.recommendation)
      )
  )
)
