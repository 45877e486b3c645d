/**
 * GET /v1/ssm/{agent_id}: the self-similarity matrix of the agent's newest traces, the pairwise
 * cosine of their behavioural features (core/TraceFeatures.ts), row by row.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import { AgentId } from "../../../core/schema/Ids.js"
import { SelfSimilarity } from "../../../core/schema/Ssm.js"

export class SsmApi extends HttpApiGroup.make("ssm")
  .add(
    HttpApiEndpoint.get("getSsm", "/ssm/:agent_id")
      .setPath(Schema.Struct({ agent_id: AgentId }))
      .addSuccess(SelfSimilarity)
  )
  .addError(NotFound)
  .addError(InternalError)
  .middleware(Authentication) {}
