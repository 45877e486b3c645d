/**
 * Drift alerts: AIP (integrity degrading within a session) and AAP (behaviour drifting from the
 * card across traces).
 *
 * `drift_direction` is a plain string on the wire (docs/api.md), so alerts written by other versions
 * or producers still decode; the directions Candor emits are the two lists below.
 */
import { Schema } from "effect"
import { literalUnion } from "./Literals.js"
import { AgentId, CheckpointId, DateTimeString, Identifier, SessionId, TraceId } from "./Ids.js"

/** AIP: majority concern category of the non-clear streak, or `unknown` when none has a strict majority. */
export const AIP_DRIFT_DIRECTIONS = [
  "injection_pattern",
  "value_erosion",
  "autonomy_creep",
  "deception_pattern",
  "reasoning_degradation",
  "intent_drift",
  "unknown"
] as const
export const AipDriftDirection = literalUnion(AIP_DRIFT_DIRECTIONS, { identifier: "AipDriftDirection" })
export type AipDriftDirection = typeof AipDriftDirection.Type

export const AAP_DRIFT_DIRECTIONS = [
  "autonomy_expansion",
  "value_drift",
  "principal_misalignment",
  "communication_drift",
  "unknown"
] as const
export const AapDriftDirection = literalUnion(AAP_DRIFT_DIRECTIONS, { identifier: "AapDriftDirection" })
export type AapDriftDirection = typeof AapDriftDirection.Type

export const DRIFT_SEVERITIES = ["low", "medium", "high"] as const
export const DriftSeverity = literalUnion(DRIFT_SEVERITIES, {
  identifier: "DriftSeverity",
  description: "From the clear ratio of the window: >= 0.7 low, >= 0.4 medium, else high"
})
export type DriftSeverity = typeof DriftSeverity.Type

export const DriftAlert = Schema.Struct({
  alert_id: Identifier,
  agent_id: AgentId,
  session_id: SessionId,
  checkpoint_ids: Schema.Array(CheckpointId),
  /** AAP alerts: the traces of the streak (their linked checkpoints, when known, are in `checkpoint_ids`). */
  trace_ids: Schema.optionalWith(Schema.Array(TraceId), { exact: true }),
  sustained_checks: Schema.NonNegativeInt,
  severity: DriftSeverity,
  drift_direction: Schema.String.annotations({ description: "An AIP or AAP drift direction" }),
  message: Schema.String,
  detection_timestamp: DateTimeString,
  /** Clear checkpoints / window size when the alert fired (absent on alerts that predate it). */
  integrity_similarity: Schema.optionalWith(Schema.Number.pipe(Schema.between(0, 1)), { exact: true })
}).annotations({ identifier: "DriftAlert", description: "Sustained integrity degradation within a session" })
export type DriftAlert = typeof DriftAlert.Type

const Similarity = Schema.Number.pipe(Schema.between(0, 1))

export const DriftIndicator = Schema.Struct({
  indicator: Schema.String,
  baseline: Schema.Number,
  current: Schema.Number,
  description: Schema.String
}).annotations({ identifier: "DriftIndicator" })

export const AapDriftSummary = Schema.Struct({
  baseline_size: Schema.NonNegativeInt.annotations({
    description: "Oldest analysed traces averaged into the baseline"
  }),
  similarity_threshold: Similarity,
  sustained_traces: Schema.NonNegativeInt,
  mean_similarity: Schema.NullOr(Similarity).annotations({
    description: "Over the traces after the baseline; null when none"
  }),
  similarities: Schema.Array(Schema.Struct({ trace_id: TraceId, similarity: Similarity })).annotations({
    description: "Each trace after the baseline against it, oldest first"
  }),
  alerts: Schema.Array(Schema.Struct({ alert: DriftAlert, indicators: Schema.Array(DriftIndicator) })).annotations({
    description: "Streaks of traces below the threshold"
  })
}).annotations({ identifier: "AapDriftSummary" })

export const AapDrift = Schema.Struct({
  agent_id: AgentId,
  analyzed_traces: Schema.NonNegativeInt,
  drift: AapDriftSummary
}).annotations({ identifier: "AapDrift" })

export const AipDriftAlerts = Schema.Struct({
  alerts: Schema.Array(DriftAlert).annotations({ description: "Newest first" }),
  agent_id: AgentId
}).annotations({ identifier: "AipDriftAlerts" })
