import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import {
  AGENT_BADGE_VARIANTS,
  agentBadge,
  AgentBadgeParams,
  agentBadgeState,
  agentBadgeText,
  BADGE_COLORS,
  BADGE_STYLES,
  type BadgeState,
  LABEL_COLORS,
  type Rating,
  TEAM_BADGE_VARIANTS,
  teamBadge,
  TeamBadgeParams,
  teamBadgeState,
  teamBadgeText,
  trendArrow
} from "../../core/Badge.js"
import { contrast, over, parseColor } from "../support/Contrast.js"

const rated = (score: number, trend: number | null = null): BadgeState => ({
  kind: "rated",
  score,
  grade: score >= 800 ? "AA" : "A",
  tier: score >= 800 ? "Established" : "Reliable",
  trend_30d: trend
})
const building: BadgeState = { kind: "building", analysed: 23, needed: 50 }
const notRated: BadgeState = { kind: "not_rated" }

const rating = (over: Partial<Rating> = {}): Rating => ({
  score: 782,
  grade: "A",
  tier: "Reliable",
  is_eligible: true,
  checkpoint_count: 240,
  trend_30d: 14,
  visibility: "public",
  ...over
})

const shown = (text: { label: string; message: string }): string =>
  text.label === "" ? `[${text.message}]` : `[${text.label} | ${text.message}]`

/** The title and aria-label badge-maker wrote (after our override), unescaped. */
const accessibleOf = (svg: string): { title: string; aria: string } => {
  const unescape = (s: string) =>
    s
      .replace(/&lt;/g, "<")
      .replace(/&gt;/g, ">")
      .replace(/&quot;/g, '"')
      .replace(/&apos;/g, "'")
      .replace(/&amp;/g, "&")
  const titles = [...svg.matchAll(/<title>([^<]*)<\/title>/g)]
  expect(titles).toHaveLength(1)
  return { title: unescape(titles[0]?.[1] ?? ""), aria: unescape(/aria-label="([^"]*)"/.exec(svg)?.[1] ?? "") }
}

describe("agent badge text", () => {
  it.each([
    [rated(782, 14), "score", "[Candor Trust | 782]"],
    [rated(782, 14), "score_tier", "[Candor Trust | 782 Reliable]"],
    [rated(782, 14), "score_trend", "[Candor Trust | 782 ↑]"],
    [rated(782, -10), "score_trend", "[Candor Trust | 782 ↓]"],
    [rated(782, null), "score_trend", "[Candor Trust | 782 →]"],
    [rated(782, 14), "compact", "[782]"],
    [building, "score", "[Candor Trust | Building 23/50]"],
    [building, "score_tier", "[Candor Trust | Building 23/50]"],
    [building, "compact", "[Building 23/50]"],
    [notRated, "score", "[Candor Trust | Not Rated]"],
    [notRated, "score_trend", "[Candor Trust | Not Rated]"]
  ] as const)("%o %s draws %s", (state, variant, expected) => {
    expect(shown(agentBadgeText(state, variant))).toBe(expected)
  })

  it("defaults to the score variant", () => {
    expect(shown(agentBadgeText(rated(782)))).toBe("[Candor Trust | 782]")
  })

  it("colours by grade: not rated is grey, building blue, a grade its own colour", () => {
    expect(agentBadgeText(notRated).color).toBe("NR")
    expect(agentBadgeText(building).color).toBe("building")
    expect(agentBadgeText(rated(812)).color).toBe("AA")
    expect(agentBadge(notRated)).toContain(`fill="${BADGE_COLORS.light.NR}"`)
    expect(agentBadge(rated(812), "score", "dark")).toContain(`fill="${BADGE_COLORS.dark.AA}"`)
    expect(agentBadge(rated(812), "score", "dark")).toContain(`fill="${LABEL_COLORS.dark}"`)
  })
})

describe("team badge text", () => {
  const team: BadgeState = { kind: "rated", score: 812, grade: "AA", tier: "Established", trend_30d: 11 }
  it.each([
    [team, "grade", "[Team Trust | AA]"],
    [team, "score", "[Team Trust | 812]"],
    [team, "score_grade", "[Team Trust | AA 812]"],
    [team, "score_trend", "[Team Trust | AA 812 ↑]"],
    [team, "score_tier", "[Candor Team | 812 Established]"],
    [team, "compact", "[AA]"],
    [{ kind: "building", analysed: 4, needed: 10 }, "grade", "[Team Trust | Building 4/10]"],
    [notRated, "score_grade", "[Team Trust | Not Rated]"]
  ] as const)("%o %s draws %s", (state, variant, expected) => {
    expect(shown(teamBadgeText(state, variant))).toBe(expected)
  })

  it("defaults to the grade variant and a team needs 10 analysed checkpoints", () => {
    expect(shown(teamBadgeText(team))).toBe("[Team Trust | AA]")
    expect(teamBadgeState(rating({ is_eligible: false, grade: "NR", checkpoint_count: 4 }))).toEqual({
      kind: "building",
      analysed: 4,
      needed: 10
    })
  })
})

describe("trend arrow", () => {
  it.each([
    [10, "↑"],
    [250, "↑"],
    [9, "→"],
    [0, "→"],
    [-9, "→"],
    [-10, "↓"],
    [null, "→"]
  ] as const)("%o points over 30 days is %s", (trend, arrow) => {
    expect(trendArrow(trend)).toBe(arrow)
  })
})

describe("badge state of a stored reputation", () => {
  it("unknown and private ids are Not Rated, the same badge byte for byte", () => {
    expect(agentBadgeState(null)).toEqual(notRated)
    expect(agentBadgeState(undefined)).toEqual(notRated)
    expect(agentBadgeState(rating({ visibility: "private" }))).toEqual(notRated)
    expect(agentBadge(agentBadgeState(rating({ visibility: "private" })))).toBe(agentBadge(agentBadgeState(null)))
  })

  it("an agent under 50 analysed checkpoints is building, with its count", () => {
    expect(agentBadgeState(rating({ is_eligible: false, grade: "NR", checkpoint_count: 23 }))).toEqual(building)
  })

  it("unlisted and public agents show their score", () => {
    for (const visibility of ["public", "unlisted"] as const) {
      expect(agentBadgeState(rating({ visibility }))).toEqual({
        kind: "rated",
        score: 782,
        grade: "A",
        tier: "Reliable",
        trend_30d: 14
      })
    }
  })
})

const allAgentBadges = BADGE_STYLES.flatMap((style) =>
  [rated(950, 30), rated(782, -12), building, notRated].flatMap((state) =>
    AGENT_BADGE_VARIANTS.map((variant) => ({
      style,
      svg: agentBadge(state, variant, style),
      text: agentBadgeText(state, variant)
    }))
  )
)
const allTeamBadges = BADGE_STYLES.flatMap((style) =>
  [rated(812, 11), { kind: "building", analysed: 4, needed: 10 } as const, notRated].flatMap((state) =>
    TEAM_BADGE_VARIANTS.map((variant) => ({
      style,
      svg: teamBadge(state, variant, style),
      text: teamBadgeText(state, variant)
    }))
  )
)

describe("every SVG", () => {
  it("has one title, equal to its aria-label, that names the badge even when only the message is drawn", () => {
    for (const { svg, text } of [...allAgentBadges, ...allTeamBadges]) {
      const { title, aria } = accessibleOf(svg)
      expect(title).toBe(text.accessible)
      expect(aria).toBe(title)
      expect(title).toMatch(/^(Candor Trust|Team Trust|Candor Team): /)
      expect(svg).toContain(`>${text.message.replace(/&/g, "&amp;").replace(/</g, "&lt;")}</text>`)
    }
  })

  it("says the trend in words in the title", () => {
    expect(accessibleOf(agentBadge(rated(782, 14), "score_trend")).title).toBe("Candor Trust: 782 ↑ (+14 in 30 days)")
    expect(accessibleOf(agentBadge(rated(782, null), "score_trend")).title).toBe(
      "Candor Trust: 782 → (no 30-day trend yet)"
    )
  })

  it("draws no label stub for message-only badges", () => {
    const svg = agentBadge(rated(782), "compact")
    expect(svg).toMatch(/<rect width="0" height="20"/)
    expect(svg).not.toContain(LABEL_COLORS.light)
  })

  it("keeps element ids apart with idSuffix (for several inline badges in one page)", () => {
    const svg = agentBadge(rated(782), "score", "light", { idSuffix: "x7" })
    expect(svg).toContain('id="sx7"')
    expect(svg).toContain('id="rx7"')
  })
})

describe("contrast", () => {
  const white = parseColor("#ffffff")
  const gradientTop = parseColor("#bbbbbb")

  it("every message and label colour keeps white text at 4.5:1 or more, also under the gradient's lighter top", () => {
    for (const style of BADGE_STYLES) {
      for (const color of [...Object.values(BADGE_COLORS[style]), LABEL_COLORS[style]]) {
        const background = parseColor(color)
        expect(contrast(background, white), `${style} ${color}`).toBeGreaterThanOrEqual(4.5)
        // flat badges lay a gradient from #bbb at 10% (top) to black at 10% (bottom) over the colours
        expect(contrast(over(background, gradientTop, 0.1), white), `${style} ${color} top`).toBeGreaterThanOrEqual(4.5)
      }
    }
  })

  it("the renderer writes white text on every badge we draw (no dark-text override)", () => {
    for (const { svg } of [...allAgentBadges, ...allTeamBadges]) {
      expect(svg).toMatch(/<g fill="#fff" text-anchor="middle"/)
      // badge-maker adds fill="#333" to a text on a light background; none of ours is light
      expect(svg).not.toMatch(/<text [^>]*fill="/)
    }
  })

  it("the helper itself reads the WCAG extremes", () => {
    expect(contrast(parseColor("#000"), white)).toBeCloseTo(21, 5)
    expect(contrast(parseColor("#777777"), white)).toBeLessThan(4.5)
  })
})

describe("route parameters", () => {
  it("default to score (agents), grade (teams) and light", () => {
    expect(Schema.decodeUnknownSync(AgentBadgeParams)({})).toEqual({ variant: "score", style: "light" })
    expect(Schema.decodeUnknownSync(TeamBadgeParams)({})).toEqual({ variant: "grade", style: "light" })
    expect(Schema.decodeUnknownSync(TeamBadgeParams)({ variant: "score_grade", style: "dark" })).toEqual({
      variant: "score_grade",
      style: "dark"
    })
  })

  it("refuse an unknown variant or style with a message naming the field and the choices", () => {
    const bad = Schema.decodeUnknownEither(AgentBadgeParams)({ variant: "grade" })
    expect(Either.isLeft(bad)).toBe(true)
    expect(String(Either.isLeft(bad) ? bad.left.message : "")).toMatch(/variant[\s\S]*must be one of score, score_tier/)
    const style = Schema.decodeUnknownEither(TeamBadgeParams)({ style: "neon" })
    expect(String(Either.isLeft(style) ? style.left.message : "")).toMatch(/style[\s\S]*must be one of light, dark/)
  })
})
