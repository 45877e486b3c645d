/**
 * The agent listing and the agent's settings update as the API publishes them (GET and PATCH
 * /v1/agents…): each agent with its verdict counts and reputation summary.
 */
import * as Schema from "effect/Schema"
import { AgentStatus } from "./Agent.js"
import { AGENT_DISPLAY_NAME_MAX, AgentDisplayName } from "./AgentDisplayName.js"
import { AgentId, CardId, DateTimeString, Identifier } from "./Ids.js"
import { OrgName } from "./Organization.js"
import { Grade, Visibility } from "./Reputation.js"
import { EnforcementMode } from "./Verdict.js"

const Count = Schema.NonNegativeInt

export const VerdictCounts = Schema.Struct({
  clear: Count,
  review_needed: Count,
  boundary_violation: Count
}).annotations({ identifier: "VerdictCounts", description: "Stored checkpoints per verdict" })

export const AgentReputationSummary = Schema.Struct({
  score: Schema.NonNegativeInt,
  grade: Grade,
  is_eligible: Schema.Boolean
}).annotations({ identifier: "AgentReputationSummary", description: "Score and grade of the current reputation" })

export const AgentListItem = Schema.Struct({
  agent_id: AgentId,
  display_name: Schema.NullOr(Schema.String.pipe(Schema.maxLength(128))).annotations({
    description: `The name an Owner or Admin gave it (1 to ${AGENT_DISPLAY_NAME_MAX} characters), else its x-candor-agent label; null without either`
  }),
  status: AgentStatus,
  enforcement_mode: EnforcementMode,
  card_id: Schema.NullOr(CardId).annotations({ description: "The active Alignment Card; null before the first" }),
  last_seen: Schema.NullOr(DateTimeString).annotations({
    description: "Time of the newest checkpoint; null before the first"
  }),
  total_checkpoints: Count,
  checkpoint_counts: VerdictCounts,
  claimed: Schema.Boolean.annotations({
    description: "Whether the agent is claimed; false only in the service-role key's list, which holds every agent"
  }),
  visibility: Visibility.annotations({ description: "Who may read its reputation (PUT /v1/agents/{id}/visibility)" }),
  org_id: Schema.NullOr(Identifier).annotations({
    description: "The organization it is claimed into; null for a personal or unclaimed agent"
  }),
  org_name: Schema.NullOr(OrgName).annotations({ description: "That organization's name; null with org_id" }),
  reputation: Schema.NullOr(AgentReputationSummary).annotations({
    description: "Its current reputation (GET /v1/reputation/{agent_id} has the whole record); null before the first"
  })
}).annotations({ identifier: "AgentListItem", description: "One agent the caller may see" })

export type AgentListItem = typeof AgentListItem.Type

export const AgentList = Schema.Struct({
  agents: Schema.Array(AgentListItem).annotations({ description: "Newest activity first" })
}).annotations({ identifier: "AgentList" })

/** Unknown members are ignored, as in every PATCH. */
export const AgentUpdate = Schema.Struct({
  display_name: Schema.NullOr(AgentDisplayName).annotations({
    description: "The agent's name; null removes it (its x-candor-agent label shows again)"
  })
}).annotations({ identifier: "AgentUpdate" })
