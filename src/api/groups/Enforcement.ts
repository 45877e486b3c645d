/**
 * An agent's enforcement mode (docs/api.md, "Agent data"): read it, set it; and its failure policy,
 * what the gateway records when it cannot judge an answer (`fail_open` | `fail_closed`).
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { Forbidden, InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import { AgentId } from "../../../core/schema/Ids.js"
import {
  AgentEnforcement,
  EnforcementUpdate,
  AgentFailurePolicy,
  FailurePolicyUpdate
} from "../../../core/schema/Enforcement.js"

const AgentPath = Schema.Struct({ agent_id: AgentId })

export class EnforcementApi extends HttpApiGroup.make("enforcement")
  .add(
    HttpApiEndpoint.get("getEnforcement", "/agents/:agent_id/enforcement")
      .setPath(AgentPath)
      .addSuccess(AgentEnforcement)
  )
  .add(
    HttpApiEndpoint.put("putEnforcement", "/agents/:agent_id/enforcement")
      .setPath(AgentPath)
      .setPayload(EnforcementUpdate)
      .addSuccess(AgentEnforcement)
  )
  .add(
    HttpApiEndpoint.put("putFailurePolicy", "/agents/:agent_id/failure-policy")
      .setPath(AgentPath)
      .setPayload(FailurePolicyUpdate)
      .addSuccess(AgentFailurePolicy)
  )
  .addError(Forbidden)
  .addError(NotFound)
  .addError(InternalError)
  .middleware(Authentication) {}
