/**
 * Team intelligence (docs/intelligence.md): a team's value fault lines, a forecast of its failure
 * modes, and a tool policy recommended for it. Every member of the team's organization reads; they
 * store nothing. A team the caller may not see is 404.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { BadRequest, Forbidden, InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import {
  TeamFaultLines,
  TeamForecast,
  TeamIntelligenceRequest,
  TeamPolicyRecommendation
} from "../../../core/schema/Intelligence.js"
import { TeamNotFound } from "../../../services/Teams.js"

export class TeamIntelligenceApi extends HttpApiGroup.make("teamIntelligence")
  .add(
    HttpApiEndpoint.post("teamFaultLines", "/teams/fault-lines")
      .setPayload(TeamIntelligenceRequest)
      .addSuccess(TeamFaultLines)
  )
  .add(
    HttpApiEndpoint.post("teamForecast", "/teams/forecast").setPayload(TeamIntelligenceRequest).addSuccess(TeamForecast)
  )
  .add(
    HttpApiEndpoint.post("recommendTeamPolicy", "/teams/recommend-policy")
      .setPayload(TeamIntelligenceRequest)
      .addSuccess(TeamPolicyRecommendation)
  )
  .addError(BadRequest)
  .addError(Forbidden)
  .addError(NotFound)
  .addError(InternalError)
  .addError(TeamNotFound)
  .middleware(Authentication) {}
