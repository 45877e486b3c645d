/**
 * Team reputation: five components on 0–1000 with the spec's weights, the same grade scale as
 * agents, eligibility from 10 assessments. Pure: the inputs are recorded team assessments, the
 * members' own (recomputable) scores and the roster history, all of which Candor publishes, so a
 * third party can recompute a team's score as it can an agent's (docs/team-reputation.md).
 *
 * Mnemom publishes two of the five formulas (operational record and structural stability,
 * the latter without its "SR trend"); the other three are ours, chosen to be simple and checkable:
 * - coherence history: an exponentially smoothed mean (α = 0.3, oldest first) of each assessment's
 *   coherence quality CQ = 0.70 × member-to-member + 0.30 × member-to-team-card coherence;
 * - member quality: ½ mean of the member scores + ½ mean of the worst quarter (at least one), so a
 *   single weak member weighs as a tail risk does rather than vanishing in an average;
 * - assessment density: log(1 + Σ 2^(−age_days/30)) ÷ log(1 + 30) × 1000, capped: about thirty
 *   recent assessments fill it, and old ones fade with a 30-day half-life.
 */
import { confidenceOf, gradeOf, TIERS } from "./Reputation.js"
import type { Confidence, Grade } from "./schema/Reputation.js"

export const TEAM_COMPONENT_KEYS = [
  "coherence_history",
  "member_quality",
  "operational_record",
  "structural_stability",
  "assessment_density"
] as const
export type TeamComponentKey = (typeof TEAM_COMPONENT_KEYS)[number]

export const TEAM_WEIGHTS: Readonly<Record<TeamComponentKey, number>> = {
  coherence_history: 0.35,
  member_quality: 0.25,
  operational_record: 0.2,
  structural_stability: 0.1,
  assessment_density: 0.1
}

export const TEAM_LABELS: Readonly<Record<TeamComponentKey, string>> = {
  coherence_history: "Coherence History",
  member_quality: "Member Quality",
  operational_record: "Operational Record",
  structural_stability: "Structural Stability",
  assessment_density: "Assessment Density"
}

/** Assessments below which a team is not rated. */
export const TEAM_ELIGIBILITY_THRESHOLD = 10
export const TEAM_CONFIDENCE_THRESHOLDS: readonly [number, number, number] = [10, 30, 100]
/** Smoothing of the coherence history (weight of the newest assessment). */
export const COHERENCE_SMOOTHING = 0.3
/** Member-to-member against member-to-card coherence in an assessment's CQ. */
export const CQ_MEMBER_WEIGHT = 0.7
/** Points a roster change costs the structural stability, for 90 days. */
export const ROSTER_CHANGE_PENALTY = 50
export const ROSTER_WINDOW_MS = 90 * 24 * 3_600_000
/** Assessments whose decayed count fills the density component, and the decay's half-life. */
export const DENSITY_FULL_AT = 30
export const DENSITY_HALF_LIFE_DAYS = 30

export const RISK_LEVELS = ["low", "medium", "high", "critical"] as const
export type RiskLevel = (typeof RISK_LEVELS)[number]

/** One recorded team assessment: the team's coherence and risk at a moment. */
export interface TeamAssessmentInput {
  readonly assessed_at: string
  /** Mean member-to-member pair coherence, 0–1 (null with fewer than two carded members). */
  readonly member_coherence: number | null
  /** Mean member-to-team-card coherence, 0–1 (null without a team card). */
  readonly card_coherence: number | null
  readonly risk_level: RiskLevel
}

export interface TeamReputationInputs {
  /** Oldest first. */
  readonly assessments: ReadonlyArray<TeamAssessmentInput>
  /** The current members' scores (their own reputation, eligible or not). */
  readonly member_scores: ReadonlyArray<number>
  /** Times of roster changes after the team's creation (founding members are not changes). */
  readonly roster_changes: ReadonlyArray<string>
}

export interface TeamComponent {
  readonly key: TeamComponentKey
  readonly label: string
  readonly score: number
  readonly weight: number
  readonly weighted_score: number
  readonly inputs: Record<string, unknown>
}

export interface TeamReputationResult {
  readonly score: number
  readonly grade: Grade
  readonly tier: string
  readonly is_eligible: boolean
  readonly total_assessments: number
  readonly confidence: Confidence
  readonly components: ReadonlyArray<TeamComponent>
}

const clampRound = (x: number): number => Math.round(Math.min(1000, Math.max(0, x)))

/** CQ of one assessment (null when it measured no coherence at all). */
export const coherenceQuality = (a: TeamAssessmentInput): number | null => {
  if (a.member_coherence === null) return a.card_coherence
  if (a.card_coherence === null) return a.member_coherence
  return CQ_MEMBER_WEIGHT * a.member_coherence + (1 - CQ_MEMBER_WEIGHT) * a.card_coherence
}

/** Exponential smoothing of the assessments' CQ, oldest first; null when none measured coherence. */
export const smoothedCoherence = (assessments: ReadonlyArray<TeamAssessmentInput>): number | null => {
  let smoothed: number | null = null
  for (const a of assessments) {
    const cq = coherenceQuality(a)
    if (cq === null) continue
    smoothed = smoothed === null ? cq : COHERENCE_SMOOTHING * cq + (1 - COHERENCE_SMOOTHING) * smoothed
  }
  return smoothed
}

/** ½ mean + ½ mean of the worst quarter (at least one member); 0 for an empty team. */
export const memberQuality = (scores: ReadonlyArray<number>): number => {
  if (scores.length === 0) return 0
  const sorted = [...scores].sort((a, b) => a - b)
  const tail = sorted.slice(0, Math.max(1, Math.floor(sorted.length / 4)))
  const mean = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0) / xs.length
  return 0.5 * mean(sorted) + 0.5 * mean(tail)
}

/** The recency-weighted assessment count: Σ 2^(−age_days / 30). */
export const decayedCount = (assessments: ReadonlyArray<TeamAssessmentInput>, now: Date): number =>
  assessments.reduce((sum, a) => {
    const ageDays = Math.max(0, now.getTime() - Date.parse(a.assessed_at)) / 86_400_000
    return sum + Math.pow(2, -ageDays / DENSITY_HALF_LIFE_DAYS)
  }, 0)

const component = (key: TeamComponentKey, score: number, inputs: Record<string, unknown>): TeamComponent => ({
  key,
  label: TEAM_LABELS[key],
  score,
  weight: TEAM_WEIGHTS[key],
  weighted_score: score * TEAM_WEIGHTS[key],
  inputs
})

/** The five components, score, grade and confidence of a team at `now`. */
export const computeTeamReputation = (inputs: TeamReputationInputs, now: Date): TeamReputationResult => {
  const { assessments } = inputs
  const smoothed = smoothedCoherence(assessments)
  const acceptable = assessments.filter((a) => a.risk_level === "low" || a.risk_level === "medium").length
  const recentChanges = inputs.roster_changes.filter((at) => {
    const age = now.getTime() - Date.parse(at)
    return age >= 0 && age <= ROSTER_WINDOW_MS
  }).length
  const decayed = decayedCount(assessments, now)
  const components = [
    component("coherence_history", smoothed === null ? 0 : clampRound(1000 * smoothed), {
      smoothed_coherence: smoothed,
      assessments: assessments.length,
      smoothing: COHERENCE_SMOOTHING
    }),
    component("member_quality", clampRound(memberQuality(inputs.member_scores)), {
      member_scores: inputs.member_scores
    }),
    component(
      "operational_record",
      assessments.length === 0 ? 0 : clampRound((1000 * acceptable) / assessments.length),
      { assessments: assessments.length, low_or_medium: acceptable }
    ),
    component("structural_stability", clampRound(1000 - ROSTER_CHANGE_PENALTY * recentChanges), {
      roster_changes_90d: recentChanges
    }),
    component("assessment_density", clampRound((1000 * Math.log(1 + decayed)) / Math.log(1 + DENSITY_FULL_AT)), {
      decayed_count: decayed,
      full_at: DENSITY_FULL_AT,
      half_life_days: DENSITY_HALF_LIFE_DAYS
    })
  ]
  // Summed in whole hundredths (weights 35, 25, 20, 10, 10): a float sum of score × 0.35 … can land
  // just below an exact .5 and round down, where the exact sum rounds up.
  const hundredths = components.reduce((sum, c) => sum + c.score * Math.round(c.weight * 100), 0)
  const score = Math.round(hundredths / 100)
  const eligible = assessments.length >= TEAM_ELIGIBILITY_THRESHOLD
  const grade = gradeOf(score, eligible)
  return {
    score,
    grade,
    tier: TIERS[grade],
    is_eligible: eligible,
    total_assessments: assessments.length,
    confidence: confidenceOf(assessments.length, TEAM_CONFIDENCE_THRESHOLDS),
    components
  }
}

/** A member as a team assessment sees it. */
export interface AssessedMember {
  readonly score: number
  readonly eligible: boolean
  readonly status: "active" | "paused" | "killed"
}

/**
 * An assessment's risk level from its members: critical with a killed member or an eligible member
 * graded CCC (< 400); high with a paused member or one below 500; medium with one below 700, or
 * with a member not rated yet (unknown is not low); low otherwise.
 */
export const teamRiskLevel = (members: ReadonlyArray<AssessedMember>): RiskLevel => {
  const rated = members.filter((m) => m.eligible).map((m) => m.score)
  const lowest = rated.length === 0 ? undefined : Math.min(...rated)
  if (members.some((m) => m.status === "killed") || (lowest !== undefined && lowest < 400)) return "critical"
  if (members.some((m) => m.status === "paused") || (lowest !== undefined && lowest < 500)) return "high"
  if (rated.length < members.length || lowest === undefined || lowest < 700) return "medium"
  return "low"
}
