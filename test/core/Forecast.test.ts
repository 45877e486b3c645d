/** The forecast: a worked example (every probability computed by hand), bounds, no data, determinism. */
import { describe, expect, it } from "@effect/vitest"
import type { FaultLine } from "../../core/FaultLines.js"
import { FAILURE_MODES, FORECAST_WEIGHTS, forecastOf, type MemberRecord, ratesOf } from "../../core/Forecast.js"

const line = (classification: FaultLine["classification"], impact_score: number): FaultLine => ({
  value: `v-${classification}-${impact_score}`,
  classification,
  severity: "low",
  impact_score,
  resolution_hint: "",
  team_requires: false,
  agents_declaring: [],
  agents_missing: [],
  agents_conflicting: []
})

const MEMBERS: ReadonlyArray<MemberRecord> = [
  {
    agent_id: "a",
    verdicts: { clear: 14, review_needed: 4, boundary_violation: 2 },
    drift_alerts: 1,
    traces: 10,
    policy_failures: 3,
    components: {
      integrity_ratio: 900,
      compliance: 800,
      drift_stability: 700,
      trace_completeness: 1000,
      coherence_compatibility: 600
    }
  },
  {
    agent_id: "b",
    verdicts: { clear: 20, review_needed: 0, boundary_violation: 0 },
    drift_alerts: 0,
    traces: 10,
    policy_failures: 1,
    components: {
      integrity_ratio: 700,
      compliance: 600,
      drift_stability: 900,
      trace_completeness: 800,
      coherence_compatibility: 800
    }
  }
]
const LINES = [
  line("incompatible", 0.5),
  line("incompatible", 1),
  line("priority_mismatch", 0.25),
  line("resolvable", 0.4)
]

describe("forecast", () => {
  it("computes the rates and every probability of a worked example", () => {
    const rates = ratesOf(MEMBERS, LINES)
    // 40 checkpoints: 4 review (0.1), 2 violations (0.05); 20 traces, 4 fail (0.2); 1 of 2 drifted.
    // Mean components: integrity 800 → 0.2, compliance 700 → 0.3, drift 800 → 0.2, trace 900 → 0.1, coherence 700 → 0.3.
    expect(rates).toEqual({
      incompatible_impact: 1,
      priority_impact: 0.25,
      resolvable_impact: 0.4,
      review_rate: 0.1,
      violation_rate: 0.05,
      policy_fail_rate: 0.2,
      drift_share: 0.5,
      risk_integrity_ratio: 0.2,
      risk_compliance: 0.3,
      risk_drift_stability: 0.2,
      risk_trace_completeness: 0.1,
      risk_coherence_compatibility: 0.3
    })
    const p = Object.fromEntries(forecastOf(rates).map((f) => [f.mode, f.probability]))
    expect(p).toEqual({
      escalation_conflict: 0.58, // .5·1 + .2·.25 + .3·.1
      capability_gap: 0.275, // .5·.4 + .25·.1 + .25·.2
      value_override: 0.17, // .4·.05 + .3·.2 + .3·.3
      coordination_deadlock: 0.49, // .4·.25 + .3·1 + .3·.3
      trust_erosion: 0.275 // .4·.5 + .3·.2 + .3·.05
    })
  })

  it("publishes the evidence it summed, and every mode's weights sum to one", () => {
    const forecast = forecastOf(ratesOf(MEMBERS, LINES))
    expect(forecast.map((f) => f.mode)).toEqual(FAILURE_MODES)
    for (const f of forecast) {
      expect(f.evidence.reduce((p, e) => p + e.weight * e.value, 0)).toBeCloseTo(f.probability, 4)
    }
    for (const mode of FAILURE_MODES) {
      expect(FORECAST_WEIGHTS[mode].reduce((sum, [w]) => sum + w, 0)).toBeCloseTo(1, 10)
    }
  })

  it("is zero without data (no record is no evidence of risk) and at most one at worst", () => {
    expect(forecastOf(ratesOf([], [])).every((f) => f.probability === 0)).toBe(true)
    const worst: MemberRecord = {
      agent_id: "w",
      verdicts: { clear: 0, review_needed: 0, boundary_violation: 5 },
      drift_alerts: 3,
      traces: 2,
      policy_failures: 2,
      components: {
        integrity_ratio: 0,
        compliance: 0,
        drift_stability: 0,
        trace_completeness: 0,
        coherence_compatibility: 0
      }
    }
    const forecast = forecastOf(
      ratesOf([worst], [line("incompatible", 1), line("priority_mismatch", 1), line("resolvable", 1)])
    )
    // escalation_conflict: .5 + .2, its review rate is 0 (every checkpoint a violation).
    expect(forecast.map((f) => f.probability)).toEqual([0.7, 1, 1, 1, 1])
  })

  it("is deterministic under member order", () => {
    expect(ratesOf([...MEMBERS].reverse(), LINES)).toEqual(ratesOf(MEMBERS, LINES))
  })
})
