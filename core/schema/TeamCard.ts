/**
 * The team card: an Alignment Card for a team (docs/teams.md, "Team cards"). It keeps the four
 * parts of an agent's card (core/schema/Card.ts: `principal`, `values`, `autonomy_envelope`,
 * `audit_commitment`, with their rules) and drops what names one agent: a team card has no
 * `agent_id` (one is refused), and its `card_id` and `issued_at` are the version record's, set by
 * Candor on each PUT (core/schema/Team.ts, TeamCardRecord). Three optional members say what only a
 * team has: its mission, how its agents coordinate, what a member must bring.
 *
 * As with agent cards, members this schema does not name are kept (the card is hashed into the
 * governance log, and a decode that dropped a member would change what was committed to).
 */
import { Schema } from "effect"
import { AapVersion, AuditCommitment, AutonomyEnvelope, CardValues, DEFAULT_AAP_VERSION, Principal } from "./Card.js"
import { Identifier, JsonObject, LenientDateTimeString, UnknownMembers } from "./Ids.js"
import { literalUnion } from "./Literals.js"

const optionalOrNull = <S extends Schema.Schema.Any>(schema: S) =>
  Schema.optionalWith(Schema.NullOr(schema), { exact: true })

export const TEAM_MISSION_MAX = 2000
/** JSON bytes (UTF-8) of a team card: far above any real card, far below the body limit. */
export const TEAM_CARD_MAX_BYTES = 64 * 1024

export const CoordinationMode = literalUnion(["collaborative", "hierarchical", "autonomous"], {
  identifier: "CoordinationMode",
  description:
    "collaborative: peers decide together; hierarchical: a lead agent decides; autonomous: each agent acts alone"
})
export type CoordinationMode = typeof CoordinationMode.Type

export const MemberRequirements = Schema.Struct(
  {
    min_members: Schema.optionalWith(Schema.Int.pipe(Schema.between(2, 50)), { exact: true }),
    max_members: Schema.optionalWith(Schema.Int.pipe(Schema.between(2, 50)), { exact: true }),
    required_values: Schema.optionalWith(Schema.Array(Schema.String), { exact: true }).annotations({
      description: "Values every member's card should declare"
    })
  },
  UnknownMembers
).annotations({ identifier: "MemberRequirements", description: "What the team asks of its members (declarative)" })

export const TeamCard = Schema.Struct(
  {
    aap_version: Schema.optionalWith(AapVersion, { default: () => DEFAULT_AAP_VERSION }),
    team_id: Schema.optionalWith(Identifier, { exact: true }).annotations({
      description: "When present, the team of the path"
    }),
    expires_at: optionalOrNull(LenientDateTimeString),
    principal: Principal,
    values: CardValues,
    autonomy_envelope: AutonomyEnvelope,
    audit_commitment: AuditCommitment,
    extensions: optionalOrNull(JsonObject),
    team_mission: optionalOrNull(
      Schema.String.pipe(
        Schema.minLength(1, { message: () => `must be 1 to ${TEAM_MISSION_MAX} characters` }),
        Schema.maxLength(TEAM_MISSION_MAX, { message: () => `must be 1 to ${TEAM_MISSION_MAX} characters` })
      )
    ),
    coordination_mode: optionalOrNull(CoordinationMode),
    member_requirements: optionalOrNull(MemberRequirements)
  },
  UnknownMembers
)
  .pipe(
    Schema.filter((card) => !("agent_id" in card) || "a team card has no agent_id (it describes a team, not an agent)")
  )
  .annotations({
    identifier: "TeamCard",
    description: "A team's declared alignment: an Alignment Card without agent_id, with optional team members"
  })
export type TeamCard = typeof TeamCard.Type
export type TeamCardEncoded = typeof TeamCard.Encoded
