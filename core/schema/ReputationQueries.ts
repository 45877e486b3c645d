/**
 * What the reputation routes answer besides the record itself (docs/reputation.md): history, benchmarks,
 * batch, search, comparison, and an agent's visibility.
 */
import * as Schema from "effect/Schema"
import { AgentId, DateTimeString } from "./Ids.js"
import { literalUnion } from "./Literals.js"
import { AgentReputation, ComponentKey, ReputationHistoryItem, Visibility } from "./Reputation.js"

/** The most agents one batch reads, and one comparison holds. */
const BATCH_MAX = 50

export const ReputationHistory = Schema.Struct({
  agent_id: AgentId,
  days: Schema.Int,
  history: Schema.Array(ReputationHistoryItem).annotations({ description: "Newest first" })
}).annotations({ identifier: "ReputationHistory" })

const Statistic = Schema.NullOr(Schema.Number)

/** The grades of rated agents: every grade but NR. */
export const RATED_GRADES = ["AAA", "AA", "A", "BBB", "BB", "B", "CCC"] as const

export const ReputationBenchmarks = Schema.Struct({
  count: Schema.NonNegativeInt.annotations({ description: "Public, eligible (rated) agents" }),
  grades: Schema.Record({ key: literalUnion(RATED_GRADES), value: Schema.NonNegativeInt }).annotations({
    description: "Agents per grade (every rated grade, 0 included)"
  }),
  mean: Statistic,
  percentiles: Schema.Struct({ p10: Statistic, p25: Statistic, p50: Statistic, p75: Statistic, p90: Statistic }),
  components: Schema.Record({ key: ComponentKey, value: Statistic }).annotations({
    description: "Mean score of each component"
  }),
  computed_at: DateTimeString
}).annotations({
  identifier: "ReputationBenchmarks",
  description: "The score distribution over public eligible agents; statistics are null without any"
})

export const ReputationBatchRequest = Schema.Struct({
  agent_ids: Schema.Array(AgentId)
    .pipe(Schema.minItems(1), Schema.maxItems(BATCH_MAX))
    .annotations({
      description: `1 to ${BATCH_MAX} agent ids`
    })
}).annotations({ identifier: "ReputationBatchRequest" })

export const ReputationBatch = Schema.Struct({
  reputations: Schema.Array(AgentReputation).annotations({ description: "In the order asked" }),
  not_found: Schema.Array(AgentId).annotations({ description: "Unknown, or not readable by the caller" })
}).annotations({ identifier: "ReputationBatch" })

export const ReputationSearch = Schema.Struct({
  reputations: Schema.Array(AgentReputation),
  total: Schema.NonNegativeInt,
  limit: Schema.Int,
  offset: Schema.Int
}).annotations({ identifier: "ReputationSearch" })

export const ComponentDifference = Schema.Struct({
  key: ComponentKey,
  label: Schema.String,
  scores: Schema.Array(Schema.Int).annotations({ description: "The agents' component scores, in their order" }),
  spread: Schema.Int.annotations({ description: "Highest − lowest" }),
  highest: AgentId.annotations({ description: "The agent with the highest score (the first of equals)" })
}).annotations({ identifier: "ReputationComponentDifference" })

export const ReputationComparison = Schema.Struct({
  agent_ids: Schema.Array(AgentId),
  reputations: Schema.Array(AgentReputation),
  score_spread: Schema.Int,
  differences: Schema.Array(ComponentDifference)
}).annotations({ identifier: "ReputationComparison" })

export const AgentVisibility = Schema.Struct({ agent_id: AgentId, visibility: Visibility }).annotations({
  identifier: "AgentVisibility"
})

export const VisibilityUpdate = Schema.Struct({ visibility: Visibility }).annotations({
  identifier: "VisibilityUpdate"
})
