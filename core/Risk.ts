/**
 * Risk assessment (docs/risk.md): how risky it is to let an agent, or a team of agents, take one
 * kind of action now. Pure: the service feeds it the agent's published reputation and the decayed
 * sums of its recorded violations, signs what it fed and what came out (core/RiskSignature.ts), and
 * anyone holding the signed record recomputes the result with these functions.
 *
 *   R = 0.60 · context + 0.30 · recency + 0.10 · confidence penalty
 *
 * - context: each reputation component c (0–1000) as the risk (1000 − c) ÷ 1000, weighted by the
 *   action type's row of `CONTEXT_WEIGHTS` (weights in hundredths, summed in integers, so the sum is
 *   exact and the same in every language);
 * - recency: S = Σ severity weight × Σ 2^(−age_days / 30) over the boundary violations of the last
 *   180 days, then S ÷ (1 + S) (0 without violations, ½ for one critical violation today, → 1);
 * - confidence penalty: the reputation's confidence (insufficient .3, low .2, medium .1, high 0).
 *
 * The published `risk_score` and components are rounded to four decimals, after R is computed from
 * the unrounded components; the level compares the rounded score with the tolerance's cut-offs.
 */
import type { ComponentKey, Confidence } from "./schema/Reputation.js"
import type { Severity } from "./schema/Concern.js"
import type {
  ActionType,
  CoordinationMode,
  RecencyInputs,
  RiskComponents,
  RiskDecision,
  RiskLevel,
  RiskResult,
  RiskTolerance,
  TeamRiskResult
} from "./schema/Risk.js"

export const CONTEXT_WEIGHT = 0.6
export const RECENCY_WEIGHT = 0.3
export const CONFIDENCE_WEIGHT = 0.1

/**
 * Per action type, the weight (in hundredths; each row sums to 100) of each reputation component's
 * risk. Why each row leans where it does is in docs/risk.md: money and data lean on integrity and
 * compliance, delegation and coordination on coherence, autonomy on drift stability.
 */
export const CONTEXT_WEIGHTS: Readonly<Record<ActionType, Readonly<Record<ComponentKey, number>>>> = {
  financial_transaction: {
    integrity_ratio: 40,
    compliance: 30,
    drift_stability: 10,
    trace_completeness: 15,
    coherence_compatibility: 5
  },
  data_access: {
    integrity_ratio: 35,
    compliance: 35,
    drift_stability: 10,
    trace_completeness: 15,
    coherence_compatibility: 5
  },
  task_delegation: {
    integrity_ratio: 30,
    compliance: 15,
    drift_stability: 20,
    trace_completeness: 10,
    coherence_compatibility: 25
  },
  tool_invocation: {
    integrity_ratio: 35,
    compliance: 25,
    drift_stability: 20,
    trace_completeness: 15,
    coherence_compatibility: 5
  },
  autonomous_operation: {
    integrity_ratio: 30,
    compliance: 20,
    drift_stability: 30,
    trace_completeness: 15,
    coherence_compatibility: 5
  },
  multi_agent_coordination: {
    integrity_ratio: 25,
    compliance: 15,
    drift_stability: 15,
    trace_completeness: 10,
    coherence_compatibility: 35
  }
}

/** How much one violation of each severity weighs, before decay. */
export const SEVERITY_WEIGHTS: Readonly<Record<Severity, number>> = { critical: 1, high: 0.7, medium: 0.4, low: 0.1 }
/** Summed in this order (the float sum depends on its order). */
export const SEVERITY_ORDER: ReadonlyArray<Severity> = ["critical", "high", "medium", "low"]
export const RECENCY_HALF_LIFE_DAYS = 30
/** Older violations are not counted: six half-lives, where one weighs under 2 % of a fresh one. */
export const RECENCY_WINDOW_DAYS = 180

export const CONFIDENCE_PENALTIES: Readonly<Record<Confidence, number>> = {
  insufficient: 0.3,
  low: 0.2,
  medium: 0.1,
  high: 0
}

/** Upper bounds (inclusive) of the low, medium and high levels; above the last is critical. */
export const THRESHOLDS: Readonly<Record<RiskTolerance, readonly [number, number, number]>> = {
  conservative: [0.15, 0.35, 0.55],
  moderate: [0.25, 0.5, 0.75],
  aggressive: [0.35, 0.6, 0.85]
}

export const DECISIONS: Readonly<Record<RiskLevel, RiskDecision>> = {
  low: "approve",
  medium: "approve",
  high: "review",
  critical: "deny"
}

const DAY_MS = 86_400_000

/** Four decimals: what is published, and what the level is read from. */
export const round4 = (x: number): number => Math.round(x * 10_000) / 10_000

/** The level of a (rounded) score under a tolerance. */
export const levelOf = (score: number, tolerance: RiskTolerance): RiskLevel => {
  const [low, medium, high] = THRESHOLDS[tolerance]
  return score <= low ? "low" : score <= medium ? "medium" : score <= high ? "high" : "critical"
}

/** 2^(−age / 30 days); a violation dated after `now` counts as today's. */
export const decayOf = (occurredAt: string, now: Date): number =>
  Math.pow(2, -Math.max(0, now.getTime() - Date.parse(occurredAt)) / DAY_MS / RECENCY_HALF_LIFE_DAYS)

/** The recency inputs from recorded violations: per severity, the count and the decayed sum (smallest first). */
export const recencyInputs = (
  violations: ReadonlyArray<{ readonly severity: Severity; readonly occurred_at: string }>,
  now: Date
): RecencyInputs => {
  const bySeverity = (severity: Severity) => {
    const decays = violations
      .filter((v) => v.severity === severity)
      .map((v) => decayOf(v.occurred_at, now))
      .sort((a, b) => a - b)
    return { count: decays.length, decayed: decays.reduce((a, b) => a + b, 0) }
  }
  return {
    half_life_days: RECENCY_HALF_LIFE_DAYS,
    window_days: RECENCY_WINDOW_DAYS,
    by_severity: {
      critical: bySeverity("critical"),
      high: bySeverity("high"),
      medium: bySeverity("medium"),
      low: bySeverity("low")
    }
  }
}

/** Σ weight_k × (1000 − c_k) ÷ 100 000: exact integer arithmetic until the one division. */
export const contextRisk = (actionType: ActionType, components: Readonly<Record<ComponentKey, number>>): number => {
  const weights = CONTEXT_WEIGHTS[actionType]
  let sum = 0
  for (const key of Object.keys(weights) as Array<ComponentKey>) sum += weights[key] * (1000 - components[key])
  return sum / 100_000
}

/** S ÷ (1 + S), S the severity-weighted decayed sum. */
export const recencyRisk = (recency: RecencyInputs): number => {
  let s = 0
  for (const severity of SEVERITY_ORDER) s += SEVERITY_WEIGHTS[severity] * recency.by_severity[severity].decayed
  return s / (1 + s)
}

export interface IndividualInputs {
  readonly reputation: {
    readonly confidence: Confidence
    readonly components: Readonly<Record<ComponentKey, number>>
  }
  readonly recency: RecencyInputs
}

/** The individual formula: the result a record's inputs must reproduce exactly. */
export const assessRisk = (
  context: { readonly action_type: ActionType; readonly risk_tolerance: RiskTolerance },
  inputs: IndividualInputs
): RiskResult => {
  const ctx = contextRisk(context.action_type, inputs.reputation.components)
  const recency = recencyRisk(inputs.recency)
  const penalty = CONFIDENCE_PENALTIES[inputs.reputation.confidence]
  const risk_score = round4(CONTEXT_WEIGHT * ctx + RECENCY_WEIGHT * recency + CONFIDENCE_WEIGHT * penalty)
  const risk_level = levelOf(risk_score, context.risk_tolerance)
  const components: RiskComponents = {
    context: round4(ctx),
    recency: round4(recency),
    confidence_penalty: penalty
  }
  return { risk_score, risk_level, decision: DECISIONS[risk_level], components }
}

/**
 * How much the riskiest member weighs against the members' mean, per coordination mode: in a
 * pipeline (sequential) one bad step taints every later one, a hierarchy follows its leaders, a
 * consensus dilutes one voice, parallel work keeps each member's harm to its own share.
 */
export const WEAKEST_WEIGHTS: Readonly<Record<CoordinationMode, number>> = {
  parallel: 0.3,
  consensus: 0.4,
  hierarchical: 0.5,
  sequential: 0.6
}

/** A member's reputation below this denies the team whatever its risk (circuit breaker). */
export const MEMBER_SCORE_FLOOR = 200

export interface TeamMemberRisk {
  readonly agent_id: string
  readonly reputation_score: number
  readonly result: RiskResult
}

const LEVEL_RANK: Readonly<Record<RiskLevel, number>> = { low: 0, medium: 1, high: 2, critical: 3 }

/**
 * The team formula: T = (1 − w) · mean(r) + w · max(r) over the members' individual risk scores
 * (each computed with the team's context), w by coordination mode, then two circuit breakers:
 * `member_score_below_200` (a member's reputation score under 200) makes the team critical (deny);
 * `member_denied` (a member's own decision is deny) makes it at least high (review).
 */
export const assessTeamRisk = (
  context: { readonly risk_tolerance: RiskTolerance; readonly coordination_mode: CoordinationMode },
  members: ReadonlyArray<TeamMemberRisk>
): TeamRiskResult => {
  const risks = members.map((m) => m.result.risk_score).sort((a, b) => a - b)
  const mean = risks.reduce((a, b) => a + b, 0) / Math.max(1, risks.length)
  const max = risks.length === 0 ? 0 : risks[risks.length - 1]!
  const weight = WEAKEST_WEIGHTS[context.coordination_mode]
  const risk_score = round4((1 - weight) * mean + weight * max)
  const breakers: Array<"member_score_below_200" | "member_denied"> = []
  if (members.some((m) => m.reputation_score < MEMBER_SCORE_FLOOR)) breakers.push("member_score_below_200")
  if (members.some((m) => m.result.decision === "deny")) breakers.push("member_denied")
  let risk_level = levelOf(risk_score, context.risk_tolerance)
  if (breakers.includes("member_score_below_200")) risk_level = "critical"
  else if (breakers.includes("member_denied") && LEVEL_RANK[risk_level] < LEVEL_RANK.high) risk_level = "high"
  return {
    risk_score,
    risk_level,
    decision: DECISIONS[risk_level],
    components: { mean_member_risk: round4(mean), max_member_risk: max, weakest_weight: weight },
    circuit_breakers: breakers
  }
}
