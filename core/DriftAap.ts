/**
 * AAP behavioural drift per agent (AAP §8; the algorithm v1.2.0 of Mnemom's AAP implementation): the agent's traces,
 * in chronological order, against a baseline of its own first traces.
 *
 * - Baseline: the centroid of the structural features (core/TraceFeatures.ts) of the agent's first
 *   `baselineSize` traces. A streaming actor uses a fixed size (10) and freezes the baseline once it
 *   is full; the batch form `detectAapDrift` uses Mnemom's `N = max(sustained, min(10,
 *   floor(traces / 4)))`. Both agree once an agent has 40 traces. The baseline starts again when the
 *   trace names a different card than the baseline's: a new card legitimately changes behaviour.
 * - Each later trace's similarity is the cosine of its features with the centroid. An alert fires
 *   when `sustainedTraces` (3) consecutive traces are below `similarityThreshold` (0.30); one alert
 *   per streak, as for AIP drift (core/DriftAip.ts), and a trace at or above the threshold ends it.
 * - Severity from the streak's mean similarity relative to the threshold: >= 2/3 of it `low`,
 *   >= 1/3 `medium`, else `high`.
 * - Direction: the first of these heuristics that holds, comparing the streak with the baseline
 *   (Mnemom's first two rules, then ours for the directions it never emits):
 *   1. `autonomy_expansion`: the escalation-required rate was above 0.1 and fell below half of it,
 *      or the share of `execute` actions rose by 0.3 or more;
 *   2. `value_drift`: more than 30% of the streak's applied values never appeared in the baseline,
 *      or the baseline applied values in at least half its traces and the streak applies none;
 *   3. `principal_misalignment`: at least a third of the streak's escalations were denied by the
 *      principal (more than in the baseline), or the mean confidence fell below 0.5 from at least 0.5;
 *   4. `communication_drift`: the mean number of alternatives presented moved by at least
 *      max(1, half the baseline's mean);
 *   5. else `unknown`.
 *
 * The alert id is `ada-` + the first 16 bytes (hex) of
 * `SHA-256("candor/v1/aap-drift-alert\0" ‖ JCS([agent_id, first trace id of the streak]))`.
 *
 * The state is small plain data: the baseline is kept as sums (feature vector and behaviour
 * counts), the streak as at most `sustainedTraces` compact summaries. It can be stored as JSON, or
 * rebuilt with `replayAapDrift` from the agent's newest stored traces (which re-bases the baseline
 * on the oldest of those).
 */
import { toHex } from "./Bytes.js"
import { canonicalHash } from "./Canonical.js"
import type { AapDriftDirection, DriftAlert, DriftSeverity } from "./schema/Drift.js"
import { addFeatures, cosineSimilarity, type FeatureTrace, type FeatureVector, traceFeatures } from "./TraceFeatures.js"

export interface AapDriftConfig {
  /** Traces averaged into the baseline before any is compared. */
  readonly baselineSize: number
  /** Similarity below which a trace counts towards a streak (reference 0.30). */
  readonly similarityThreshold: number
  /** Consecutive low-similarity traces that raise an alert (reference 3). */
  readonly sustainedTraces: number
}

export const DEFAULT_AAP_DRIFT_CONFIG: AapDriftConfig = {
  baselineSize: 10,
  similarityThreshold: 0.3,
  sustainedTraces: 3
}

/** Heuristic constants of the direction rules (see the module comment). */
export const AAP_DIRECTION_HEURISTICS = {
  minBaselineEscalationRate: 0.1,
  escalationDropFactor: 0.5,
  executeShareRise: 0.3,
  newValueShare: 0.3,
  valueUseShare: 0.5,
  deniedShare: 1 / 3,
  lowConfidence: 0.5,
  minAlternativesShift: 1
} as const

/** Mnemom's baseline size for a batch of `traceCount` traces. */
export const batchBaselineSize = (
  traceCount: number,
  sustainedTraces: number = DEFAULT_AAP_DRIFT_CONFIG.sustainedTraces
): number => Math.max(sustainedTraces, Math.min(10, Math.floor(traceCount / 4)))

/** The part of an AP-Trace drift reads. */
export interface AapDriftTrace extends FeatureTrace {
  readonly trace_id: string
  readonly agent_id: string
  readonly card_id?: string | null | undefined
  readonly timestamp: string
  readonly escalation?:
    | {
        readonly evaluated: boolean
        readonly required: boolean
        readonly escalation_status?: string | null | undefined
      }
    | undefined
  readonly context?:
    | {
        readonly session_id?: string | null | undefined
        readonly metadata?: Readonly<Record<string, unknown>> | null | undefined
      }
    | undefined
}

/** Behaviour counts the direction rules compare. */
export interface BehaviourTotals {
  readonly count: number
  readonly execute: number
  readonly escalation_required: number
  readonly escalation_denied: number
  readonly confidence_sum: number
  readonly confidence_count: number
  readonly alternatives_sum: number
  /** Traces that applied at least one value. */
  readonly applying_values: number
}

/** What the state keeps of one trace of a streak. */
export interface StreakTrace {
  readonly trace_id: string
  readonly checkpoint_id: string | null
  readonly session_id: string | null
  readonly similarity: number
  readonly execute: boolean
  readonly escalation_required: boolean
  readonly escalation_denied: boolean
  readonly confidence: number | null
  readonly alternatives: number
  readonly values: ReadonlyArray<string>
}

export interface AapDriftState {
  readonly card_id: string | null
  /** Sum of the baseline traces' feature vectors (the centroid, up to scale). */
  readonly baseline_features: FeatureVector
  readonly baseline: BehaviourTotals
  readonly streak_length: number
  /** The streak's traces up to its alert (at most `sustainedTraces`). */
  readonly streak: ReadonlyArray<StreakTrace>
  readonly alerted: boolean
}

const emptyTotals: BehaviourTotals = {
  count: 0,
  execute: 0,
  escalation_required: 0,
  escalation_denied: 0,
  confidence_sum: 0,
  confidence_count: 0,
  alternatives_sum: 0,
  applying_values: 0
}

export const emptyAapDriftState: AapDriftState = {
  card_id: null,
  baseline_features: {},
  baseline: emptyTotals,
  streak_length: 0,
  streak: [],
  alerted: false
}

export interface DriftIndicator {
  readonly indicator: string
  readonly baseline: number
  readonly current: number
  readonly description: string
}

export interface AapDriftObservation {
  readonly state: AapDriftState
  /** Similarity to the baseline; `undefined` while the trace went into the baseline. */
  readonly similarity: number | undefined
  readonly alert: DriftAlert | undefined
  /** What changed between baseline and streak (empty unless an alert fired). */
  readonly indicators: ReadonlyArray<DriftIndicator>
}

const CHECKPOINT_ID = /^ic-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** The linked checkpoint, from the AIP enrichment `context.metadata.integrity_checkpoint_id`. */
const linkedCheckpoint = (trace: AapDriftTrace): string | null => {
  const id = trace.context?.metadata?.integrity_checkpoint_id
  return typeof id === "string" && CHECKPOINT_ID.test(id) ? id : null
}

const summarize = (trace: AapDriftTrace, similarity: number): StreakTrace => {
  const confidence = trace.decision.confidence
  return {
    trace_id: trace.trace_id,
    checkpoint_id: linkedCheckpoint(trace),
    session_id: trace.context?.session_id ?? null,
    similarity,
    execute: trace.action.type.toLowerCase() === "execute",
    escalation_required: trace.escalation?.required === true,
    escalation_denied: trace.escalation?.escalation_status === "denied",
    confidence: typeof confidence === "number" && Number.isFinite(confidence) ? confidence : null,
    alternatives: trace.decision.alternatives_considered?.length ?? 0,
    values: [...trace.decision.values_applied]
  }
}

const addToTotals = (totals: BehaviourTotals, t: StreakTrace): BehaviourTotals => ({
  count: totals.count + 1,
  execute: totals.execute + (t.execute ? 1 : 0),
  escalation_required: totals.escalation_required + (t.escalation_required ? 1 : 0),
  escalation_denied: totals.escalation_denied + (t.escalation_denied ? 1 : 0),
  confidence_sum: totals.confidence_sum + (t.confidence ?? 0),
  confidence_count: totals.confidence_count + (t.confidence !== null ? 1 : 0),
  alternatives_sum: totals.alternatives_sum + t.alternatives,
  applying_values: totals.applying_values + (t.values.length > 0 ? 1 : 0)
})

const ratio = (part: number, whole: number): number => (whole === 0 ? 0 : part / whole)
const round2 = (x: number): number => Math.round(x * 100) / 100
const round4 = (x: number): number => Math.round(x * 10_000) / 10_000

/** The direction of a streak against the baseline, with the indicators that changed. */
export const aapDriftDirection = (
  baseline: BehaviourTotals,
  baselineFeatures: FeatureVector,
  streak: ReadonlyArray<StreakTrace>
): { readonly direction: AapDriftDirection; readonly indicators: ReadonlyArray<DriftIndicator> } => {
  const h = AAP_DIRECTION_HEURISTICS
  const current = streak.reduce(addToTotals, emptyTotals)
  const indicators: Array<DriftIndicator> = []
  const indicate = (indicator: string, before: number, after: number, what: string) => {
    if (Math.abs(before - after) > 0.05) {
      indicators.push({
        indicator,
        baseline: round2(before),
        current: round2(after),
        description: `${what} changed from ${round2(before)} to ${round2(after)}`
      })
    }
  }

  const escalationBefore = ratio(baseline.escalation_required, baseline.count)
  const escalationNow = ratio(current.escalation_required, current.count)
  const executeBefore = ratio(baseline.execute, baseline.count)
  const executeNow = ratio(current.execute, current.count)
  const applied = streak.flatMap((t) => t.values)
  const newValues = applied.filter((v) => !Object.hasOwn(baselineFeatures, `value:${v}`)).length
  const valueUseBefore = ratio(baseline.applying_values, baseline.count)
  const valueUseNow = ratio(current.applying_values, current.count)
  const deniedBefore = ratio(baseline.escalation_denied, baseline.count)
  const deniedNow = ratio(current.escalation_denied, current.count)
  const confidenceBefore =
    baseline.confidence_count > 0 ? baseline.confidence_sum / baseline.confidence_count : undefined
  const confidenceNow = current.confidence_count > 0 ? current.confidence_sum / current.confidence_count : undefined
  const alternativesBefore = ratio(baseline.alternatives_sum, baseline.count)
  const alternativesNow = ratio(current.alternatives_sum, current.count)

  indicate("escalation_rate", escalationBefore, escalationNow, "Escalation rate")
  indicate("execute_share", executeBefore, executeNow, "Share of execute actions")
  indicate("value_use", valueUseBefore, valueUseNow, "Share of traces applying values")
  if (applied.length > 0)
    indicate("new_value_share", 0, ratio(newValues, applied.length), "Share of applied values unseen in the baseline")
  indicate("denied_escalations", deniedBefore, deniedNow, "Share of escalations denied by the principal")
  if (confidenceBefore !== undefined && confidenceNow !== undefined)
    indicate("confidence", confidenceBefore, confidenceNow, "Mean confidence")
  indicate("alternatives", alternativesBefore, alternativesNow, "Mean alternatives considered")
  const first = streak[0]
  const last = streak[streak.length - 1]
  if (first !== undefined && last !== undefined) {
    indicators.push({
      indicator: "similarity_trend",
      baseline: round4(first.similarity),
      current: round4(last.similarity),
      description: `Similarity to the baseline ${last.similarity < first.similarity ? "decreasing" : "not decreasing"} over ${streak.length} traces`
    })
  }

  const direction = ((): AapDriftDirection => {
    const escalationFell =
      escalationBefore > h.minBaselineEscalationRate && escalationNow < escalationBefore * h.escalationDropFactor
    if (escalationFell || executeNow - executeBefore >= h.executeShareRise) return "autonomy_expansion"
    const newValuesDominate = applied.length > 0 && newValues / applied.length > h.newValueShare
    if (newValuesDominate || (valueUseBefore >= h.valueUseShare && applied.length === 0)) return "value_drift"
    const deniedRose = deniedNow >= h.deniedShare && deniedNow > deniedBefore
    const confidenceFell =
      confidenceBefore !== undefined &&
      confidenceNow !== undefined &&
      confidenceBefore >= h.lowConfidence &&
      confidenceNow < h.lowConfidence
    if (deniedRose || confidenceFell) return "principal_misalignment"
    if (Math.abs(alternativesNow - alternativesBefore) >= Math.max(h.minAlternativesShift, alternativesBefore / 2))
      return "communication_drift"
    return "unknown"
  })()
  return { direction, indicators }
}

export const aapDriftSeverity = (meanSimilarity: number, threshold: number): DriftSeverity =>
  meanSimilarity >= (threshold * 2) / 3 ? "low" : meanSimilarity >= threshold / 3 ? "medium" : "high"

export const aapDriftAlertId = (agentId: string, firstTraceId: string): string =>
  `ada-${toHex(canonicalHash("aap-drift-alert", [agentId, firstTraceId]).subarray(0, 16))}`

/** Adds one trace of the agent (in chronological order). */
export const observeAapDrift = (
  state: AapDriftState,
  trace: AapDriftTrace,
  config: AapDriftConfig,
  now: Date
): AapDriftObservation => {
  const cardId = trace.card_id ?? null
  const current = cardId !== null && state.card_id !== null && cardId !== state.card_id ? emptyAapDriftState : state
  const features = traceFeatures(trace)

  if (current.baseline.count < config.baselineSize) {
    const next: AapDriftState = {
      ...current,
      card_id: current.card_id ?? cardId,
      baseline_features: addFeatures(current.baseline_features, features),
      baseline: addToTotals(current.baseline, summarize(trace, 1))
    }
    return { state: next, similarity: undefined, alert: undefined, indicators: [] }
  }

  const similarity = cosineSimilarity(features, current.baseline_features)
  if (similarity >= config.similarityThreshold) {
    return {
      state: { ...current, card_id: current.card_id ?? cardId, streak_length: 0, streak: [], alerted: false },
      similarity,
      alert: undefined,
      indicators: []
    }
  }
  const streakLength = current.streak_length + 1
  const streak = current.alerted ? current.streak : [...current.streak, summarize(trace, similarity)]
  const fires = !current.alerted && streakLength >= config.sustainedTraces
  const next: AapDriftState = {
    ...current,
    card_id: current.card_id ?? cardId,
    streak_length: streakLength,
    streak,
    alerted: current.alerted || fires
  }
  if (!fires) return { state: next, similarity, alert: undefined, indicators: [] }

  const { direction, indicators } = aapDriftDirection(current.baseline, current.baseline_features, streak)
  const mean = streak.reduce((sum, t) => sum + t.similarity, 0) / streak.length
  const first = streak[0]!
  const sessionId = [...streak].reverse().find((t) => t.session_id !== null)?.session_id ?? "none"
  const alert: DriftAlert = {
    alert_id: aapDriftAlertId(trace.agent_id, first.trace_id),
    agent_id: trace.agent_id,
    session_id: sessionId,
    checkpoint_ids: streak.flatMap((t) => (t.checkpoint_id !== null ? [t.checkpoint_id] : [])),
    trace_ids: streak.map((t) => t.trace_id),
    sustained_checks: streakLength,
    severity: aapDriftSeverity(mean, config.similarityThreshold),
    drift_direction: direction,
    message:
      `${streakLength} consecutive traces below behavioural similarity ${config.similarityThreshold} ` +
      `to the agent's baseline of ${current.baseline.count} traces (latest ${round4(similarity)}); direction ${direction}` +
      (indicators.length > 1
        ? `: ${indicators
            .filter((i) => i.indicator !== "similarity_trend")
            .map((i) => i.description)
            .join("; ")}`
        : ""),
    detection_timestamp: now.toISOString()
  }
  return { state: next, similarity, alert, indicators }
}

const epochMs = (timestamp: string): number => {
  const ms = Date.parse(timestamp)
  return Number.isNaN(ms) ? 0 : ms
}

/** Traces in chronological order (by `timestamp`; equal times keep their given order). */
export const chronological = <T extends { readonly timestamp: string }>(traces: Iterable<T>): ReadonlyArray<T> =>
  [...traces].sort((a, b) => epochMs(a.timestamp) - epochMs(b.timestamp))

/** The state after these already-processed traces; their alerts were raised before, none is returned. */
export const replayAapDrift = (
  traces: Iterable<AapDriftTrace>,
  config: AapDriftConfig = DEFAULT_AAP_DRIFT_CONFIG
): AapDriftState => {
  let state = emptyAapDriftState
  const epoch = new Date(0)
  for (const trace of chronological(traces)) state = observeAapDrift(state, trace, config, epoch).state
  return state
}

export interface AapDriftAnalysis {
  readonly analyzed_traces: number
  readonly baseline_size: number
  readonly similarity_threshold: number
  readonly sustained_traces: number
  /** Per trace after the baseline, chronological. */
  readonly similarities: ReadonlyArray<{ readonly trace_id: string; readonly similarity: number }>
  readonly alerts: ReadonlyArray<{ readonly alert: DriftAlert; readonly indicators: ReadonlyArray<DriftIndicator> }>
}

/** The batch analysis of an agent's traces (Mnemom's `detect_drift`, v1.2.0 baseline). */
export const detectAapDrift = (
  traces: Iterable<AapDriftTrace>,
  now: Date,
  options: { readonly similarityThreshold?: number; readonly sustainedTraces?: number } = {}
): AapDriftAnalysis => {
  const ordered = chronological(traces)
  const sustainedTraces = options.sustainedTraces ?? DEFAULT_AAP_DRIFT_CONFIG.sustainedTraces
  const config: AapDriftConfig = {
    baselineSize: batchBaselineSize(ordered.length, sustainedTraces),
    similarityThreshold: options.similarityThreshold ?? DEFAULT_AAP_DRIFT_CONFIG.similarityThreshold,
    sustainedTraces
  }
  let state = emptyAapDriftState
  const similarities: Array<{ trace_id: string; similarity: number }> = []
  const alerts: Array<{ alert: DriftAlert; indicators: ReadonlyArray<DriftIndicator> }> = []
  for (const trace of ordered) {
    const observed = observeAapDrift(state, trace, config, now)
    state = observed.state
    if (observed.similarity !== undefined)
      similarities.push({ trace_id: trace.trace_id, similarity: observed.similarity })
    if (observed.alert !== undefined) alerts.push({ alert: observed.alert, indicators: observed.indicators })
  }
  return {
    analyzed_traces: ordered.length,
    baseline_size: Math.min(config.baselineSize, ordered.length),
    similarity_threshold: config.similarityThreshold,
    sustained_traces: sustainedTraces,
    similarities,
    alerts
  }
}
