/**
 * AIP session drift: integrity degrading within one session (AIP spec §9.3).
 *
 * Each session keeps a sliding window of its newest checks (10 by default; the oldest is evicted).
 * An alert fires when the session has `sustainedChecks` (3) consecutive non-clear checks:
 * - `integrity_similarity` = clear checks / checks in the window, after the triggering check;
 * - `severity` from that ratio: >= 0.7 `low`, >= 0.4 `medium`, else `high`;
 * - `drift_direction` from the concern categories of the streak's checks, every concern counted
 *   once: the category holding a strict majority (> 50%) of them, mapped as the AIP reference maps
 *   it, else `unknown` (also when the streak carries no concerns, e.g. synthetic verdicts).
 *
 * ONE alert per streak. The AIP spec text says the alert fires once and no more fire until the
 * streak resets; Mnemom's code re-alerts every 5 further checks. We follow the text: a long
 * streak is one incident, and repeated alerts only repeat what the first said. A clear check ends
 * the streak, and the next streak may alert again.
 *
 * The alert id is `ida-` + the first 16 bytes (hex) of
 * `SHA-256("candor/v1/aip-drift-alert\0" ‖ JCS([agent_id, session_id, first checkpoint id of the streak]))`,
 * so replaying the same checkpoints produces the same alert id and a store can deduplicate it.
 *
 * The state is plain data (JSON-serialisable). An actor rebuilds it with `replayAipDrift` from the
 * session's newest `max(maxWindowSize, sustainedChecks)` stored checkpoints: that is the window,
 * and a streak at least `sustainedChecks` long in it has already alerted.
 */
import { toHex } from "./Bytes.js"
import { canonicalHash } from "./Canonical.js"
import type { WindowPosition } from "./schema/Checkpoint.js"
import type { ConcernCategory } from "./schema/Concern.js"
import type { AipDriftDirection, DriftAlert, DriftSeverity } from "./schema/Drift.js"
import type { Verdict } from "./schema/Verdict.js"

export interface AipDriftConfig {
  /** Checks kept in the sliding window (Mnemom's implementation requires at least 3). */
  readonly maxWindowSize: number
  /** Consecutive non-clear checks that raise an alert. */
  readonly sustainedChecks: number
}

export const DEFAULT_AIP_DRIFT_CONFIG: AipDriftConfig = { maxWindowSize: 10, sustainedChecks: 3 }

export interface AipWindowEntry {
  readonly checkpoint_id: string
  readonly verdict: Verdict
  /** One per concern, in the checkpoint's order (repeats kept: the majority counts concerns). */
  readonly categories: ReadonlyArray<ConcernCategory>
  readonly timestamp: string
}

export interface AipDriftState {
  /** Oldest first, at most `maxWindowSize`. */
  readonly window: ReadonlyArray<AipWindowEntry>
  /** Consecutive non-clear checks ending at the newest one (may outlast the window). */
  readonly streak_length: number
  /** The streak's checks up to its alert (at most `sustainedChecks`); after that only the length grows. */
  readonly streak: ReadonlyArray<AipWindowEntry>
  /** The current streak has alerted. */
  readonly alerted: boolean
}

export const emptyAipDriftState: AipDriftState = { window: [], streak_length: 0, streak: [], alerted: false }

/** The part of an Integrity Checkpoint drift reads. */
export interface AipDriftCheckpoint {
  readonly checkpoint_id: string
  readonly agent_id: string
  readonly session_id: string
  readonly verdict: Verdict
  readonly concerns: ReadonlyArray<{ readonly category: ConcernCategory }>
  readonly timestamp: string
}

export interface AipDriftObservation {
  readonly state: AipDriftState
  readonly alert: DriftAlert | undefined
  /** Where this checkpoint sits in the window: its `window_position`. */
  readonly position: WindowPosition
}

/** AIP reference mapping from concern category to drift direction. */
export const AIP_DIRECTION_OF_CATEGORY: Readonly<Record<ConcernCategory, AipDriftDirection>> = {
  prompt_injection: "injection_pattern",
  value_misalignment: "value_erosion",
  autonomy_violation: "autonomy_creep",
  deceptive_reasoning: "deception_pattern",
  reasoning_corruption: "reasoning_degradation",
  undeclared_intent: "intent_drift",
  output_misalignment: "value_erosion",
  output_injection_compliance: "injection_pattern"
}

/** Clear checks / checks in the window; 1 for an empty window. */
export const clearRatio = (window: ReadonlyArray<{ readonly verdict: Verdict }>): number =>
  window.length === 0 ? 1 : window.filter((entry) => entry.verdict === "clear").length / window.length

export const driftSeverityOf = (ratio: number): DriftSeverity =>
  ratio >= 0.7 ? "low" : ratio >= 0.4 ? "medium" : "high"

/** The category holding more than half of all concerns, mapped to its direction; else `unknown`. */
export const aipDriftDirection = (
  streak: ReadonlyArray<{ readonly categories: ReadonlyArray<ConcernCategory> }>
): AipDriftDirection => {
  const counts = new Map<ConcernCategory, number>()
  let total = 0
  for (const entry of streak) {
    for (const category of entry.categories) {
      counts.set(category, (counts.get(category) ?? 0) + 1)
      total++
    }
  }
  for (const [category, count] of counts) if (count * 2 > total) return AIP_DIRECTION_OF_CATEGORY[category]
  return "unknown"
}

export const aipDriftAlertId = (agentId: string, sessionId: string, firstCheckpointId: string): string =>
  `ida-${toHex(canonicalHash("aip-drift-alert", [agentId, sessionId, firstCheckpointId]).subarray(0, 16))}`

/** The position of the window's newest entry: 0-based index and the window's size with it. */
export const windowPosition = (state: AipDriftState): WindowPosition => ({
  index: Math.max(0, state.window.length - 1),
  window_size: state.window.length
})

/** AIP `window_summary` of an IntegritySignal. */
export interface AipWindowSummary {
  readonly size: number
  readonly max_size: number
  readonly verdicts: Readonly<Record<Verdict, number>>
  readonly integrity_ratio: number
  readonly drift_alert_active: boolean
}

export const windowSummary = (
  state: AipDriftState,
  config: AipDriftConfig = DEFAULT_AIP_DRIFT_CONFIG
): AipWindowSummary => {
  const verdicts = { clear: 0, review_needed: 0, boundary_violation: 0 }
  for (const entry of state.window) verdicts[entry.verdict]++
  return {
    size: state.window.length,
    max_size: config.maxWindowSize,
    verdicts,
    integrity_ratio: clearRatio(state.window),
    drift_alert_active: state.alerted
  }
}

const entryOf = (checkpoint: AipDriftCheckpoint): AipWindowEntry => ({
  checkpoint_id: checkpoint.checkpoint_id,
  verdict: checkpoint.verdict,
  categories: checkpoint.concerns.map((concern) => concern.category),
  timestamp: checkpoint.timestamp
})

const round4 = (x: number): number => Math.round(x * 10_000) / 10_000

/** Adds one checkpoint of the session; returns the new state and the alert it raises, if any. */
export const observeAipDrift = (
  state: AipDriftState,
  checkpoint: AipDriftCheckpoint,
  config: AipDriftConfig,
  now: Date
): AipDriftObservation => {
  const entry = entryOf(checkpoint)
  const window = [...state.window, entry].slice(-Math.max(1, config.maxWindowSize))
  if (entry.verdict === "clear") {
    const next: AipDriftState = { window, streak_length: 0, streak: [], alerted: false }
    return { state: next, alert: undefined, position: windowPosition(next) }
  }
  const streakLength = state.streak_length + 1
  const streak = state.alerted ? state.streak : [...state.streak, entry]
  const fires = !state.alerted && streakLength >= config.sustainedChecks
  const next: AipDriftState = { window, streak_length: streakLength, streak, alerted: state.alerted || fires }
  if (!fires) return { state: next, alert: undefined, position: windowPosition(next) }

  const ratio = clearRatio(window)
  const direction = aipDriftDirection(streak)
  const first = streak[0]!
  const alert: DriftAlert = {
    alert_id: aipDriftAlertId(checkpoint.agent_id, checkpoint.session_id, first.checkpoint_id),
    agent_id: checkpoint.agent_id,
    session_id: checkpoint.session_id,
    checkpoint_ids: streak.map((e) => e.checkpoint_id),
    sustained_checks: streakLength,
    severity: driftSeverityOf(ratio),
    drift_direction: direction,
    message:
      `${streakLength} consecutive non-clear integrity checks in session ${checkpoint.session_id}; ` +
      `clear ratio ${round4(ratio)} over the last ${window.length} checks; direction ${direction}`,
    detection_timestamp: now.toISOString(),
    integrity_similarity: ratio
  }
  return { state: next, alert, position: windowPosition(next) }
}

/**
 * The state after these already-processed checkpoints of one session, oldest first. Their alerts
 * were raised when they were first observed, so none is returned.
 */
export const replayAipDrift = (
  checkpoints: Iterable<AipDriftCheckpoint>,
  config: AipDriftConfig = DEFAULT_AIP_DRIFT_CONFIG
): AipDriftState => {
  let state = emptyAipDriftState
  const epoch = new Date(0)
  for (const checkpoint of checkpoints) state = observeAipDrift(state, checkpoint, config, epoch).state
  return state
}
