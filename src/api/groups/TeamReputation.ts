/**
 * Team reputation (docs/team-reputation.md): a team's score and components, recomputing it on
 * demand, the recorded assessments it is computed from, and the organization's monthly quota of
 * computations. Every member of the organization reads; Owner and Admin recompute. An organization
 * whose plan lacks the `team_reputation` feature gets 403 on every route.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { BadRequest, Conflict, Forbidden, InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import { Identifier } from "../../../core/schema/Ids.js"
import { TeamId } from "../../../core/schema/Team.js"
import {
  TeamAssessmentList,
  TeamReputation,
  TeamReputationQuota,
  TeamReputationRecomputed
} from "../../../core/schema/TeamReputation.js"
import { TeamPageParams } from "./Teams.js"
import { TeamNotFound } from "../../../services/Teams.js"

const TeamPath = Schema.Struct({ team_id: TeamId })
const OrgPath = Schema.Struct({ org_id: Identifier })

export class TeamReputationApi extends HttpApiGroup.make("teamReputation")
  .add(
    HttpApiEndpoint.get("getTeamReputation", "/teams/:team_id/reputation").setPath(TeamPath).addSuccess(TeamReputation)
  )
  .add(
    HttpApiEndpoint.post("recomputeTeamReputation", "/teams/:team_id/reputation/recompute")
      .setPath(TeamPath)
      .addSuccess(TeamReputationRecomputed)
  )
  .add(
    HttpApiEndpoint.get("listTeamAssessments", "/teams/:team_id/assessments")
      .setPath(TeamPath)
      .setUrlParams(TeamPageParams)
      .addSuccess(TeamAssessmentList)
  )
  .add(
    HttpApiEndpoint.get("getTeamReputationQuota", "/orgs/:org_id/team-reputation/quota")
      .setPath(OrgPath)
      .addSuccess(TeamReputationQuota)
  )
  .addError(BadRequest)
  .addError(Forbidden)
  .addError(NotFound)
  .addError(Conflict)
  .addError(InternalError)
  .addError(TeamNotFound)
  .middleware(Authentication) {}
