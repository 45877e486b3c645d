/**
 * Trust edges as published: one agent's public statement that it trusts another (docs/trust.md),
 * and the contributions that trust makes to the trusted agent's coherence component. The rule that
 * turns edges into points is core/TrustPropagation.ts.
 */
import { Schema } from "effect"
import { AgentId, DateTimeString } from "./Ids.js"
import { literalUnion } from "./Literals.js"

/** How much the source trusts the target: 0.25, 0.5 or 1 in the propagation rule. */
export const TRUST_LEVEL_NAMES = ["low", "medium", "high"] as const
export const TrustLevel = literalUnion(TRUST_LEVEL_NAMES, { identifier: "TrustLevel" })
export type TrustLevel = typeof TrustLevel.Type

/** Seen from the agent the list is for: edges it declared (outgoing) or edges naming it (incoming). */
export const TRUST_EDGE_DIRECTIONS = ["outgoing", "incoming"] as const
export const TrustEdgeDirection = literalUnion(TRUST_EDGE_DIRECTIONS, { identifier: "TrustEdgeDirection" })
export type TrustEdgeDirection = typeof TrustEdgeDirection.Type

export const TRUST_EDGE_ID_PREFIX = "te-"
export const TRUST_REASON_MAX = 500

export const TrustEdgeId = Schema.String.annotations({ identifier: "TrustEdgeId", description: "`te-<uuid>`" })

/** Trimmed, 1 to 500 characters. */
export const TrustReason = Schema.Trim.pipe(
  Schema.minLength(1, { message: () => `must be 1 to ${TRUST_REASON_MAX} characters` }),
  Schema.maxLength(TRUST_REASON_MAX, { message: () => `must be 1 to ${TRUST_REASON_MAX} characters` })
).annotations({ description: `Why the source trusts the target, 1 to ${TRUST_REASON_MAX} characters` })

export const TrustEdge = Schema.Struct({
  id: TrustEdgeId,
  source_agent_id: AgentId.annotations({ description: "The agent that trusts" }),
  target_agent_id: AgentId.annotations({ description: "The agent trusted" }),
  trust_level: TrustLevel,
  reason: Schema.String,
  created_at: DateTimeString
}).annotations({ identifier: "TrustEdge", description: "An active trust edge" })
export type TrustEdge = typeof TrustEdge.Type

/** What one truster adds to the trusted agent's coherence component (core/TrustPropagation.ts). */
export const TrustContribution = Schema.Struct({
  agent_id: AgentId.annotations({ description: "The truster" }),
  hops: Schema.Int.pipe(Schema.between(1, 3)).annotations({
    description: "Length of its shortest trust path to the agent (1: it trusts the agent directly)"
  }),
  path_weight: Schema.Number.annotations({
    description: "The best product of edge levels over its shortest paths × 0.85^(hops − 1)"
  }),
  base_score: Schema.NullOr(Schema.Int).annotations({
    description: "The truster's score without trust (null when it has none yet)"
  }),
  quality: Schema.Number.annotations({
    description: "clamp((base_score − 600) ÷ 400, 0, 1); 0 when the truster is not rated (NR)"
  }),
  points: Schema.Number.annotations({ description: "100 × path_weight × quality, unrounded" })
}).annotations({ identifier: "TrustContribution" })
export type TrustContribution = typeof TrustContribution.Type

export const CreateTrustEdge = Schema.Struct({
  target_agent_id: AgentId.annotations({ description: "The agent trusted; not the agent itself" }),
  trust_level: TrustLevel,
  reason: TrustReason
}).annotations({ identifier: "CreateTrustEdge" })

export const ListedTrustEdge = Schema.Struct({
  ...TrustEdge.fields,
  direction: TrustEdgeDirection.annotations({
    description: "outgoing: the agent declared it; incoming: the agent is its target"
  })
}).annotations({ identifier: "ListedTrustEdge" })

export const TrustEdgeList = Schema.Struct({
  trust_edges: Schema.Array(ListedTrustEdge).annotations({ description: "Active edges, oldest first" })
}).annotations({ identifier: "TrustEdgeList" })

export const TrustEdgeDeleted = Schema.Struct({
  deleted: Schema.Literal(true),
  id: TrustEdgeId
}).annotations({ identifier: "TrustEdgeDeleted" })
