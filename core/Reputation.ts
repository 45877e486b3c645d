/**
 * Agent reputation: five components on 0–1000, their weighted sum, the grade and the confidence.
 * Pure: the workers feed it counters kept incrementally, `candor reputation verify` feeds it the
 * same counters rebuilt from the public certificates (`tallyCertificates`), and both must agree.
 *
 * The formulas are Mnemom's published methodology's (docs/reputation.md), with three decisions of ours:
 * - "analysed" means a judge read the reasoning (`claims.analysis_model` is not "none"): synthetic
 *   verdicts (no thinking block, analysis failed, too little evidence) count for nothing but
 *   trace completeness;
 * - trace completeness is analysed ÷ certified exchanges, both read off the certificates (the
 *   reference's "expected decisions" was a private heuristic, so nobody could recompute it);
 * - every component is rounded to an integer first and the score is the rounded sum of the rounded
 *   components times their weights, so the published components add up to the published score. The
 *   sum is taken in whole tenths, round((4·I + 2·C + 2·D + T + H) ÷ 10): summing `score × 0.4` … in
 *   binary floating point lands just below a half about once in 400 scores (493.49999999999994 for
 *   an exact 493.5) and would round down where exact arithmetic rounds up.
 */
import type { TrustContribution } from "./schema/Trust.js"
import type { ComponentKey, Confidence, Grade, ReputationComponent } from "./schema/Reputation.js"
import type { ReevaluatedVerdict } from "./schema/Reevaluation.js"

export const WEIGHTS: Readonly<Record<ComponentKey, number>> = {
  integrity_ratio: 0.4,
  compliance: 0.2,
  drift_stability: 0.2,
  trace_completeness: 0.1,
  coherence_compatibility: 0.1
}

export const LABELS: Readonly<Record<ComponentKey, string>> = {
  integrity_ratio: "Integrity Ratio",
  compliance: "Compliance",
  drift_stability: "Drift Stability",
  trace_completeness: "Trace Completeness",
  coherence_compatibility: "Coherence Compatibility"
}

/** Analysed checkpoints below which an agent is not rated (NR). */
export const ELIGIBILITY_THRESHOLD = 50
/** Violations older than this no longer weigh on compliance. */
export const COMPLIANCE_WINDOW_MS = 90 * 24 * 3_600_000
/** A violation's impact halves every week. */
export const COMPLIANCE_HALF_LIFE_HOURS = 168
/** Sessions shorter than this say nothing about drift. */
export const DRIFT_MIN_SESSION_CHECKPOINTS = 3
/** Coherence compatibility without peers to compare with (Mnemom's default). */
export const DEFAULT_COHERENCE = 750

/** Grade floors, best first; below the last floor is CCC. */
const GRADE_FLOORS: ReadonlyArray<readonly [number, Grade]> = [
  [900, "AAA"],
  [800, "AA"],
  [700, "A"],
  [600, "BBB"],
  [500, "BB"],
  [400, "B"]
]

export const TIERS: Readonly<Record<Grade, string>> = {
  AAA: "Exemplary",
  AA: "Established",
  A: "Reliable",
  BBB: "Developing",
  BB: "Emerging",
  B: "Concerning",
  CCC: "Critical",
  NR: "Not Rated"
}

/** The grade of a score, or NR when the agent is not eligible. */
export const gradeOf = (score: number, eligible: boolean): Grade => {
  if (!eligible) return "NR"
  for (const [floor, grade] of GRADE_FLOORS) if (score >= floor) return grade
  return "CCC"
}

/** Confidence from the analysed-checkpoint count (agents: 50, 200, 1000; teams pass 10, 30, 100). */
export const confidenceOf = (
  count: number,
  thresholds: readonly [number, number, number] = [50, 200, 1000]
): Confidence =>
  count < thresholds[0] ? "insufficient" : count < thresholds[1] ? "low" : count < thresholds[2] ? "medium" : "high"

/** What the components are computed from: counts over the first `tree_size` certificates of the log. */
export interface ReputationTally {
  /** Certificates in the prefix (the signed tree size). */
  readonly certified: number
  /** Of those, checkpoints whose reasoning a judge read. */
  readonly analysed: number
  /** Of the analysed, verdict `clear`. */
  readonly analysed_clear: number
  /** Sessions with at least three checkpoints. */
  readonly long_sessions: number
  /** Of those, sessions in which no AIP drift alert was raised. */
  readonly stable_sessions: number
  /** Per session with a boundary violation, the time of its newest one (ISO 8601). */
  readonly violation_sessions: ReadonlyArray<{ readonly session_id: string; readonly last_violation_at: string }>
  /**
   * Checkpoints of the prefix reclassified `card_gap` (docs/reclassification.md), sorted: already left
   * out of the violation sessions and the drift alerts above; published in the compliance inputs so
   * a verifier excludes the same ones.
   */
  readonly card_gap_checkpoints?: ReadonlyArray<string> | undefined
  /**
   * Checkpoints of the prefix whose verdict an AIP re-evaluation changed (core/Reevaluation.ts),
   * sorted by id, each with the verdict counted and the `aip.reevaluation` entry of the agent's
   * governance log that set it: already counted in `analysed_clear` and the violation sessions
   * (drift stays as certified); published in the integrity ratio's inputs so a verifier counts them alike.
   */
  readonly reevaluated_checkpoints?: ReadonlyArray<ReevaluatedVerdict> | undefined
}

/** The coherence component's inputs: the peers' mean pair score and the trust the agent received. */
export interface CoherenceInputs {
  /** Mean pairwise coherence (0–1) of the agent's card with its peers' cards; null without peers or card. */
  readonly mean_pair_score: number | null
  readonly peers: number
  /** Points added by trust received from other agents (core/TrustPropagation.ts). */
  readonly trust_adjustment: number
  /** The trusters walked and what each added, published beside the adjustment they sum to. */
  readonly trusters?: ReadonlyArray<TrustContribution> | undefined
}

export const NO_COHERENCE: CoherenceInputs = { mean_pair_score: null, peers: 0, trust_adjustment: 0 }

const clamp1000 = (x: number): number => Math.min(1000, Math.max(0, x))
const round = (x: number): number => Math.round(clamp1000(x))

/** A violation's impact at `now`: 2^(−age_h / 168), 0 outside the 90-day window (or in the future's past). */
export const violationImpact = (at: string, now: Date): number => {
  const age = now.getTime() - Date.parse(at)
  if (!(age <= COMPLIANCE_WINDOW_MS)) return 0
  return Math.pow(2, -Math.max(0, age) / 3_600_000 / COMPLIANCE_HALF_LIFE_HOURS)
}

/** 1000 ÷ (1 + Σ impact)^1.5, summed over the sessions' newest (worst) violations. */
export const complianceOf = (impactSum: number): number => 1000 / Math.pow(1 + impactSum, 1.5)

/** Each weight in whole tenths (0.4 → 4): the weighted sum is computed exactly, in integers. */
const TENTHS = Object.fromEntries(
  Object.entries(WEIGHTS).map(([key, weight]) => [key, Math.round(weight * 10)])
) as Readonly<Record<ComponentKey, number>>

/** score × weight as the nearest double to the exact decimal (710 × 0.4 is 284.00000000000006, 2840 ÷ 10 is 284). */
export const weightedScore = (key: ComponentKey, score: number): number => (score * TENTHS[key]) / 10

/** round(Σ score × weight), exactly: the integer sum of score × tenths, divided once (halves round up). */
export const scoreOf = (components: ReadonlyArray<{ readonly key: ComponentKey; readonly score: number }>): number =>
  Math.round(components.reduce((sum, c) => sum + c.score * TENTHS[c.key], 0) / 10)

const component = (key: ComponentKey, score: number, inputs: Record<string, unknown>): ReputationComponent => ({
  key,
  label: LABELS[key],
  score,
  weight: WEIGHTS[key],
  weighted_score: weightedScore(key, score),
  inputs
})

export interface ReputationResult {
  readonly score: number
  readonly grade: Grade
  readonly tier: string
  readonly is_eligible: boolean
  readonly checkpoint_count: number
  readonly confidence: Confidence
  readonly components: ReadonlyArray<ReputationComponent>
}

/** The five components, the score, grade and confidence at `now`. */
export const computeReputation = (tally: ReputationTally, coherence: CoherenceInputs, now: Date): ReputationResult => {
  // Summed smallest first: a float sum depends on its order, and sorting by value makes it the same
  // whatever order the sessions come in (the workers' table order, a verifier's log order).
  const impacts = tally.violation_sessions.map((s) => violationImpact(s.last_violation_at, now)).sort((a, b) => a - b)
  const impactSum = impacts.reduce((a, b) => a + b, 0)
  const counted = impacts.filter((x) => x > 0).length
  const baseCoherence = coherence.mean_pair_score === null ? DEFAULT_COHERENCE : 1000 * coherence.mean_pair_score
  const components = [
    component("integrity_ratio", tally.analysed === 0 ? 0 : round((1000 * tally.analysed_clear) / tally.analysed), {
      analysed: tally.analysed,
      analysed_clear: tally.analysed_clear,
      ...(tally.reevaluated_checkpoints === undefined || tally.reevaluated_checkpoints.length === 0
        ? {}
        : { reevaluated_checkpoints: tally.reevaluated_checkpoints })
    }),
    component("compliance", round(complianceOf(impactSum)), {
      violation_sessions: counted,
      impact_sum: impactSum,
      window_days: 90,
      half_life_hours: COMPLIANCE_HALF_LIFE_HOURS,
      ...(tally.card_gap_checkpoints === undefined || tally.card_gap_checkpoints.length === 0
        ? {}
        : { card_gap_checkpoints: tally.card_gap_checkpoints })
    }),
    component(
      "drift_stability",
      tally.long_sessions === 0 ? 1000 : round((1000 * tally.stable_sessions) / tally.long_sessions),
      { long_sessions: tally.long_sessions, stable_sessions: tally.stable_sessions }
    ),
    component("trace_completeness", tally.certified === 0 ? 1000 : round((1000 * tally.analysed) / tally.certified), {
      certified: tally.certified,
      analysed: tally.analysed
    }),
    component("coherence_compatibility", round(baseCoherence + coherence.trust_adjustment), {
      mean_pair_score: coherence.mean_pair_score,
      peers: coherence.peers,
      trust_adjustment: coherence.trust_adjustment,
      ...(coherence.trusters === undefined ? {} : { trusters: coherence.trusters })
    })
  ]
  const score = scoreOf(components)
  const eligible = tally.analysed >= ELIGIBILITY_THRESHOLD
  const grade = gradeOf(score, eligible)
  return {
    score,
    grade,
    tier: TIERS[grade],
    is_eligible: eligible,
    checkpoint_count: tally.analysed,
    confidence: confidenceOf(tally.analysed),
    components
  }
}
