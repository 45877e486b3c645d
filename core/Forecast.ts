/**
 * Team failure forecast (docs/intelligence.md, "Forecast"): five failure modes, each a fixed
 * weighted sum of recorded rates in [0, 1], so each probability is in [0, 1] and a reader can
 * recompute it from the `evidence` published with it. Pure and deterministic (`method:
 * "deterministic"`); no model is asked.
 *
 * Inputs (all published in `evidence`):
 * - I, P, G: the largest `impact_score` of the team's incompatible, priority_mismatch and
 *   resolvable fault lines (0 without one);
 * - review_rate, violation_rate: the members' checkpoints with verdict review_needed and
 *   boundary_violation over all their checkpoints (0 without checkpoints);
 * - policy_fail_rate: the members' traces of the window whose tool policy verdict was `fail`, over
 *   their traces of the window (0 without traces);
 * - drift_share: the share of members with a drift alert in the window;
 * - r_k: for each reputation component k, (1000 − the mean of k over the members with a stored
 *   score) / 1000 (0 when no member has one: no record is no evidence of risk).
 */
import type { FaultLine } from "./FaultLines.js"
import type { ComponentKey } from "./schema/Reputation.js"

export const FAILURE_MODES = [
  "escalation_conflict",
  "capability_gap",
  "value_override",
  "coordination_deadlock",
  "trust_erosion"
] as const
export type FailureMode = (typeof FAILURE_MODES)[number]

/** One member's recorded data. */
export interface MemberRecord {
  readonly agent_id: string
  readonly verdicts: { readonly clear: number; readonly review_needed: number; readonly boundary_violation: number }
  /** Drift alerts detected in the window. */
  readonly drift_alerts: number
  /** Traces recorded in the window, and those of them whose tool policy verdict was `fail`. */
  readonly traces: number
  readonly policy_failures: number
  /** Stored reputation components by key; undefined without a stored score. */
  readonly components: Readonly<Partial<Record<ComponentKey, number>>> | undefined
}

export type Rates = Readonly<Record<string, number>>

/** Each mode's terms: weight × rate name; every mode's weights sum to 1. */
export const FORECAST_WEIGHTS: Readonly<Record<FailureMode, ReadonlyArray<readonly [number, string]>>> = {
  escalation_conflict: [
    [0.5, "incompatible_impact"],
    [0.2, "priority_impact"],
    [0.3, "review_rate"]
  ],
  capability_gap: [
    [0.5, "resolvable_impact"],
    [0.25, "risk_trace_completeness"],
    [0.25, "risk_integrity_ratio"]
  ],
  value_override: [
    [0.4, "violation_rate"],
    [0.3, "policy_fail_rate"],
    [0.3, "risk_compliance"]
  ],
  coordination_deadlock: [
    [0.4, "priority_impact"],
    [0.3, "incompatible_impact"],
    [0.3, "risk_coherence_compatibility"]
  ],
  trust_erosion: [
    [0.4, "drift_share"],
    [0.3, "risk_drift_stability"],
    [0.3, "violation_rate"]
  ]
}

export interface FailureModeForecast {
  readonly mode: FailureMode
  readonly probability: number
  /** The rates the probability was computed from, with the weight of each. */
  readonly evidence: ReadonlyArray<{ readonly input: string; readonly weight: number; readonly value: number }>
}

/** Half up to four decimals; the nudge keeps a half that floating point put just below (.36335) a half. */
const round4 = (x: number): number => Math.round(x * 10_000 + 1e-9) / 10_000
const ratio = (part: number, whole: number): number => (whole === 0 ? 0 : part / whole)
const maxImpact = (lines: ReadonlyArray<FaultLine>, classification: FaultLine["classification"]): number =>
  lines
    .filter((line) => line.classification === classification)
    .reduce((max, line) => Math.max(max, line.impact_score), 0)

const COMPONENTS: ReadonlyArray<ComponentKey> = [
  "integrity_ratio",
  "compliance",
  "drift_stability",
  "trace_completeness",
  "coherence_compatibility"
]

/** Every rate the formulas read, rounded to four decimals (the published evidence is what is summed). */
export const ratesOf = (members: ReadonlyArray<MemberRecord>, faultLines: ReadonlyArray<FaultLine>): Rates => {
  const sum = (f: (m: MemberRecord) => number) => members.reduce((total, m) => total + f(m), 0)
  const checkpoints = sum((m) => m.verdicts.clear + m.verdicts.review_needed + m.verdicts.boundary_violation)
  const scored = members.filter((m) => m.components !== undefined)
  const risks = Object.fromEntries(
    COMPONENTS.map((key) => {
      const values = scored.map((m) => m.components![key]).filter((v) => v !== undefined)
      const mean = values.length === 0 ? 1000 : values.reduce((a, b) => a + b, 0) / values.length
      return [`risk_${key}`, round4((1000 - mean) / 1000)]
    })
  )
  return {
    incompatible_impact: maxImpact(faultLines, "incompatible"),
    priority_impact: maxImpact(faultLines, "priority_mismatch"),
    resolvable_impact: maxImpact(faultLines, "resolvable"),
    review_rate: round4(
      ratio(
        sum((m) => m.verdicts.review_needed),
        checkpoints
      )
    ),
    violation_rate: round4(
      ratio(
        sum((m) => m.verdicts.boundary_violation),
        checkpoints
      )
    ),
    policy_fail_rate: round4(
      ratio(
        sum((m) => m.policy_failures),
        sum((m) => m.traces)
      )
    ),
    drift_share: round4(ratio(members.filter((m) => m.drift_alerts > 0).length, members.length)),
    ...risks
  }
}

export const forecastOf = (rates: Rates): ReadonlyArray<FailureModeForecast> =>
  FAILURE_MODES.map((mode) => {
    const evidence = FORECAST_WEIGHTS[mode].map(([weight, input]) => ({ input, weight, value: rates[input] ?? 0 }))
    const probability = round4(
      Math.min(
        1,
        Math.max(
          0,
          evidence.reduce((p, t) => p + t.weight * t.value, 0)
        )
      )
    )
    return { mode, probability, evidence }
  })
