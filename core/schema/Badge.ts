/**
 * The reputation badges' variants and styles, and the badge routes' query, as the API publishes them
 * (docs/reputation-badges.md); core/Badge.ts draws them.
 */
import { Schema } from "effect"
import { literalUnion } from "./Literals.js"

export const AGENT_BADGE_VARIANTS = ["score", "score_tier", "score_trend", "compact"] as const
export const AgentBadgeVariant = literalUnion(AGENT_BADGE_VARIANTS, { identifier: "AgentBadgeVariant" })
export type AgentBadgeVariant = typeof AgentBadgeVariant.Type

export const TEAM_BADGE_VARIANTS = ["grade", "score", "score_grade", "score_trend", "score_tier", "compact"] as const
export const TeamBadgeVariant = literalUnion(TEAM_BADGE_VARIANTS, { identifier: "TeamBadgeVariant" })
export type TeamBadgeVariant = typeof TeamBadgeVariant.Type

/** `light` for light pages (the default), `dark`: darker label and message colours for dark pages. */
export const BADGE_STYLES = ["light", "dark"] as const
export const BadgeStyle = literalUnion(BADGE_STYLES, { identifier: "BadgeStyle" })
export type BadgeStyle = typeof BadgeStyle.Type

/** The badge routes' query: `?variant=&style=`, both optional; anything else is a 400 naming the field. */
export const AgentBadgeParams = Schema.Struct({
  variant: Schema.optionalWith(AgentBadgeVariant, { default: () => "score" as const, exact: true }),
  style: Schema.optionalWith(BadgeStyle, { default: () => "light" as const, exact: true })
})
export const TeamBadgeParams = Schema.Struct({
  variant: Schema.optionalWith(TeamBadgeVariant, { default: () => "grade" as const, exact: true }),
  style: Schema.optionalWith(BadgeStyle, { default: () => "light" as const, exact: true })
})
