/**
 * GET /v1/agents: the agents the caller may see (a shape of our own, documented in
 * docs/api.md). One row per agent with what a dashboard lists: status, enforcement mode, active
 * card, last activity, checkpoint counts per verdict (read from counters, so flat at any size), its
 * name, organization and reputation grade: everything the console's fleet page shows, in one query.
 * GET /v1/agents/{agent_id} answers one such row, PATCH /v1/agents/{agent_id} names the agent.
 * Names are for the agent's readers only: no public route carries them.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { Forbidden, InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import { AgentStatus } from "../../../core/schema/Agent.js"
import { AGENT_DISPLAY_NAME_MAX, AgentDisplayName } from "../../../core/schema/AgentDisplayName.js"
import { AgentId, CardId, DateTimeString, Identifier } from "../../../core/schema/Ids.js"
import { OrgName } from "../../../core/schema/Organization.js"
import { Grade, Visibility } from "../../../core/schema/Reputation.js"
import { EnforcementMode } from "../../../core/schema/Verdict.js"

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

const AgentPath = Schema.Struct({ agent_id: AgentId })

/** Unknown members are ignored, as in every PATCH. */
export const AgentUpdate = Schema.Struct({
  display_name: Schema.NullOr(AgentDisplayName).annotations({
    description: "The agent's name; null removes it (its x-candor-agent label shows again)"
  })
}).annotations({ identifier: "AgentUpdate" })

export class AgentsApi extends HttpApiGroup.make("agents")
  .add(HttpApiEndpoint.get("listAgents", "/agents").addSuccess(AgentList))
  .add(HttpApiEndpoint.get("getAgent", "/agents/:agent_id").setPath(AgentPath).addSuccess(AgentListItem))
  .add(
    HttpApiEndpoint.patch("updateAgent", "/agents/:agent_id")
      .setPath(AgentPath)
      .setPayload(AgentUpdate)
      .addSuccess(AgentListItem)
  )
  .addError(Forbidden)
  .addError(NotFound)
  .addError(InternalError)
  .middleware(Authentication) {}
