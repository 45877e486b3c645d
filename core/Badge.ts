/**
 * Reputation badges: the SVGs an agent's or a team's owners embed in a README or a site, drawn by
 * shields.io's renderer (`badge-maker`, which measures the text with anafanafo and writes a
 * `<title>` and an `aria-label`). Pure: the routes pass what they read (`agentBadgeState`,
 * `teamBadgeState`) and answer the string with `BADGE_CONTENT_TYPE` and `BADGE_CACHE_CONTROL`.
 *
 * Decisions (docs/reputation-badges.md):
 * - unknown and private ids draw the same grey "Not Rated" badge, so a badge never says whether an
 *   id exists;
 * - the trend arrow needs a move of at least TREND_THRESHOLD points over 30 days either way, so
 *   the rounding of a single recomputation never flips it;
 * - every colour keeps the white text at a contrast of 4.5:1 or more (WCAG AA), also under the
 *   renderer's light gradient at the top of the badge;
 * - a badge that shows only its message (`compact`) still names itself in its `<title>` and
 *   `aria-label` ("Candor Trust: 782"), so a screen reader says what the number is.
 */
import { makeBadge } from "badge-maker"
import { ELIGIBILITY_THRESHOLD } from "./Reputation.js"
import { TEAM_ELIGIBILITY_THRESHOLD } from "./TeamReputation.js"
import type { AgentBadgeVariant, BadgeStyle, TeamBadgeVariant } from "./schema/Badge.js"
import type { Grade, Visibility } from "./schema/Reputation.js"

// The variants, styles and query are the published shapes (core/schema/Badge.ts); re-exported beside the drawing.
export {
  AGENT_BADGE_VARIANTS,
  AgentBadgeParams,
  AgentBadgeVariant,
  BADGE_STYLES,
  BadgeStyle,
  TEAM_BADGE_VARIANTS,
  TeamBadgeParams,
  TeamBadgeVariant
} from "./schema/Badge.js"

export const BADGE_CONTENT_TYPE = "image/svg+xml; charset=utf-8"
/** Badges are recomputed at most hourly from the reader's side: README renderers (camo) cache them anyway. */
export const BADGE_CACHE_CONTROL = "public, max-age=3600"

/** Points a 30-day trend must move (either way) before the badge shows an arrow. */
export const TREND_THRESHOLD = 10

export type BadgeState =
  | {
      readonly kind: "rated"
      readonly score: number
      readonly grade: Grade
      readonly tier: string
      readonly trend_30d: number | null
    }
  | { readonly kind: "building"; readonly analysed: number; readonly needed: number }
  | { readonly kind: "not_rated" }

export const NOT_RATED: BadgeState = { kind: "not_rated" }

/** What a badge reads of a reputation: an agent's AgentReputation or a team's, as stored. */
export interface Rating {
  readonly score: number
  readonly grade: Grade
  readonly tier: string
  readonly is_eligible: boolean
  readonly checkpoint_count: number
  readonly trend_30d: number | null
  readonly visibility?: Visibility
}

const stateOf = (rating: Rating | null | undefined, needed: number): BadgeState => {
  if (rating === null || rating === undefined || rating.visibility === "private") return NOT_RATED
  if (!rating.is_eligible || rating.grade === "NR") {
    return { kind: "building", analysed: rating.checkpoint_count, needed }
  }
  return { kind: "rated", score: rating.score, grade: rating.grade, tier: rating.tier, trend_30d: rating.trend_30d }
}

/** The badge of an agent's stored reputation: null (unknown id, nothing computed yet) and private are "Not Rated". */
export const agentBadgeState = (reputation: Rating | null | undefined): BadgeState =>
  stateOf(reputation, ELIGIBILITY_THRESHOLD)

/** The badge of a team's stored reputation (null and private are "Not Rated"). */
export const teamBadgeState = (
  reputation: Rating | null | undefined,
  needed: number = TEAM_ELIGIBILITY_THRESHOLD
): BadgeState => stateOf(reputation, needed)

/** ↑ at +TREND_THRESHOLD or more, ↓ at −TREND_THRESHOLD or less, → otherwise and without a 30-day-old score. */
export const trendArrow = (trend: number | null): "↑" | "↓" | "→" =>
  trend === null ? "→" : trend >= TREND_THRESHOLD ? "↑" : trend <= -TREND_THRESHOLD ? "↓" : "→"

const trendWords = (trend: number | null): string =>
  trend === null ? "no 30-day trend yet" : `${trend > 0 ? "+" : trend < 0 ? "−" : "±"}${Math.abs(trend)} in 30 days`

/** Message backgrounds by grade, and for the building state; all keep white text at ≥ 4.5:1. */
export const BADGE_COLORS: Readonly<Record<BadgeStyle, Readonly<Record<Grade | "building", string>>>> = {
  light: {
    AAA: "#1a7f37",
    AA: "#2b7a0b",
    A: "#467310",
    BBB: "#8a6a00",
    BB: "#a85300",
    B: "#c2410c",
    CCC: "#b91c1c",
    NR: "#57606a",
    building: "#0550ae"
  },
  dark: {
    AAA: "#116329",
    AA: "#1e5e0a",
    A: "#3f6212",
    BBB: "#6b5200",
    BB: "#8a4500",
    B: "#9a3412",
    CCC: "#8e1519",
    NR: "#3d444d",
    building: "#0a3069"
  }
}

export const LABEL_COLORS: Readonly<Record<BadgeStyle, string>> = { light: "#555555", dark: "#1f2328" }

/** What a badge draws: `label` empty for message-only variants; `accessible` is its title and aria-label. */
export interface BadgeText {
  readonly label: string
  readonly message: string
  readonly color: Grade | "building"
  readonly accessible: string
}

const AGENT_LABEL = "Candor Trust"
const TEAM_LABEL = "Team Trust"
const TEAM_TIER_LABEL = "Candor Team"

const agentText = (state: BadgeState, variant: AgentBadgeVariant): BadgeText => {
  const label = variant === "compact" ? "" : AGENT_LABEL
  switch (state.kind) {
    case "not_rated":
      return { label, message: "Not Rated", color: "NR", accessible: `${AGENT_LABEL}: Not Rated` }
    case "building": {
      const message = `Building ${state.analysed}/${state.needed}`
      return {
        label,
        message,
        color: "building",
        accessible: `${AGENT_LABEL}: ${message} analysed checkpoints`
      }
    }
    case "rated": {
      const message =
        variant === "score_tier"
          ? `${state.score} ${state.tier}`
          : variant === "score_trend"
            ? `${state.score} ${trendArrow(state.trend_30d)}`
            : `${state.score}`
      const detail = variant === "score_trend" ? ` (${trendWords(state.trend_30d)})` : ""
      return { label, message, color: state.grade, accessible: `${AGENT_LABEL}: ${message}${detail}` }
    }
  }
}

const teamText = (state: BadgeState, variant: TeamBadgeVariant): BadgeText => {
  const named = variant === "score_tier" ? TEAM_TIER_LABEL : TEAM_LABEL
  const label = variant === "compact" ? "" : named
  switch (state.kind) {
    case "not_rated":
      return { label, message: "Not Rated", color: "NR", accessible: `${named}: Not Rated` }
    case "building": {
      const message = `Building ${state.analysed}/${state.needed}`
      return { label, message, color: "building", accessible: `${named}: ${message} analysed checkpoints` }
    }
    case "rated": {
      const message =
        variant === "score"
          ? `${state.score}`
          : variant === "score_grade"
            ? `${state.grade} ${state.score}`
            : variant === "score_trend"
              ? `${state.grade} ${state.score} ${trendArrow(state.trend_30d)}`
              : variant === "score_tier"
                ? `${state.score} ${state.tier}`
                : state.grade
      const detail = variant === "score_trend" ? ` (${trendWords(state.trend_30d)})` : ""
      return { label, message, color: state.grade, accessible: `${named}: ${message}${detail}` }
    }
  }
}

/** What an agent badge says, before drawing (tests and docs read it). */
export const agentBadgeText = (state: BadgeState, variant: AgentBadgeVariant = "score"): BadgeText =>
  agentText(state, variant)

/** What a team badge says, before drawing. */
export const teamBadgeText = (state: BadgeState, variant: TeamBadgeVariant = "grade"): BadgeText =>
  teamText(state, variant)

export interface BadgeOptions {
  /** Letters, digits, `-`, `_`: keeps the SVG's element ids unique when several badges are inlined in one page. */
  readonly idSuffix?: string
}

const escapeXml = (text: string): string =>
  text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;")

/** Draws a badge; the renderer's own title (label: message) is replaced by `accessible` when they differ. */
export const drawBadge = (text: BadgeText, style: BadgeStyle, options: BadgeOptions = {}): string => {
  const svg = makeBadge({
    label: text.label,
    message: text.message,
    color: BADGE_COLORS[style][text.color],
    // a label colour without a label would draw an empty grey stub before the message
    ...(text.label === "" ? {} : { labelColor: LABEL_COLORS[style] }),
    style: "flat",
    ...(options.idSuffix === undefined ? {} : { idSuffix: options.idSuffix })
  })
  const drawn = text.label === "" ? text.message : `${text.label}: ${text.message}`
  if (drawn === text.accessible) return svg
  // badge-maker writes the accessible text in exactly these two places (lib/badge-renderers.js, renderBadge).
  const rendered = `aria-label="${escapeXml(drawn)}"><title>${escapeXml(drawn)}</title>`
  if (!svg.includes(rendered)) throw new RangeError("badge-maker no longer writes its title as expected")
  return svg.replace(
    rendered,
    `aria-label="${escapeXml(text.accessible)}"><title>${escapeXml(text.accessible)}</title>`
  )
}

/** `[Candor Trust | 782]` and its variants; building and not-rated states whatever the variant. */
export const agentBadge = (
  state: BadgeState,
  variant: AgentBadgeVariant = "score",
  style: BadgeStyle = "light",
  options: BadgeOptions = {}
): string => drawBadge(agentText(state, variant), style, options)

/** `[Team Trust | AA]` and its variants. */
export const teamBadge = (
  state: BadgeState,
  variant: TeamBadgeVariant = "grade",
  style: BadgeStyle = "light",
  options: BadgeOptions = {}
): string => drawBadge(teamText(state, variant), style, options)
