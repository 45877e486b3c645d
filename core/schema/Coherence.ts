/**
 * Fleet coherence as published: how well the declared values of an organization's agents (their
 * Alignment Cards' `values.declared` and `values.conflicts_with`) fit together, pair by pair and as
 * a fleet. `GET /v1/orgs/{org_id}/coherence` answers `OrgCoherence`; core/Coherence.ts computes the
 * `FleetCoherence` part, and anyone holding the same cards recomputes it exactly (docs/coherence.md).
 *
 * Scores are unrounded IEEE doubles on 0–1, summed in the order given here (pairs by sorted agent
 * ids), so a third party's recomputation matches to the last bit.
 */
import { Schema } from "effect"
import { literalUnion } from "./Literals.js"
import { AgentId, DateTimeString, Identifier } from "./Ids.js"

const Unit = Schema.Number.pipe(Schema.between(0, 1))

/** strong ≥ 0.85, good ≥ 0.70, moderate ≥ 0.50, poor below. */
export const COHERENCE_BANDS = ["strong", "good", "moderate", "poor"] as const
export const CoherenceBand = literalUnion(COHERENCE_BANDS, { identifier: "CoherenceBand" })
export type CoherenceBand = typeof CoherenceBand.Type

const ValueName = Schema.String.annotations({ description: "A value name, trimmed and lowercased" })
const ValueNames = Schema.Array(ValueName)

/** One value one side declares and the other lists in its `conflicts_with`. */
export const ValueConflict = Schema.Struct({
  value: ValueName,
  declared_by: AgentId,
  conflicts_with_of: AgentId.annotations({ description: "The agent whose conflicts_with lists the value" })
}).annotations({ identifier: "CoherenceValueConflict" })
export type ValueConflict = typeof ValueConflict.Type

export const PairCoherence = Schema.Struct({
  agent_a: AgentId,
  agent_b: AgentId.annotations({ description: "In a fleet, agent_a < agent_b" }),
  score: Unit.annotations({
    description: "matched ÷ |required| × (1 − min(1, 0.5 × conflicts ÷ |required|))"
  }),
  band: CoherenceBand,
  compatible: Schema.Boolean.annotations({ description: "No conflict and score ≥ 0.70" }),
  required_values: ValueNames.annotations({
    description: "The task's values when given, else the union of both cards' declared values"
  }),
  matched_values: ValueNames.annotations({ description: "Required values both cards declare" }),
  missing_values: ValueNames.annotations({ description: "Required values at most one card declares" }),
  conflicting_values: Schema.Array(ValueConflict).annotations({
    description: "Each (value, direction) once; conflicts count whether or not the value is required"
  })
}).annotations({ identifier: "PairCoherence" })
export type PairCoherence = typeof PairCoherence.Type

export const PairwiseCoherence = Schema.Struct({
  agent_ids: Schema.Array(AgentId).annotations({ description: "Sorted; the rows and columns of scores" }),
  scores: Schema.Array(Schema.Array(Schema.NullOr(Unit))).annotations({
    description:
      "scores[i][j]: the pair score of agent_ids[i] and agent_ids[j]; 1 on the diagonal; null for a pair " +
      "with nothing to compare (neither card declares a value)"
  }),
  pairs: Schema.Array(PairCoherence).annotations({
    description: "Every scored pair, ordered by (agent_a, agent_b); pairs with a null score are left out"
  })
}).annotations({ identifier: "PairwiseCoherence" })
export type PairwiseCoherence = typeof PairwiseCoherence.Type

export const CoherenceOutlier = Schema.Struct({
  agent_id: AgentId,
  mean_pair_score: Unit,
  sigmas_below: Schema.Number.annotations({
    description: "(fleet_score − mean_pair_score) ÷ σ, σ the population deviation of the agents' mean pair scores"
  }),
  conflicting_values: ValueNames.annotations({ description: "Values in conflict between it and any peer" })
}).annotations({ identifier: "CoherenceOutlier" })
export type CoherenceOutlier = typeof CoherenceOutlier.Type

export const CoherenceCluster = Schema.Struct({
  agent_ids: Schema.Array(AgentId).annotations({ description: "Sorted" }),
  shared_values: ValueNames.annotations({ description: "Values every member declares" }),
  mean_pair_score: Schema.NullOr(Unit).annotations({
    description: "Mean score of the scored pairs inside the cluster; null for a single agent"
  })
}).annotations({ identifier: "CoherenceCluster" })
export type CoherenceCluster = typeof CoherenceCluster.Type

export const ValueDivergence = Schema.Struct({
  value: ValueName,
  agents_declaring: Schema.Array(AgentId),
  agents_missing: Schema.Array(AgentId).annotations({
    description: "Agents that neither declare the value nor list it in conflicts_with"
  }),
  agents_in_conflict: Schema.Array(AgentId).annotations({
    description: "Agents whose conflicts_with lists the value"
  }),
  impact_on_fleet_score: Unit.annotations({
    description:
      "(missing + in conflict) ÷ agents. This is PREVALENCE (the share of the fleet that does not share the " +
      "value), not impact: it does not say how much fleet_score would change if they did"
  })
}).annotations({ identifier: "CoherenceValueDivergence" })
export type ValueDivergence = typeof ValueDivergence.Type

export const CoherenceAgentSummary = Schema.Struct({
  agent_id: AgentId,
  mean_pair_score: Schema.NullOr(Unit).annotations({
    description: "Mean of the agent's scored pairs; null without one (what reputation's coherence component reads)"
  }),
  peers: Schema.NonNegativeInt.annotations({ description: "Other agents it has a scored pair with" }),
  compatible_peers: Schema.NonNegativeInt
}).annotations({ identifier: "CoherenceAgentSummary" })
export type CoherenceAgentSummary = typeof CoherenceAgentSummary.Type

export const FleetCoherence = Schema.Struct({
  fleet_score: Schema.NullOr(Unit).annotations({
    description: "Mean of the scored pair scores; null with fewer than two agents or no scored pair"
  }),
  min_pair_score: Schema.NullOr(Unit),
  max_pair_score: Schema.NullOr(Unit),
  required_values: Schema.NullOr(ValueNames).annotations({
    description: "The task's values the pairs were scored against; null: each pair's own union"
  }),
  pairwise: PairwiseCoherence,
  outliers: Schema.Array(CoherenceOutlier).annotations({
    description: "With at least 3 agents: mean pair score at least 1σ below fleet_score (σ > 0)"
  }),
  clusters: Schema.Array(CoherenceCluster).annotations({
    description:
      "Connected components over compatible pairs (every agent in exactly one); largest first, then by first agent id"
  }),
  divergence: Schema.Array(ValueDivergence).annotations({
    description: "One entry per value (required, else declared by any agent); highest prevalence first, then by name"
  }),
  agent_summaries: Schema.Array(CoherenceAgentSummary).annotations({ description: "Sorted by agent id" })
}).annotations({ identifier: "FleetCoherence" })
export type FleetCoherence = typeof FleetCoherence.Type

export const OrgCoherence = Schema.Struct({
  org_id: Identifier,
  agent_count: Schema.NonNegativeInt.annotations({ description: "Agents of the organization with an active card" }),
  agents_without_card: Schema.NonNegativeInt.annotations({
    description: "Agents of the organization without an active card (not part of the fleet)"
  }),
  ...FleetCoherence.fields,
  computed_at: DateTimeString,
  cached_until: DateTimeString.annotations({
    description: "Served from cache until then unless a card of the organization changes first"
  })
}).annotations({
  identifier: "OrgCoherence",
  description: "The fleet coherence of an organization's agents with an active Alignment Card"
})
export type OrgCoherence = typeof OrgCoherence.Type
