/**
 * Agent reputation as published: `GET /v1/reputation/{agent_id}` and the records around it. Every
 * number here is recomputable by a third party from the agent's public certificates, the signed
 * tree head named in `computed_over`, and the inputs each component lists (docs/reputation.md).
 */
import { Schema } from "effect"
import { literalUnion } from "./Literals.js"
import { AgentId, DateTimeString, Hex32 } from "./Ids.js"
import { SignedNote } from "./Certificate.js"

/** Letter grades, best first, and NR (not rated: too few analysed checkpoints). */
export const GRADES = ["AAA", "AA", "A", "BBB", "BB", "B", "CCC", "NR"] as const
export const Grade = literalUnion(GRADES, { identifier: "Grade" })
export type Grade = typeof Grade.Type

export const CONFIDENCES = ["insufficient", "low", "medium", "high"] as const
export const Confidence = literalUnion(CONFIDENCES, { identifier: "Confidence" })
export type Confidence = typeof Confidence.Type

/** public: listed and readable by anyone; unlisted: readable by id, not listed; private: 404 on public routes. */
export const VISIBILITIES = ["public", "unlisted", "private"] as const
export const Visibility = literalUnion(VISIBILITIES, { identifier: "Visibility" })
export type Visibility = typeof Visibility.Type

export const COMPONENT_KEYS = [
  "integrity_ratio",
  "compliance",
  "drift_stability",
  "trace_completeness",
  "coherence_compatibility"
] as const
export const ComponentKey = literalUnion(COMPONENT_KEYS, { identifier: "ReputationComponentKey" })
export type ComponentKey = typeof ComponentKey.Type

/** A score or a component of one, agents' and teams' alike: an integer on 0–1000. */
export const Score = Schema.Int.pipe(Schema.between(0, 1000))

/** A weighted component of a score, with what it was computed from (agents' and teams' share the shape). */
export const scoredComponent = <K extends Schema.Schema.Any>(key: K, inputsDescription: string) =>
  Schema.Struct({
    key,
    label: Schema.String,
    score: Score,
    weight: Schema.Number,
    weighted_score: Schema.Number.annotations({ description: "score × weight, unrounded" }),
    inputs: Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
      description: inputsDescription
    })
  })

export const ReputationComponent = scoredComponent(
  ComponentKey,
  "Everything the component was computed from (docs/reputation.md names each input)"
).annotations({ identifier: "ReputationComponent" })
export type ReputationComponent = typeof ReputationComponent.Type

/** The log prefix a score was computed over: the first `tree_size` certificates of the agent's log. */
export const ComputedOver = Schema.Struct({
  tree_size: Schema.NonNegativeInt,
  root: Schema.NullOr(Hex32).annotations({ description: "null for an empty log" }),
  checkpoint: Schema.NullOr(SignedNote).annotations({ description: "The signed tree head of exactly tree_size" })
}).annotations({ identifier: "ReputationComputedOver" })
export type ComputedOver = typeof ComputedOver.Type

export const AgentReputation = Schema.Struct({
  agent_id: AgentId,
  score: Score,
  grade: Grade,
  tier: Schema.String.annotations({ description: "The grade's name: Exemplary … Critical, or Not Rated" }),
  is_eligible: Schema.Boolean,
  checkpoint_count: Schema.NonNegativeInt.annotations({
    description: "Analysed checkpoints (eligibility counts these)"
  }),
  confidence: Confidence,
  components: Schema.Array(ReputationComponent),
  computed_at: DateTimeString,
  computed_over: ComputedOver,
  trend_30d: Schema.NullOr(Schema.Int).annotations({
    description: "score − the score recorded 30 days before computed_at; null without a record that old"
  }),
  visibility: Visibility
}).annotations({ identifier: "AgentReputation" })
export type AgentReputation = typeof AgentReputation.Type

export const ReputationHistoryItem = Schema.Struct({
  score: Score,
  grade: Grade,
  confidence: Confidence,
  checkpoint_count: Schema.NonNegativeInt,
  tree_size: Schema.NonNegativeInt,
  kind: literalUnion(["recomputation", "weekly_snapshot"]),
  computed_at: DateTimeString
}).annotations({ identifier: "ReputationHistoryItem" })
export type ReputationHistoryItem = typeof ReputationHistoryItem.Type
