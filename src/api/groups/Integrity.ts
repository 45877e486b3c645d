/** GET /v1/integrity/{agent_id}: how many of the agent's traces verified against its card. */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import { AgentId } from "../../../core/schema/Ids.js"
import { IntegritySummary } from "../../../core/schema/Integrity.js"

export class IntegrityApi extends HttpApiGroup.make("integrity")
  .add(
    HttpApiEndpoint.get("getIntegrity", "/integrity/:agent_id")
      .setPath(Schema.Struct({ agent_id: AgentId }))
      .addSuccess(IntegritySummary)
  )
  .addError(NotFound)
  .addError(InternalError)
  .middleware(Authentication) {}
