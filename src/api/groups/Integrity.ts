/** GET /v1/integrity/{agent_id}: how many of the agent's traces verified against its card. */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import { AgentId } from "../../../core/schema/Ids.js"

export const IntegritySummary = Schema.Struct({
  agent_id: AgentId,
  total_traces: Schema.NonNegativeInt,
  verified_traces: Schema.NonNegativeInt,
  violation_count: Schema.NonNegativeInt.annotations({
    description: "Violations over all traces that failed verification"
  }),
  integrity_score: Schema.Number.pipe(Schema.between(0, 1)).annotations({
    description: "verified_traces / total_traces; 1 when there are no traces"
  })
}).annotations({ identifier: "IntegritySummary" })

export class IntegrityApi extends HttpApiGroup.make("integrity")
  .add(
    HttpApiEndpoint.get("getIntegrity", "/integrity/:agent_id")
      .setPath(Schema.Struct({ agent_id: AgentId }))
      .addSuccess(IntegritySummary)
  )
  .addError(NotFound)
  .addError(InternalError)
  .middleware(Authentication) {}
