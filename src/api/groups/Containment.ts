/**
 * Containment (docs/api.md, "Containment"): pause, resume, kill and reactivate an agent (scope
 * `agent`, the default) or every agent of its provider key (scope `key`), read its containment and
 * log, set its auto-containment threshold. The same six routes under
 * `/v1/orgs/{org_id}/agents/{agent_id}` (an organization's agent, for its members) and under
 * `/v1/agents/{agent_id}` (any agent the caller may see, a personal one included).
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { BadRequest, Forbidden, InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import {
  ContainmentReason,
  ContainmentScopeBody,
  AgentContained,
  AgentActive,
  AgentContainment,
  ContainmentPolicy,
  AgentContainmentPolicy
} from "../../../core/schema/Containment.js"
import { AgentId, Identifier } from "../../../core/schema/Ids.js"
import { ContainmentRefused } from "../../../services/Containment.js"

const AgentPath = Schema.Struct({ agent_id: AgentId })
const OrgAgentPath = Schema.Struct({ org_id: Identifier, agent_id: AgentId })

const AGENT = "/agents/:agent_id"
const ORG_AGENT = "/orgs/:org_id/agents/:agent_id"

export class ContainmentApi extends HttpApiGroup.make("containment")
  // An agent the caller may see (a personal agent's claimer is its Owner).
  .add(
    HttpApiEndpoint.post("agentPause", `${AGENT}/pause`)
      .setPath(AgentPath)
      .setPayload(ContainmentReason)
      .addSuccess(AgentContained)
  )
  .add(
    HttpApiEndpoint.post("agentResume", `${AGENT}/resume`)
      .setPath(AgentPath)
      .setPayload(ContainmentScopeBody)
      .addSuccess(AgentActive)
  )
  .add(
    HttpApiEndpoint.post("agentKill", `${AGENT}/kill`)
      .setPath(AgentPath)
      .setPayload(ContainmentReason)
      .addSuccess(AgentContained)
  )
  .add(
    HttpApiEndpoint.post("agentReactivate", `${AGENT}/reactivate`)
      .setPath(AgentPath)
      .setPayload(ContainmentScopeBody)
      .addSuccess(AgentActive)
  )
  .add(HttpApiEndpoint.get("agentContainment", `${AGENT}/containment`).setPath(AgentPath).addSuccess(AgentContainment))
  .add(
    HttpApiEndpoint.put("agentContainmentPolicy", `${AGENT}/containment-policy`)
      .setPath(AgentPath)
      .setPayload(ContainmentPolicy)
      .addSuccess(AgentContainmentPolicy)
  )
  // An organization's agent, for the organization's members.
  .add(
    HttpApiEndpoint.post("orgPause", `${ORG_AGENT}/pause`)
      .setPath(OrgAgentPath)
      .setPayload(ContainmentReason)
      .addSuccess(AgentContained)
  )
  .add(
    HttpApiEndpoint.post("orgResume", `${ORG_AGENT}/resume`)
      .setPath(OrgAgentPath)
      .setPayload(ContainmentScopeBody)
      .addSuccess(AgentActive)
  )
  .add(
    HttpApiEndpoint.post("orgKill", `${ORG_AGENT}/kill`)
      .setPath(OrgAgentPath)
      .setPayload(ContainmentReason)
      .addSuccess(AgentContained)
  )
  .add(
    HttpApiEndpoint.post("orgReactivate", `${ORG_AGENT}/reactivate`)
      .setPath(OrgAgentPath)
      .setPayload(ContainmentScopeBody)
      .addSuccess(AgentActive)
  )
  .add(
    HttpApiEndpoint.get("orgContainment", `${ORG_AGENT}/containment`).setPath(OrgAgentPath).addSuccess(AgentContainment)
  )
  .add(
    HttpApiEndpoint.put("orgContainmentPolicy", `${ORG_AGENT}/containment-policy`)
      .setPath(OrgAgentPath)
      .setPayload(ContainmentPolicy)
      .addSuccess(AgentContainmentPolicy)
  )
  .addError(BadRequest)
  .addError(Forbidden)
  .addError(NotFound)
  .addError(InternalError)
  // The Containment service's own error (services/Containment.ts), with its status.
  .addError(ContainmentRefused)
  .middleware(Authentication) {}
