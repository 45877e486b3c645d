/**
 * What the caller may do on an agent (docs/api.md, "Agent data"): the console shows and enables its
 * buttons from it (the enforcement switch, the policy editor, pause, resume, kill, reactivate) rather
 * than guessing the caller's role from the organization list, which says nothing about API keys,
 * personal agents, the service-role key or impersonation.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { Forbidden, InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import { AgentId } from "../../../core/schema/Ids.js"
import { AgentPermissions } from "../../../core/schema/AgentPermissions.js"

const AgentPath = Schema.Struct({ agent_id: AgentId })

export class AgentPermissionsApi extends HttpApiGroup.make("agentPermissions")
  .add(
    HttpApiEndpoint.get("getAgentPermissions", "/agents/:agent_id/permissions")
      .setPath(AgentPath)
      .addSuccess(AgentPermissions)
  )
  .addError(Forbidden)
  .addError(NotFound)
  .addError(InternalError)
  .middleware(Authentication) {}
