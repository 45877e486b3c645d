/**
 * Self-similarity of an agent's traces (GET /v1/agents/{agent_id}/ssm).
 */
import * as Schema from "effect/Schema"
import { AgentId, DateTimeString, TraceId } from "./Ids.js"

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
