/**
 * The reputation formulas (core/Reputation.ts), one table per rule and its boundaries; Mnemom's
 * published methodology's wrong worked examples as negative tests; and properties over arbitrary tallies.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import {
  COMPLIANCE_WINDOW_MS,
  complianceOf,
  computeReputation,
  confidenceOf,
  gradeOf,
  NO_COHERENCE,
  type ReputationTally,
  scoreOf,
  TIERS,
  violationImpact,
  WEIGHTS
} from "../../core/Reputation.js"
import { COMPONENT_KEYS, GRADES } from "../../core/schema/Reputation.js"

const NOW = new Date("2026-03-20T12:00:00.000Z")
const HOUR = 3_600_000
const ago = (ms: number) => new Date(NOW.getTime() - ms).toISOString()

const EMPTY: ReputationTally = {
  certified: 0,
  analysed: 0,
  analysed_clear: 0,
  long_sessions: 0,
  stable_sessions: 0,
  violation_sessions: []
}
const tally = (partial: Partial<ReputationTally>): ReputationTally => ({ ...EMPTY, ...partial })
const componentScores = (result: ReturnType<typeof computeReputation>) =>
  Object.fromEntries(result.components.map((c) => [c.key, c.score]))

describe("grades", () => {
  it.each([
    [1000, "AAA"],
    [900, "AAA"],
    [899, "AA"],
    [800, "AA"],
    [799, "A"],
    [782, "A"],
    [700, "A"],
    [699, "BBB"],
    [600, "BBB"],
    [599, "BB"],
    [500, "BB"],
    [499, "B"],
    [400, "B"],
    [399, "CCC"],
    [0, "CCC"]
  ] as const)("%i is %s", (score, grade) => {
    expect(gradeOf(score, true)).toBe(grade)
    expect(gradeOf(score, false)).toBe("NR")
  })

  it("names each grade's tier", () => {
    expect(TIERS).toStrictEqual({
      AAA: "Exemplary",
      AA: "Established",
      A: "Reliable",
      BBB: "Developing",
      BB: "Emerging",
      B: "Concerning",
      CCC: "Critical",
      NR: "Not Rated"
    })
  })
})

describe("confidence and eligibility", () => {
  it.each([
    [0, "insufficient"],
    [49, "insufficient"],
    [50, "low"],
    [199, "low"],
    [200, "medium"],
    [999, "medium"],
    [1000, "high"],
    [250_000, "high"]
  ] as const)("%i analysed checkpoints: %s", (count, confidence) => {
    expect(confidenceOf(count)).toBe(confidence)
    const result = computeReputation(
      tally({ certified: count, analysed: count, analysed_clear: count }),
      NO_COHERENCE,
      NOW
    )
    expect(result.confidence).toBe(confidence)
    expect(result.checkpoint_count).toBe(count)
  })

  it.each([
    [9, "insufficient"],
    [10, "low"],
    [29, "low"],
    [30, "medium"],
    [99, "medium"],
    [100, "high"]
  ] as const)("team thresholds (10, 30, 100): %i is %s", (count, confidence) => {
    expect(confidenceOf(count, [10, 30, 100])).toBe(confidence)
  })

  it("49 analysed is not rated, 50 is rated; certified-only checkpoints never count", () => {
    const at49 = computeReputation(tally({ certified: 500, analysed: 49, analysed_clear: 49 }), NO_COHERENCE, NOW)
    expect(at49).toMatchObject({ is_eligible: false, grade: "NR", tier: "Not Rated", confidence: "insufficient" })
    const at50 = computeReputation(tally({ certified: 50, analysed: 50, analysed_clear: 50 }), NO_COHERENCE, NOW)
    expect(at50).toMatchObject({ is_eligible: true, grade: "AAA", score: 975, confidence: "low" })
  })
})

describe("integrity ratio", () => {
  it.each([
    [0, 0, 0],
    [4, 3, 750],
    [3, 2, 667],
    [1000, 999, 999],
    [2000, 1999, 1000],
    [50, 50, 1000]
  ])("%i analysed, %i clear: %i", (analysed, clear, score) => {
    const result = computeReputation(tally({ certified: analysed, analysed, analysed_clear: clear }), NO_COHERENCE, NOW)
    expect(componentScores(result).integrity_ratio).toBe(score)
  })
})

describe("compliance", () => {
  it.each([
    ["now", 0, 1],
    ["a week", 168 * HOUR, 0.5],
    ["two weeks", 336 * HOUR, 0.25],
    ["90 days exactly", COMPLIANCE_WINDOW_MS, Math.pow(2, -2160 / 168)],
    ["90 days and a millisecond", COMPLIANCE_WINDOW_MS + 1, 0],
    ["a year", 365 * 24 * HOUR, 0],
    ["an hour in the future", -HOUR, 1]
  ])("a violation %s old weighs %d", (_, age, impact) => {
    expect(violationImpact(ago(age), NOW)).toBeCloseTo(impact, 12)
  })

  it("an unreadable time weighs nothing", () => {
    expect(violationImpact("not a time", NOW)).toBe(0)
  })

  it.each([
    [0, 1000],
    [0.5, 544],
    [1, 354],
    [2, 192]
  ])("impact sum %d: %i", (impact, score) => {
    expect(Math.round(complianceOf(impact))).toBe(score)
  })

  it("Mnemom's worked examples were wrong: 1.37 gives 274 (not 267), 1.56 gives 244 (not 181)", () => {
    expect(Math.round(complianceOf(1.37))).toBe(274)
    expect(Math.round(complianceOf(1.37))).not.toBe(267)
    expect(Math.round(complianceOf(1.56))).toBe(244)
    expect(Math.round(complianceOf(1.56))).not.toBe(181)
  })

  it("a session's violation a week old counts half a fresh one; sessions past 90 days not at all", () => {
    const fresh = computeReputation(
      tally({ violation_sessions: [{ session_id: "a", last_violation_at: ago(0) }] }),
      NO_COHERENCE,
      NOW
    )
    const weekOld = computeReputation(
      tally({ violation_sessions: [{ session_id: "a", last_violation_at: ago(168 * HOUR) }] }),
      NO_COHERENCE,
      NOW
    )
    const stale = computeReputation(
      tally({
        violation_sessions: [
          { session_id: "a", last_violation_at: ago(91 * 24 * HOUR) },
          { session_id: "b", last_violation_at: ago(200 * 24 * HOUR) }
        ]
      }),
      NO_COHERENCE,
      NOW
    )
    expect(fresh.components[1]!.inputs).toMatchObject({ violation_sessions: 1, impact_sum: 1 })
    expect(componentScores(fresh).compliance).toBe(354)
    expect(weekOld.components[1]!.inputs).toMatchObject({ violation_sessions: 1, impact_sum: 0.5 })
    expect(componentScores(weekOld).compliance).toBe(544)
    expect(stale.components[1]!.inputs).toMatchObject({ violation_sessions: 0, impact_sum: 0 })
    expect(componentScores(stale).compliance).toBe(1000)
  })
})

describe("drift stability, trace completeness, coherence", () => {
  it.each([
    [0, 0, 1000],
    [1, 0, 0],
    [3, 2, 667],
    [30, 29, 967]
  ])("%i long sessions, %i stable: %i", (long, stable, score) => {
    const result = computeReputation(tally({ long_sessions: long, stable_sessions: stable }), NO_COHERENCE, NOW)
    expect(componentScores(result).drift_stability).toBe(score)
  })

  it.each([
    [0, 0, 1000],
    [10, 0, 0],
    [240, 220, 917],
    [100_001, 50, 0]
  ])("%i certified, %i analysed: %i", (certified, analysed, score) => {
    const result = computeReputation(tally({ certified, analysed, analysed_clear: analysed }), NO_COHERENCE, NOW)
    expect(componentScores(result).trace_completeness).toBe(score)
  })

  it.each([
    [null, 0, 750],
    [null, 30, 780],
    [0.82, 0, 820],
    [0.82, 12.25, 832],
    [0.95, 100, 1000],
    [0.02, -50, 0],
    [0, 0, 0]
  ])("mean pair score %s with trust %d: %i", (mean, trust, score) => {
    const result = computeReputation(EMPTY, { mean_pair_score: mean, peers: 3, trust_adjustment: trust }, NOW)
    expect(componentScores(result).coherence_compatibility).toBe(score)
  })
})

describe("the score", () => {
  it("an empty log: integrity 0, everything else at its default, not rated", () => {
    const result = computeReputation(EMPTY, NO_COHERENCE, NOW)
    expect(componentScores(result)).toStrictEqual({
      integrity_ratio: 0,
      compliance: 1000,
      drift_stability: 1000,
      trace_completeness: 1000,
      coherence_compatibility: 750
    })
    expect(result).toMatchObject({
      score: 575,
      grade: "NR",
      tier: "Not Rated",
      is_eligible: false,
      checkpoint_count: 0,
      confidence: "insufficient"
    })
  })

  it("Mnemom's methodology was wrong: perfect integrity with every other component 0 is 400, grade B (not BBB)", () => {
    const result = computeReputation(
      tally({
        certified: 100_001,
        analysed: 50,
        analysed_clear: 50,
        long_sessions: 1,
        stable_sessions: 0,
        violation_sessions: Array.from({ length: 200 }, (_, i) => ({ session_id: `s${i}`, last_violation_at: ago(0) }))
      }),
      { mean_pair_score: 0, peers: 1, trust_adjustment: 0 },
      NOW
    )
    expect(componentScores(result)).toStrictEqual({
      integrity_ratio: 1000,
      compliance: 0,
      drift_stability: 0,
      trace_completeness: 0,
      coherence_compatibility: 0
    })
    expect(result.score).toBe(400)
    expect(result.grade).toBe("B")
    expect(result.grade).not.toBe("BBB")
  })

  it("Mnemom's methodology was wrong: 782 is A, Reliable (not AA)", () => {
    expect(gradeOf(782, true)).toBe("A")
    expect(TIERS[gradeOf(782, true)]).toBe("Reliable")
  })

  it("an exact half rounds up: 4·710 + 2·172 + 2·682 + 72 + 315 = 4935 tenths is 494 (floating point sums to 493.49999999999994)", () => {
    const components = [
      { key: "integrity_ratio", score: 710 },
      { key: "compliance", score: 172 },
      { key: "drift_stability", score: 682 },
      { key: "trace_completeness", score: 72 },
      { key: "coherence_compatibility", score: 315 }
    ] as const
    expect(components.reduce((sum, c) => sum + c.score * WEIGHTS[c.key], 0)).toBeLessThan(493.5)
    expect(scoreOf(components)).toBe(494)
  })

  it("the worked example of docs/reputation.md", () => {
    const result = computeReputation(
      {
        certified: 240,
        analysed: 220,
        analysed_clear: 209,
        long_sessions: 30,
        stable_sessions: 29,
        violation_sessions: [
          { session_id: "ses-0", last_violation_at: "2026-03-10T12:00:00.000Z" },
          { session_id: "ses-45", last_violation_at: "2026-03-20T00:00:00.000Z" }
        ]
      },
      { mean_pair_score: 0.82, peers: 4, trust_adjustment: 12.25 },
      new Date("2026-03-20T12:00:00.000Z")
    )
    expect(result.components.map((c) => [c.key, c.score, c.weighted_score])).toStrictEqual([
      ["integrity_ratio", 950, 380],
      ["compliance", 282, 56.4],
      ["drift_stability", 967, 193.4],
      ["trace_completeness", 917, 91.7],
      ["coherence_compatibility", 832, 83.2]
    ])
    expect(result.components[1]!.inputs["impact_sum"]).toBeCloseTo(0.3714985722842371 + 0.9516951530106196, 15)
    expect(result).toMatchObject({
      score: 805,
      grade: "AA",
      tier: "Established",
      is_eligible: true,
      checkpoint_count: 220,
      confidence: "medium"
    })
  })
})

describe("properties", () => {
  const arbitraryTally = FastCheck.record({
    certified: FastCheck.nat(100_000),
    analysedShare: FastCheck.double({ min: 0, max: 1, noNaN: true }),
    clearShare: FastCheck.double({ min: 0, max: 1, noNaN: true }),
    long_sessions: FastCheck.nat(5_000),
    stableShare: FastCheck.double({ min: 0, max: 1, noNaN: true }),
    violationAges: FastCheck.array(FastCheck.integer({ min: -HOUR, max: 120 * 24 * HOUR }), { maxLength: 40 })
  }).map((t): ReputationTally => {
    const analysed = Math.floor(t.certified * t.analysedShare)
    return {
      certified: t.certified,
      analysed,
      analysed_clear: Math.floor(analysed * t.clearShare),
      long_sessions: t.long_sessions,
      stable_sessions: Math.floor(t.long_sessions * t.stableShare),
      violation_sessions: t.violationAges.map((age, i) => ({ session_id: `s${i}`, last_violation_at: ago(age) }))
    }
  })
  const arbitraryCoherence = FastCheck.record({
    mean_pair_score: FastCheck.option(FastCheck.double({ min: 0, max: 1, noNaN: true }), { nil: null }),
    peers: FastCheck.nat(50),
    trust_adjustment: FastCheck.double({ min: 0, max: 100, noNaN: true })
  })

  it("the score is an integer in 0..1000, the exact rounding (halves up) of the components' weighted sum", () => {
    FastCheck.assert(
      FastCheck.property(arbitraryTally, arbitraryCoherence, (t, coherence) => {
        const result = computeReputation(t, coherence, NOW)
        expect(Number.isInteger(result.score)).toBe(true)
        expect(result.score).toBeGreaterThanOrEqual(0)
        expect(result.score).toBeLessThanOrEqual(1000)
        expect(result.components.map((c) => c.key)).toStrictEqual([...COMPONENT_KEYS])
        // In integers: Σ score × weight-in-tenths, then halves up.
        const tenths = result.components.reduce((sum, c) => sum + c.score * Math.round(c.weight * 10), 0)
        expect(result.score).toBe(Math.floor((tenths + 5) / 10))
        const floatSum = result.components.reduce((sum, c) => sum + c.weighted_score, 0)
        expect(Math.abs(result.score - floatSum)).toBeLessThanOrEqual(0.5 + 1e-9)
        for (const c of result.components) {
          expect(Number.isInteger(c.score) && c.score >= 0 && c.score <= 1000).toBe(true)
          expect(c.weighted_score).toBeCloseTo(c.score * c.weight, 9)
        }
        expect(result.grade).toBe(gradeOf(result.score, t.analysed >= 50))
      }),
      { numRuns: 2_000 }
    )
  })

  it("a clear analysed checkpoint never lowers the integrity ratio", () => {
    FastCheck.assert(
      FastCheck.property(arbitraryTally, (t) => {
        const before = componentScores(computeReputation(t, NO_COHERENCE, NOW)).integrity_ratio!
        const after = componentScores(
          computeReputation(
            { ...t, certified: t.certified + 1, analysed: t.analysed + 1, analysed_clear: t.analysed_clear + 1 },
            NO_COHERENCE,
            NOW
          )
        ).integrity_ratio!
        expect(after).toBeGreaterThanOrEqual(before)
      }),
      { numRuns: 2_000 }
    )
  })

  it("a violation's impact never increases with age", () => {
    FastCheck.assert(
      FastCheck.property(
        FastCheck.integer({ min: -10 * HOUR, max: 100 * 24 * HOUR }),
        FastCheck.integer({ min: 0, max: 100 * 24 * HOUR }),
        (age, more) => {
          const younger = violationImpact(ago(age), NOW)
          const older = violationImpact(ago(age + more), NOW)
          expect(older).toBeLessThanOrEqual(younger)
          expect(younger).toBeLessThanOrEqual(1)
          expect(older).toBeGreaterThanOrEqual(0)
        }
      ),
      { numRuns: 2_000 }
    )
  })

  it("the grade never gets worse as the score rises", () => {
    const rank = (grade: string) => GRADES.indexOf(grade as (typeof GRADES)[number])
    FastCheck.assert(
      FastCheck.property(FastCheck.nat(1000), FastCheck.nat(1000), (a, b) => {
        const [low, high] = a <= b ? [a, b] : [b, a]
        expect(rank(gradeOf(high, true))).toBeLessThanOrEqual(rank(gradeOf(low, true)))
      })
    )
  })
})
