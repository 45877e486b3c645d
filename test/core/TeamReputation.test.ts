import { describe, expect, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import {
  coherenceQuality,
  computeTeamReputation,
  memberQuality,
  type TeamAssessmentInput,
  teamRiskLevel
} from "../../core/TeamReputation.js"

const NOW = new Date("2026-06-01T00:00:00Z")

const assessment = (day: string, risk: TeamAssessmentInput["risk_level"] = "low"): TeamAssessmentInput => ({
  assessed_at: `${day}T00:00:00Z`,
  member_coherence: 0.8,
  card_coherence: null,
  risk_level: risk
})

describe("team reputation", () => {
  // The worked example of docs/team-reputation.md, every number derived there by hand.
  it("computes the documented worked example", () => {
    const result = computeTeamReputation(
      {
        assessments: [
          { assessed_at: "2026-05-02T00:00:00Z", member_coherence: 0.8, card_coherence: 0.6, risk_level: "low" },
          { assessed_at: "2026-05-17T00:00:00Z", member_coherence: 0.9, card_coherence: null, risk_level: "medium" },
          { assessed_at: "2026-05-31T00:00:00Z", member_coherence: 0.6, card_coherence: 0.9, risk_level: "high" }
        ],
        member_scores: [820, 640, 910, 450],
        roster_changes: ["2026-05-20T00:00:00Z", "2026-01-01T00:00:00Z"]
      },
      NOW
    )
    expect(Object.fromEntries(result.components.map((c) => [c.key, c.score]))).toEqual({
      coherence_history: 759,
      member_quality: 578,
      operational_record: 667,
      structural_stability: 950,
      assessment_density: 337
    })
    expect(result.score).toBe(672)
    // Three assessments: not rated yet, whatever the score.
    expect(result).toMatchObject({ grade: "NR", is_eligible: false, confidence: "insufficient", total_assessments: 3 })
  })

  it("rates from the tenth assessment, with the agents' grade scale and the team confidence thresholds", () => {
    const days = Array.from({ length: 10 }, (_, i) => `2026-05-${String(20 + i).padStart(2, "0")}`)
    const rated = computeTeamReputation(
      { assessments: days.map((d) => assessment(d)), member_scores: [900, 900], roster_changes: [] },
      NOW
    )
    expect(rated.is_eligible).toBe(true)
    expect(rated.confidence).toBe("low")
    expect(rated.grade).not.toBe("NR")
    const nine = computeTeamReputation(
      { assessments: days.slice(1).map((d) => assessment(d)), member_scores: [900, 900], roster_changes: [] },
      NOW
    )
    expect(nine.grade).toBe("NR")
  })

  it("blends CQ 70/30 and falls back to whichever side was measured", () => {
    expect(coherenceQuality({ ...assessment("2026-05-01"), member_coherence: 1, card_coherence: 0 })).toBeCloseTo(0.7)
    expect(coherenceQuality({ ...assessment("2026-05-01"), member_coherence: null, card_coherence: 0.4 })).toBe(0.4)
    expect(coherenceQuality({ ...assessment("2026-05-01"), member_coherence: null, card_coherence: null })).toBeNull()
  })

  it("weighs the worst quarter of the members as a tail", () => {
    expect(memberQuality([])).toBe(0)
    expect(memberQuality([800, 800])).toBe(800)
    // Eight members: the worst two (300, 500) are the tail.
    expect(memberQuality([300, 500, 900, 900, 900, 900, 900, 900])).toBe(0.5 * 775 + 0.5 * 400)
  })

  it("costs 50 points per roster change for 90 days", () => {
    const stability = (changes: ReadonlyArray<string>) =>
      computeTeamReputation({ assessments: [], member_scores: [], roster_changes: changes }, NOW).components.find(
        (c) => c.key === "structural_stability"
      )!.score
    expect(stability([])).toBe(1000)
    expect(stability(["2026-05-31T00:00:00Z", "2026-03-04T00:00:00Z"])).toBe(900)
    expect(stability(["2026-03-02T23:59:59Z"])).toBe(1000) // 90 days and one second ago
    expect(stability(Array.from({ length: 25 }, () => "2026-05-31T00:00:00Z"))).toBe(0)
  })

  it("rates an assessment's risk from its members", () => {
    const m = (score: number, eligible = true, status: "active" | "paused" | "killed" = "active") => ({
      score,
      eligible,
      status
    })
    expect(teamRiskLevel([m(800), m(750)])).toBe("low")
    expect(teamRiskLevel([m(800), m(650)])).toBe("medium")
    expect(teamRiskLevel([m(800), m(100, false)])).toBe("medium") // nobody rated below 700; one unrated
    expect(teamRiskLevel([m(100, false), m(50, false)])).toBe("medium")
    expect(teamRiskLevel([m(800), m(450)])).toBe("high")
    expect(teamRiskLevel([m(800, true, "paused"), m(900)])).toBe("high")
    expect(teamRiskLevel([m(800), m(399)])).toBe("critical")
    expect(teamRiskLevel([m(900, true, "killed"), m(900)])).toBe("critical")
  })

  it("keeps every score in 0..1000 and equal to the rounded weighted sum of its components", () => {
    const risk = FastCheck.constantFrom("low" as const, "medium" as const, "high" as const, "critical" as const)
    const unit = FastCheck.option(FastCheck.double({ min: 0, max: 1, noNaN: true }), { nil: null })
    const day = FastCheck.integer({ min: 0, max: 400 }).map((d) =>
      new Date(NOW.getTime() - d * 86_400_000).toISOString()
    )
    FastCheck.assert(
      FastCheck.property(
        FastCheck.array(
          FastCheck.record({ assessed_at: day, member_coherence: unit, card_coherence: unit, risk_level: risk }),
          { maxLength: 40 }
        ),
        FastCheck.array(FastCheck.integer({ min: 0, max: 1000 }), { maxLength: 50 }),
        FastCheck.array(day, { maxLength: 30 }),
        (assessments, member_scores, roster_changes) => {
          const result = computeTeamReputation({ assessments, member_scores, roster_changes }, NOW)
          expect(result.score).toBeGreaterThanOrEqual(0)
          expect(result.score).toBeLessThanOrEqual(1000)
          for (const c of result.components)
            expect(Number.isInteger(c.score) && c.score >= 0 && c.score <= 1000).toBe(true)
          // Exact: the weighted sum in whole hundredths, rounded half up.
          const hundredths = result.components.reduce((s, c) => s + c.score * Math.round(c.weight * 100), 0)
          expect(result.score).toBe(Math.round(hundredths / 100))
          expect(
            Math.abs(result.score - result.components.reduce((s, c) => s + c.weighted_score, 0))
          ).toBeLessThanOrEqual(0.5 + 1e-9)
        }
      )
    )
  })
})
