/**
 * Teams (docs/teams.md): named groups of 2 to 50 agents of one organization, their roster and its
 * history, and the team card records. The team card document itself is core/schema/TeamCard.ts.
 *
 * A membership is a period: `added_at` to `removed_at` (null while the agent is in the team). An
 * agent that leaves and joins again gets a new period, so the roster at any past time can be read
 * back, which team reputation needs.
 */
import { Schema } from "effect"
import { JsonPatch } from "./JsonPatch.js"
import { AgentId, DateTimeString, Identifier, JsonObject } from "./Ids.js"
import { literalUnion } from "./Literals.js"
import { TeamCard } from "./TeamCard.js"

/** Fewer than 2 is not a team; 50 keeps one roster, its events and a derivation small. */
export const TEAM_MIN_MEMBERS = 2
export const TEAM_MAX_MEMBERS = 50
export const TEAM_NAME_MAX = 100
export const TEAM_DESCRIPTION_MAX = 2000
/** JSON bytes (UTF-8) of `metadata`. */
export const TEAM_METADATA_MAX_BYTES = 16 * 1024

export const TEAM_ID_PREFIX = "team-"

export const TeamId = Identifier.annotations({ identifier: "TeamId", description: "Team id, `team-{uuid}`" })

/** `archived` is final: an archived team is read-only and cannot be made active again. */
export const TeamStatus = literalUnion(["active", "archived"], { identifier: "TeamStatus" })
export type TeamStatus = typeof TeamStatus.Type

export const Team = Schema.Struct({
  team_id: TeamId,
  org_id: Identifier,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  status: TeamStatus,
  metadata: JsonObject,
  member_count: Schema.NonNegativeInt.annotations({ description: "Current members" }),
  created_at: DateTimeString,
  updated_at: DateTimeString,
  archived_at: Schema.NullOr(DateTimeString)
}).annotations({ identifier: "Team" })
export type Team = typeof Team.Type

export const TeamMember = Schema.Struct({
  agent_id: AgentId,
  agent_name: Schema.NullOr(Schema.String).annotations({
    description: "The agent's name (its display name, else its gateway label); null without one"
  }),
  added_at: DateTimeString,
  removed_at: Schema.NullOr(DateTimeString).annotations({ description: "Null while the agent is in the team" })
}).annotations({ identifier: "TeamMember" })
export type TeamMember = typeof TeamMember.Type

export const TeamWithMembers = Schema.Struct({
  team: Team,
  members: Schema.Array(TeamMember).annotations({ description: "Current members, oldest membership first" })
}).annotations({ identifier: "TeamWithMembers" })
export type TeamWithMembers = typeof TeamWithMembers.Type

export const TeamRosterChangeType = literalUnion(["agent_added", "agent_removed"], {
  identifier: "TeamRosterChangeType"
})
export type TeamRosterChangeType = typeof TeamRosterChangeType.Type

export const TeamRosterChange = Schema.Struct({
  change_type: TeamRosterChangeType,
  agent_id: AgentId,
  actor_id: Schema.NullOr(Schema.String).annotations({
    description: "The user id acting (also through their API keys), `service` for the service-role key"
  }),
  created_at: DateTimeString
}).annotations({ identifier: "TeamRosterChange" })
export type TeamRosterChange = typeof TeamRosterChange.Type

/** How a card version was made: written by hand, derived from the members' cards, or derived then edited. */
export const TeamCardSource = literalUnion(["manual", "auto_derived", "hybrid"], { identifier: "TeamCardSource" })
export type TeamCardSource = typeof TeamCardSource.Type

export const TeamCardRecord = Schema.Struct({
  card_id: Identifier.annotations({ description: "`tcard-{uuid}`, one per version" }),
  team_id: TeamId,
  version: Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)),
  card_json: TeamCard,
  card_source: TeamCardSource,
  issued_at: DateTimeString,
  is_active: Schema.Boolean.annotations({ description: "True for the newest version only" })
}).annotations({ identifier: "TeamCardRecord" })
export type TeamCardRecord = typeof TeamCardRecord.Type

export const TeamCardHistoryItem = Schema.Struct({
  version: Schema.Int,
  card_id: Identifier,
  card_source: TeamCardSource,
  issued_at: DateTimeString,
  is_active: Schema.Boolean,
  actor_id: Schema.NullOr(Schema.String),
  diff: JsonPatch.annotations({
    description: "RFC 6902 JSON Patch from the previous version's card_json to this one's (from {} for version 1)"
  })
}).annotations({ identifier: "TeamCardHistoryItem" })
export type TeamCardHistoryItem = typeof TeamCardHistoryItem.Type

export const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

/** Trimmed, then 1..100 characters: names are compared (ignoring case) for uniqueness. */
const TeamName = Schema.Trim.pipe(
  Schema.minLength(1, { message: () => `must be 1 to ${TEAM_NAME_MAX} characters` }),
  Schema.maxLength(TEAM_NAME_MAX, { message: () => `must be 1 to ${TEAM_NAME_MAX} characters` })
).annotations({
  description: `1 to ${TEAM_NAME_MAX} characters, unique (ignoring case) among the organization's active teams`
})

const TeamDescription = Schema.Trim.pipe(
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
