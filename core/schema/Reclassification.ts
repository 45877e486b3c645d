/**
 * Reclassifications, card amendments, the recompute answer and the compliance export, as the API
 * publishes them (docs/reclassification.md).
 */
import { Schema } from "effect"
import { AgentId, CheckpointId, DateTimeString, Hex32, SessionId } from "./Ids.js"
import { literalUnion } from "./Literals.js"
import { Grade } from "./Reputation.js"
import { Verdict } from "./Verdict.js"

export const RECLASSIFICATION_TYPES = ["card_gap", "behavior_gap"] as const
export const ReclassificationType = literalUnion(RECLASSIFICATION_TYPES, {
  identifier: "ReclassificationType",
  description:
    "card_gap: the card did not say what the agent may do (not a violation); behavior_gap: the verdict stands"
})
export type ReclassificationType = typeof ReclassificationType.Type

export const AMENDMENT_TRIGGERS = ["reclassification", "policy_change", "manual"] as const
export const AmendmentTrigger = literalUnion(AMENDMENT_TRIGGERS, { identifier: "AmendmentTrigger" })

/** Longest reason, and longest amended field name and value. */
export const MAX_REASON = 1000
export const MAX_FIELD = 200
export const MAX_VALUE = 10_000

const Text = (max: number) => Schema.String.pipe(Schema.minLength(1), Schema.maxLength(max))

export const CardAmendmentRequest = Schema.Struct({
  field_changed: Text(MAX_FIELD),
  old_value: Schema.NullOr(Schema.String.pipe(Schema.maxLength(MAX_VALUE))),
  new_value: Schema.NullOr(Schema.String.pipe(Schema.maxLength(MAX_VALUE)))
}).annotations({ identifier: "CardAmendmentRequest" })

export const ReclassifyRequest = Schema.Struct({
  checkpoint_id: CheckpointId,
  reason: Text(MAX_REASON),
  new_type: ReclassificationType,
  card_amendment: Schema.optionalWith(CardAmendmentRequest, { exact: true })
}).annotations({ identifier: "ReclassifyRequest" })
export type ReclassifyRequest = typeof ReclassifyRequest.Type

export const ScoreImpact = Schema.Struct({
  score_before: Schema.Int,
  score_after: Schema.Int
}).annotations({ identifier: "ScoreImpact" })

export const ReclassifyResult = Schema.Struct({
  reclassification_id: Schema.String.annotations({ description: "rcl-…" }),
  checkpoint_id: CheckpointId,
  original_verdict: Verdict,
  new_type: ReclassificationType,
  approved_by: Schema.String,
  score_impact: ScoreImpact,
  governance_index: Schema.NonNegativeInt.annotations({
    description: "The reclassification.create entry's index in the agent's governance log"
  })
}).annotations({ identifier: "ReclassifyResult" })

export const Reclassification = Schema.Struct({
  reclassification_id: Schema.String,
  agent_id: AgentId,
  checkpoint_id: CheckpointId,
  session_id: SessionId,
  original_verdict: Verdict,
  new_type: ReclassificationType,
  reason: Schema.String,
  approved_by: Schema.String,
  chain_hash: Hex32.annotations({
    description: "The reclassified checkpoint's chain hash (its certificate's `chain.hash`)"
  }),
  governance_index: Schema.NonNegativeInt,
  created_at: DateTimeString
}).annotations({ identifier: "Reclassification" })
export type Reclassification = typeof Reclassification.Type

export const ReclassificationList = Schema.Struct({
  agent_id: AgentId,
  reclassifications: Schema.Array(Reclassification)
}).annotations({ identifier: "ReclassificationList" })

export const CardAmendment = Schema.Struct({
  amendment_id: Schema.String,
  agent_id: AgentId,
  reclassification_id: Schema.NullOr(Schema.String),
  field_changed: Schema.String,
  old_value: Schema.NullOr(Schema.String),
  new_value: Schema.NullOr(Schema.String),
  triggered_by: AmendmentTrigger,
  created_by: Schema.String,
  created_at: DateTimeString
}).annotations({ identifier: "CardAmendment" })
export type CardAmendment = typeof CardAmendment.Type

export const CardAmendmentList = Schema.Struct({
  agent_id: AgentId,
  card_amendments: Schema.Array(CardAmendment)
}).annotations({ identifier: "CardAmendmentList" })

export const RecomputeRequest = Schema.Struct({
  reason: Schema.optionalWith(Text(MAX_REASON), { exact: true })
}).annotations({ identifier: "RecomputeRequest" })

export const RecomputeResult = Schema.Struct({
  agent_id: AgentId,
  score_before: Schema.NullOr(Schema.Int),
  score_after: Schema.Int,
  grade_before: Schema.NullOr(Grade),
  grade_after: Grade,
  reclassifications_applied: Schema.NonNegativeInt.annotations({
    description: "card_gap reclassifications the score excludes (those within its log prefix)"
  }),
  propagation: Schema.Struct({
    agents_affected: Schema.NonNegativeInt,
    max_depth: Schema.Int,
    decay_factor: Schema.Number
  })
}).annotations({ identifier: "RecomputeResult" })

export const ComplianceExportItem = Schema.Struct({
  checkpoint_id: CheckpointId,
  session_id: SessionId,
  timestamp: DateTimeString,
  verdict: Verdict.annotations({ description: "The certified verdict" }),
  reclassification: Schema.NullOr(
    Schema.Struct({ reclassification_id: Schema.String, new_type: ReclassificationType, created_at: DateTimeString })
  ),
  certificate_id: Schema.NullOr(Schema.String)
}).annotations({ identifier: "ComplianceExportItem" })
export type ComplianceExportItem = typeof ComplianceExportItem.Type

export const ComplianceExport = Schema.Struct({
  agent_id: AgentId,
  from: DateTimeString,
  to: DateTimeString,
  checkpoints: Schema.Array(ComplianceExportItem)
}).annotations({ identifier: "ComplianceExport" })
