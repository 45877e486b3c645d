/**
 * The team reputation quota (docs/team-reputation.md, "Computations and the quota"): per
 * organization and calendar month (UTC), from the organization's plan row. The plan's feature flag
 * `team_reputation` opens the feature; its limit `team_reputation_computations_per_month` is the
 * number of computations included (null or absent: unlimited). Beyond it each computation is still
 * made and recorded as overage at `OVERAGE_COST_USD`. Pure: the caller reads the plan and the usage.
 */

export const TEAM_REPUTATION_FEATURE = "team_reputation"
export const TEAM_REPUTATION_LIMIT = "team_reputation_computations_per_month"
/** US dollars per computation beyond the included ones. */
export const OVERAGE_COST_USD = 0.005
/** `quota.team_reputation_warning` fires (once a month) when usage reaches this share of the included computations. */
export const WARNING_RATIO = 0.8

export const PLAN_REFUSAL =
  "team reputation needs a plan with team_reputation (Team or Enterprise); PUT /v1/admin/orgs/{org_id}/plan changes it"

/** What the quota reads of a plan row. */
export interface PlanTerms {
  readonly plan_id: string
  readonly feature_flags: Readonly<Record<string, unknown>>
  readonly limits: Readonly<Record<string, unknown>>
}

export const planAllowsTeamReputation = (plan: PlanTerms | undefined): boolean =>
  plan !== undefined && plan.feature_flags[TEAM_REPUTATION_FEATURE] === true

/** Included computations per month; null: unlimited (the limit absent or null). */
export const includedComputations = (plan: PlanTerms): number | null => {
  const limit = plan.limits[TEAM_REPUTATION_LIMIT]
  return typeof limit === "number" && Number.isFinite(limit) ? Math.max(0, Math.floor(limit)) : null
}

/** `YYYY-MM` of a moment, in UTC. */
export const periodOf = (at: Date): string => at.toISOString().slice(0, 7)

export interface QuotaStep {
  /** This computation is beyond the included ones. */
  readonly overage: boolean
  readonly cost: number
  /** Usage after it has reached 80% of the included computations (the warning is sent once a month). */
  readonly warning: boolean
  /** It is an overage (the exceeded event is sent once, at the first). */
  readonly exceeded: boolean
  /** The month's computations with this one. */
  readonly used: number
}

/** One more computation in a month that had `usedBefore`. */
export const quotaStep = (included: number | null, usedBefore: number): QuotaStep => {
  const used = usedBefore + 1
  if (included === null) return { overage: false, cost: 0, warning: false, exceeded: false, used }
  const overage = used > included
  return {
    overage,
    cost: overage ? OVERAGE_COST_USD : 0,
    warning: used >= WARNING_RATIO * included,
    exceeded: overage,
    used
  }
}

/** Usage as a percentage of the included computations, to two decimals (100 when none are included). */
export const usagePercent = (used: number, included: number): number =>
  included === 0 ? 100 : Math.round((10_000 * used) / included) / 100
