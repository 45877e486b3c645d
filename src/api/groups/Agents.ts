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
import { AgentId } from "../../../core/schema/Ids.js"
import { AgentListItem, AgentList, AgentUpdate } from "../../../core/schema/AgentList.js"

const AgentPath = Schema.Struct({ agent_id: AgentId })

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
