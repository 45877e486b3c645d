/**
 * The risk formulas (core/Risk.ts) and the signed record (core/RiskSignature.ts): the weight table,
 * the recency decay, the confidence penalty, the cut-offs of each tolerance at and around their
 * bounds, the team formula and its circuit breakers, and a signature that breaks on any change.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  assessRisk,
  assessTeamRisk,
  CONTEXT_WEIGHTS,
  contextRisk,
  decayOf,
  levelOf,
  recencyInputs,
  recencyRisk,
  type IndividualInputs
} from "../../core/Risk.js"
import { recomputeRiskResult, resultMatches, signRiskRecord, verifyRiskSignature } from "../../core/RiskSignature.js"
import { ACTION_TYPES, type RiskAssessment, type RiskTolerance } from "../../core/schema/Risk.js"
import { generateSigningKey } from "../../core/Signing.js"

const perfect = {
  integrity_ratio: 1000,
  compliance: 1000,
  drift_stability: 1000,
  trace_completeness: 1000,
  coherence_compatibility: 1000
}
const none = recencyInputs([], new Date("2026-01-01T00:00:00Z"))
const inputs = (
  components: Partial<typeof perfect> = {},
  confidence: IndividualInputs["reputation"]["confidence"] = "high",
  recency = none
): IndividualInputs => ({ reputation: { confidence, components: { ...perfect, ...components } }, recency })

describe("risk: individual formula", () => {
  it("every row of the weight table sums to 100 hundredths", () => {
    for (const action of ACTION_TYPES)
      expect(
        Object.values(CONTEXT_WEIGHTS[action]).reduce((a, b) => a + b, 0),
        action
      ).toBe(100)
  })

  it.each([
    ["financial_transaction", { integrity_ratio: 0 }, 0.4],
    ["financial_transaction", { compliance: 500 }, 0.15],
    ["data_access", { compliance: 0 }, 0.35],
    ["task_delegation", { coherence_compatibility: 0 }, 0.25],
    ["autonomous_operation", { drift_stability: 0 }, 0.3],
    ["multi_agent_coordination", { coherence_compatibility: 600 }, 0.14],
    ["tool_invocation", {}, 0]
  ] as const)("context risk of %s with %o is %d", (action, components, expected) => {
    expect(contextRisk(action, { ...perfect, ...components })).toBeCloseTo(expected, 12)
  })

  it("one component's drop weighs differently per action type", () => {
    const low = { ...perfect, coherence_compatibility: 0 }
    expect(contextRisk("multi_agent_coordination", low)).toBeGreaterThan(contextRisk("financial_transaction", low))
  })

  it("recency halves every 30 days and weighs severities 1, .7, .4, .1", () => {
    const now = new Date("2026-03-01T00:00:00Z")
    expect(decayOf("2026-03-01T00:00:00Z", now)).toBe(1)
    expect(decayOf("2026-01-30T00:00:00Z", now)).toBeCloseTo(0.5, 12)
    expect(decayOf("2026-04-01T00:00:00Z", now)).toBe(1) // future-dated counts as today's
    const r = recencyInputs(
      [
        { severity: "critical", occurred_at: "2026-03-01T00:00:00Z" },
        { severity: "high", occurred_at: "2026-01-30T00:00:00Z" },
        { severity: "high", occurred_at: "2026-01-30T00:00:00Z" },
        { severity: "low", occurred_at: "2026-03-01T00:00:00Z" }
      ],
      now
    )
    expect(r.by_severity.critical).toEqual({ count: 1, decayed: 1 })
    expect(r.by_severity.high.count).toBe(2)
    expect(r.by_severity.high.decayed).toBeCloseTo(1, 12)
    expect(r.by_severity.medium).toEqual({ count: 0, decayed: 0 })
    // S = 1 + 0.7 + 0.1 = 1.8; S / (1 + S)
    expect(recencyRisk(r)).toBeCloseTo(1.8 / 2.8, 12)
    expect(recencyRisk(none)).toBe(0)
  })

  it.each([
    ["insufficient", 0.03],
    ["low", 0.02],
    ["medium", 0.01],
    ["high", 0]
  ] as const)("confidence %s adds %d", (confidence, expected) => {
    const result = assessRisk({ action_type: "data_access", risk_tolerance: "moderate" }, inputs({}, confidence))
    expect(result.risk_score).toBe(expected)
    expect(result.components.confidence_penalty).toBe(expected * 10)
  })

  it("combines 0.6 context + 0.3 recency + 0.1 penalty, rounded to four decimals", () => {
    const now = new Date("2026-03-01T00:00:00Z")
    const recency = recencyInputs([{ severity: "critical", occurred_at: "2026-03-01T00:00:00Z" }], now)
    const result = assessRisk(
      { action_type: "financial_transaction", risk_tolerance: "moderate" },
      inputs({ integrity_ratio: 500 }, "low", recency)
    )
    // context 0.2, recency 0.5, penalty 0.2 → 0.12 + 0.15 + 0.02
    expect(result).toEqual({
      risk_score: 0.29,
      risk_level: "medium",
      decision: "approve",
      components: { context: 0.2, recency: 0.5, confidence_penalty: 0.2 }
    })
  })

  it.each([
    ["conservative", 0.15, "low"],
    ["conservative", 0.1501, "medium"],
    ["conservative", 0.35, "medium"],
    ["conservative", 0.3501, "high"],
    ["conservative", 0.55, "high"],
    ["conservative", 0.5501, "critical"],
    ["moderate", 0.25, "low"],
    ["moderate", 0.2501, "medium"],
    ["moderate", 0.5, "medium"],
    ["moderate", 0.5001, "high"],
    ["moderate", 0.75, "high"],
    ["moderate", 0.7501, "critical"],
    ["aggressive", 0.35, "low"],
    ["aggressive", 0.3501, "medium"],
    ["aggressive", 0.6, "medium"],
    ["aggressive", 0.6001, "high"],
    ["aggressive", 0.85, "high"],
    ["aggressive", 0.8501, "critical"]
  ] as const)("%s: %d is %s", (tolerance, score, level) => {
    expect(levelOf(score, tolerance)).toBe(level)
  })

  it.each([
    // context risk 0.7 (every component 300): 0.42 + 0.01 penalty; the same agent per tolerance
    ["conservative", "high", "review"],
    ["moderate", "medium", "approve"],
    ["aggressive", "medium", "approve"]
  ] as const)("one agent under %s tolerance: %s, %s", (tolerance, level, decision) => {
    const weak = {
      integrity_ratio: 300,
      compliance: 300,
      drift_stability: 300,
      trace_completeness: 300,
      coherence_compatibility: 300
    }
    const result = assessRisk({ action_type: "tool_invocation", risk_tolerance: tolerance }, inputs(weak, "medium"))
    expect(result.risk_score).toBe(0.43)
    expect([result.risk_level, result.decision]).toEqual([level, decision])
  })

  it("the worst agent is denied under every tolerance", () => {
    const worst = {
      integrity_ratio: 0,
      compliance: 0,
      drift_stability: 0,
      trace_completeness: 0,
      coherence_compatibility: 0
    }
    const recency = recencyInputs(
      Array.from({ length: 20 }, () => ({ severity: "critical" as const, occurred_at: "2026-01-01T00:00:00Z" })),
      new Date("2026-01-01T00:00:00Z")
    )
    for (const tolerance of ["conservative", "moderate", "aggressive"] as Array<RiskTolerance>) {
      const result = assessRisk(
        { action_type: "data_access", risk_tolerance: tolerance },
        inputs(worst, "insufficient", recency)
      )
      expect(result.risk_score).toBeGreaterThan(0.9)
      expect(result.decision).toBe("deny")
    }
  })
})

describe("risk: team formula", () => {
  const member = (agent_id: string, risk_score: number, reputation_score = 800) => ({
    agent_id,
    reputation_score,
    result: {
      risk_score,
      risk_level: levelOf(risk_score, "moderate"),
      decision: risk_score > 0.75 ? ("deny" as const) : risk_score > 0.5 ? ("review" as const) : ("approve" as const),
      components: { context: 0, recency: 0, confidence_penalty: 0 }
    }
  })

  it.each([
    ["parallel", 0.195],
    ["consensus", 0.21],
    ["hierarchical", 0.225],
    ["sequential", 0.24]
  ] as const)("%s: (1 − w)·mean + w·max = %d", (mode, expected) => {
    const result = assessTeamRisk({ risk_tolerance: "moderate", coordination_mode: mode }, [
      member("a", 0.1),
      member("b", 0.1),
      member("c", 0.1),
      member("d", 0.3)
    ])
    expect(result.risk_score).toBe(expected)
    expect(result.components.mean_member_risk).toBe(0.15)
    expect(result.components.max_member_risk).toBe(0.3)
    expect(result.circuit_breakers).toEqual([])
  })

  it("a member scored below 200 denies the team", () => {
    const result = assessTeamRisk({ risk_tolerance: "aggressive", coordination_mode: "parallel" }, [
      member("a", 0.05),
      member("b", 0.05, 199)
    ])
    expect(result).toMatchObject({
      risk_level: "critical",
      decision: "deny",
      circuit_breakers: ["member_score_below_200"]
    })
  })

  it("a member denied on its own sends a low-risk team to review", () => {
    const members = [member("a", 0.0), member("b", 0.0), member("c", 0.0), member("d", 0.8)]
    const result = assessTeamRisk({ risk_tolerance: "moderate", coordination_mode: "parallel" }, members)
    expect(result.risk_score).toBe(0.38) // 0.7 × 0.2 + 0.3 × 0.8: medium by the cut-offs
    expect(result).toMatchObject({ risk_level: "high", decision: "review", circuit_breakers: ["member_denied"] })
  })
})

describe("risk: signed record", () => {
  const key = generateSigningKey()
  const context = { action_type: "data_access", risk_tolerance: "moderate" } as const
  const recordInputs = {
    reputation: {
      score: 700,
      grade: "A",
      confidence: "medium",
      components: { ...perfect, compliance: 400 },
      computed_at: "2026-01-01T00:00:00Z",
      computed_over: { tree_size: 0, root: null, checkpoint: null }
    },
    recency: none
  } as const
  const record = signRiskRecord<RiskAssessment>(
    {
      assessment_id: "ra-1",
      agent_id: "agent-1",
      context,
      inputs: recordInputs,
      result: assessRisk(context, recordInputs),
      assessed_at: "2026-01-01T00:00:00Z"
    },
    key
  )

  it("verifies under its key, recomputes, and breaks on any change", () => {
    expect(record.key_id).toBe(key.keyId)
    expect(verifyRiskSignature(record, key.publicKey)).toBe(true)
    expect(resultMatches(record)).toBe(true)
    expect(recomputeRiskResult(record)).toEqual(record.result)
    expect(verifyRiskSignature(record, generateSigningKey().publicKey)).toBe(false)
    const tampered = { ...record, result: { ...record.result, decision: "deny" as const } }
    expect(verifyRiskSignature(tampered, key.publicKey)).toBe(false)
    expect(resultMatches(tampered)).toBe(false)
    const inflated = { ...record, context: { ...context, action_type: "financial_transaction" as const } }
    expect(verifyRiskSignature(inflated, key.publicKey)).toBe(false)
    expect(resultMatches(inflated)).toBe(false)
  })
})
