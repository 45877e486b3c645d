/**
 * An agent's integrity summary (GET /v1/agents/{agent_id}/integrity).
 */
import * as Schema from "effect/Schema"
import { AgentId } from "./Ids.js"

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
