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
import { AgentId, Identifier, JsonObject } from "../../../core/schema/Ids.js"
import {
  Team,
  TEAM_DESCRIPTION_MAX,
  TEAM_MAX_MEMBERS,
  TEAM_MIN_MEMBERS,
  TEAM_NAME_MAX,
  TeamCardHistoryItem,
  TeamCardRecord,
  TeamCardSource,
  TeamId,
  TeamMember,
  TeamRosterChange,
  TeamStatus,
  TeamWithMembers
} from "../../../core/schema/Team.js"
import { TeamCard } from "../../../core/schema/TeamCard.js"
import {
  TeamConflict,
  TeamInvalid,
  TeamNotFound,
  TeamOrganizationNotFound,
  TeamPartNotFound
} from "../../../services/Teams.js"
import { IntParam } from "./Checkpoints.js"

const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

const TeamPath = Schema.Struct({ team_id: TeamId })
const MemberPath = Schema.Struct({ team_id: TeamId, agent_id: AgentId })
const OrgPath = Schema.Struct({ org_id: Identifier })

/** Trimmed, then 1..100 characters: names are compared (ignoring case) for uniqueness. */
export const TeamName = Schema.Trim.pipe(
  Schema.minLength(1, { message: () => `must be 1 to ${TEAM_NAME_MAX} characters` }),
  Schema.maxLength(TEAM_NAME_MAX, { message: () => `must be 1 to ${TEAM_NAME_MAX} characters` })
).annotations({
  description: `1 to ${TEAM_NAME_MAX} characters, unique (ignoring case) among the organization's active teams`
})

export const TeamDescription = Schema.Trim.pipe(
  Schema.maxLength(TEAM_DESCRIPTION_MAX, { message: () => `must be at most ${TEAM_DESCRIPTION_MAX} characters` })
).annotations({ description: `At most ${TEAM_DESCRIPTION_MAX} characters; empty or null: none` })

const agentIds = (min: number, max: number) =>
  Schema.Array(AgentId).pipe(
    Schema.minItems(min, { message: () => `must list ${min} to ${max} agent ids` }),
    Schema.maxItems(max, { message: () => `must list ${min} to ${max} agent ids` })
  )

const Metadata = JsonObject.annotations({ description: "Any JSON object, at most 16 KiB" })

export const CreateTeam = Schema.Struct({
  org_id: Identifier,
  name: TeamName,
  description: optional(Schema.NullOr(TeamDescription)),
  agent_ids: agentIds(TEAM_MIN_MEMBERS, TEAM_MAX_MEMBERS).annotations({
    description: `${TEAM_MIN_MEMBERS} to ${TEAM_MAX_MEMBERS} distinct agents of the organization`
  }),
  metadata: optional(Metadata)
}).annotations({ identifier: "CreateTeam" })

export const UpdateTeam = Schema.Struct({
  name: optional(TeamName),
  description: optional(Schema.NullOr(TeamDescription)),
  metadata: optional(Metadata.annotations({ description: "Replaces the metadata (at most 16 KiB)" }))
}).annotations({ identifier: "UpdateTeam" })

export const AddTeamMembers = Schema.Struct({
  agent_ids: agentIds(1, TEAM_MAX_MEMBERS).annotations({
    description: `1 to ${TEAM_MAX_MEMBERS} distinct agents of the team's organization`
  })
}).annotations({ identifier: "AddTeamMembers" })

export const TeamMembersAdded = Schema.Struct({
  added: Schema.Array(TeamMember),
  already_members: Schema.Array(AgentId),
  members: Schema.Array(TeamMember)
}).annotations({ identifier: "TeamMembersAdded" })

export const TeamMemberRemoved = Schema.Struct({
  removed: TeamMember,
  members: Schema.Array(TeamMember)
}).annotations({ identifier: "TeamMemberRemoved" })

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

export const TeamList = Schema.Struct({
  org_id: Schema.String,
  teams: Schema.Array(Team).annotations({ description: "Oldest first" }),
  total: Schema.NonNegativeInt,
  limit: Schema.Int,
  offset: Schema.NonNegativeInt
}).annotations({ identifier: "TeamList" })

export const TeamRosterHistory = Schema.Struct({
  team_id: Schema.String,
  changes: Schema.Array(TeamRosterChange).annotations({ description: "Newest first" }),
  total: Schema.NonNegativeInt,
  limit: Schema.Int,
  offset: Schema.NonNegativeInt
}).annotations({ identifier: "TeamRosterHistory" })

export const PutTeamCard = Schema.Struct({
  card_json: TeamCard,
  card_source: optional(TeamCardSource.annotations({ description: "Default manual" }))
}).annotations({ identifier: "PutTeamCard" })

export const DerivedTeamCard = Schema.Struct({
  derived_card: TeamCard,
  member_count: Schema.NonNegativeInt,
  members_with_cards: Schema.NonNegativeInt
}).annotations({ identifier: "DerivedTeamCard", description: "Not stored: PUT it to put it in force" })

export const TeamCardHistory = Schema.Struct({
  team_id: Schema.String,
  versions: Schema.Array(TeamCardHistoryItem).annotations({ description: "Newest first" }),
  total: Schema.NonNegativeInt,
  limit: Schema.Int,
  offset: Schema.NonNegativeInt
}).annotations({ identifier: "TeamCardHistory" })

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
