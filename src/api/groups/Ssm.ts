/**
 * GET /v1/ssm/{agent_id}: the self-similarity matrix of the agent's newest traces, the pairwise
 * cosine of their behavioural features (core/TraceFeatures.ts), row by row.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import { AgentId, DateTimeString, TraceId } from "../../../core/schema/Ids.js"

const Similarity = Schema.Number.pipe(Schema.between(0, 1))

export const SsmTrace = Schema.Struct({
  trace_id: TraceId,
  timestamp: DateTimeString,
  action: Schema.Struct({ type: Schema.String, name: Schema.String, category: Schema.String }),
  verified: Schema.Boolean,
  similarities: Schema.Array(Similarity).annotations({
    description: "Similarity to each trace of `traces`, in its order"
  }),
  mean_similarity: Schema.NullOr(Similarity).annotations({
    description: "Mean similarity to the other traces; null when alone"
  })
}).annotations({ identifier: "SsmTrace" })

export const SelfSimilarity = Schema.Struct({
  agent_id: AgentId,
  trace_count: Schema.NonNegativeInt,
  traces: Schema.Array(SsmTrace).annotations({ description: "Oldest first" })
}).annotations({ identifier: "SelfSimilarity" })

export class SsmApi extends HttpApiGroup.make("ssm")
  .add(
    HttpApiEndpoint.get("getSsm", "/ssm/:agent_id")
      .setPath(Schema.Struct({ agent_id: AgentId }))
      .addSuccess(SelfSimilarity)
  )
  .addError(NotFound)
  .addError(InternalError)
  .middleware(Authentication) {}
