/**
 * Teams (docs/teams.md): teams of an organization's agents, their roster and its history, and the
 * team card (its versions, their diffs, and a card derived from the members' cards). Owner and
 * Admin write; every member of the organization reads.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { BadRequest, Conflict, Forbidden, InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import { AgentId, Identifier } from "../../../core/schema/Ids.js"
import {
  TeamCardRecord,
  TeamId,
  TeamStatus,
  TeamWithMembers,
  CreateTeam,
  UpdateTeam,
  AddTeamMembers,
  TeamMembersAdded,
  TeamMemberRemoved,
  TeamList,
  TeamRosterHistory,
  PutTeamCard,
  DerivedTeamCard,
  TeamCardHistory,
  optional
} from "../../../core/schema/Team.js"
import {
  TeamConflict,
  TeamInvalid,
  TeamNotFound,
  TeamOrganizationNotFound,
  TeamPartNotFound
} from "../../../services/Teams.js"
import { IntParam } from "./Checkpoints.js"

const TeamPath = Schema.Struct({ team_id: TeamId })
const MemberPath = Schema.Struct({ team_id: TeamId, agent_id: AgentId })
const OrgPath = Schema.Struct({ org_id: Identifier })

export const TEAM_PAGE_LIMIT = { min: 1, max: 1000, default: 100 } as const

const Paging = {
  limit: Schema.optionalWith(IntParam(TEAM_PAGE_LIMIT.min, TEAM_PAGE_LIMIT.max), {
    default: () => TEAM_PAGE_LIMIT.default,
    exact: true
  }),
  offset: Schema.optionalWith(IntParam(0, Number.MAX_SAFE_INTEGER), { default: () => 0, exact: true })
}

export const TeamPageParams = Schema.Struct(Paging)
export const TeamListParams = Schema.Struct({
  ...Paging,
  status: optional(TeamStatus.annotations({ description: "Default: both" }))
})

export class TeamsApi extends HttpApiGroup.make("teams")
  .add(HttpApiEndpoint.post("createTeam", "/teams").setPayload(CreateTeam).addSuccess(TeamWithMembers, { status: 201 }))
  .add(HttpApiEndpoint.get("getTeam", "/teams/:team_id").setPath(TeamPath).addSuccess(TeamWithMembers))
  .add(
    HttpApiEndpoint.patch("updateTeam", "/teams/:team_id")
      .setPath(TeamPath)
      .setPayload(UpdateTeam)
      .addSuccess(TeamWithMembers)
  )
  .add(HttpApiEndpoint.del("archiveTeam", "/teams/:team_id").setPath(TeamPath).addSuccess(TeamWithMembers))
  .add(
    HttpApiEndpoint.post("addTeamMembers", "/teams/:team_id/members")
      .setPath(TeamPath)
      .setPayload(AddTeamMembers)
      .addSuccess(TeamMembersAdded)
  )
  .add(
    HttpApiEndpoint.del("removeTeamMember", "/teams/:team_id/members/:agent_id")
      .setPath(MemberPath)
      .addSuccess(TeamMemberRemoved)
  )
  .add(
    HttpApiEndpoint.get("teamRosterHistory", "/teams/:team_id/roster-history")
      .setPath(TeamPath)
      .setUrlParams(TeamPageParams)
      .addSuccess(TeamRosterHistory)
  )
  .add(
    HttpApiEndpoint.get("listOrgTeams", "/orgs/:org_id/teams")
      .setPath(OrgPath)
      .setUrlParams(TeamListParams)
      .addSuccess(TeamList)
  )
  .add(HttpApiEndpoint.get("getTeamCard", "/teams/:team_id/card").setPath(TeamPath).addSuccess(TeamCardRecord))
  .add(
    HttpApiEndpoint.put("putTeamCard", "/teams/:team_id/card")
      .setPath(TeamPath)
      .setPayload(PutTeamCard)
      .addSuccess(TeamCardRecord)
  )
  .add(
    HttpApiEndpoint.post("deriveTeamCard", "/teams/:team_id/card/derive").setPath(TeamPath).addSuccess(DerivedTeamCard)
  )
  .add(
    HttpApiEndpoint.get("teamCardHistory", "/teams/:team_id/card/history")
      .setPath(TeamPath)
      .setUrlParams(TeamPageParams)
      .addSuccess(TeamCardHistory)
  )
  .addError(BadRequest)
  .addError(Forbidden)
  .addError(NotFound)
  .addError(Conflict)
  .addError(InternalError)
  // The Teams service's own errors (services/Teams.ts), each with its status.
  .addError(TeamNotFound)
  .addError(TeamOrganizationNotFound)
  .addError(TeamPartNotFound)
  .addError(TeamInvalid)
  .addError(TeamConflict)
  .middleware(Authentication) {}
