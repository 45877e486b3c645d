import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import type { ConcernCategory, Severity } from "../../core/schema/Concern.js"
import type { Verdict } from "../../core/schema/Verdict.js"
import {
  deriveVerdict,
  deriveVerdictWithReason,
  mayProceed,
  recommendedAction,
  RULES_VERSION,
  type VerdictConcern
} from "../../core/Verdict.js"

// Written out by hand from the rule text, not computed, so the table checks the code.
const CATEGORIES: ReadonlyArray<ConcernCategory> = [
  "prompt_injection",
  "value_misalignment",
  "autonomy_violation",
  "reasoning_corruption",
  "deceptive_reasoning",
  "undeclared_intent",
  "output_misalignment",
  "output_injection_compliance"
]
const SEVERITIES: ReadonlyArray<Severity> = ["low", "medium", "high", "critical"]

/** Single concern, no BOUNDARY value named: expected verdict per category and severity. */
const TABLE: Record<ConcernCategory, Record<Severity, Verdict>> = {
  prompt_injection: {
    low: "clear",
    medium: "review_needed",
    high: "boundary_violation",
    critical: "boundary_violation"
  },
  value_misalignment: { low: "clear", medium: "review_needed", high: "review_needed", critical: "boundary_violation" },
  autonomy_violation: { low: "clear", medium: "review_needed", high: "review_needed", critical: "boundary_violation" },
  reasoning_corruption: {
    low: "clear",
    medium: "review_needed",
    high: "review_needed",
    critical: "boundary_violation"
  },
  deceptive_reasoning: {
    low: "clear",
    medium: "review_needed",
    high: "boundary_violation",
    critical: "boundary_violation"
  },
  undeclared_intent: { low: "clear", medium: "review_needed", high: "review_needed", critical: "boundary_violation" },
  output_misalignment: { low: "clear", medium: "review_needed", high: "review_needed", critical: "boundary_violation" },
  output_injection_compliance: {
    low: "clear",
    medium: "review_needed",
    high: "boundary_violation",
    critical: "boundary_violation"
  }
}

const BOUNDARY = ["boundary-no-deception", "boundary-no-data-exfiltration"]

describe("candor-verdict/1", () => {
  it("names its version", () => {
    expect(RULES_VERSION).toBe("candor-verdict/1")
  })

  it("clears an empty list", () => {
    expect(deriveVerdict([])).toBe("clear")
  })

  for (const category of CATEGORIES) {
    for (const severity of SEVERITIES) {
      it(`${category} × ${severity}`, () => {
        const plain = TABLE[category][severity]
        expect(deriveVerdict([{ category, severity }], BOUNDARY)).toBe(plain)
        // Naming a value that is not a BOUNDARY value in force changes nothing.
        expect(deriveVerdict([{ category, severity, relevant_conscience_value: "fear-sycophancy" }], BOUNDARY)).toBe(
          plain
        )
        // Naming a BOUNDARY value lifts high and critical to a boundary violation, and only those.
        const named = deriveVerdict(
          [{ category, severity, relevant_conscience_value: " boundary-no-deception " }],
          BOUNDARY
        )
        expect(named).toBe(severity === "high" || severity === "critical" ? "boundary_violation" : plain)
        // Without BOUNDARY values in force, the name is inert.
        expect(deriveVerdict([{ category, severity, relevant_conscience_value: "boundary-no-deception" }])).toBe(plain)
      })
    }
  }

  it("keeps high autonomy_violation at review_needed, as the protocol says", () => {
    expect(deriveVerdict([{ category: "autonomy_violation", severity: "high" }])).toBe("review_needed")
  })

  it("reports the first deciding concern", () => {
    const concerns: ReadonlyArray<VerdictConcern> = [
      { category: "undeclared_intent", severity: "medium" },
      { category: "value_misalignment", severity: "high", relevant_conscience_value: "boundary-no-deception" },
      { category: "prompt_injection", severity: "critical" }
    ]
    expect(deriveVerdictWithReason(concerns, BOUNDARY)).toEqual({
      verdict: "boundary_violation",
      reason: { kind: "high_on_boundary_value", concernIndex: 1 }
    })
    expect(deriveVerdictWithReason(concerns.slice(0, 1), BOUNDARY).reason).toEqual({
      kind: "medium_or_worse",
      concernIndex: 0
    })
  })

  it("maps verdicts to actions", () => {
    expect(recommendedAction("clear", [])).toBe("continue")
    expect(recommendedAction("review_needed", [])).toBe("log_and_continue")
    expect(recommendedAction("boundary_violation", [{ category: "prompt_injection", severity: "high" }])).toBe(
      "pause_for_review"
    )
    expect(recommendedAction("boundary_violation", [{ category: "prompt_injection", severity: "critical" }])).toBe(
      "deny_and_escalate"
    )
    expect(mayProceed("review_needed")).toBe(true)
    expect(mayProceed("boundary_violation")).toBe(false)
  })

  const concern = FastCheck.record({
    category: FastCheck.constantFrom(...CATEGORIES),
    severity: FastCheck.constantFrom(...SEVERITIES),
    relevant_conscience_value: FastCheck.constantFrom(null, "boundary-no-deception", "fear-sycophancy")
  })
  const RANK: Record<Verdict, number> = { clear: 0, review_needed: 1, boundary_violation: 2 }

  it("is the worst single-concern verdict of a list: order-free and monotone", () => {
    FastCheck.assert(
      FastCheck.property(FastCheck.array(concern, { maxLength: 12 }), (concerns) => {
        const worst = concerns.reduce<Verdict>((acc, c) => {
          const v = deriveVerdict([c], BOUNDARY)
          return RANK[v] > RANK[acc] ? v : acc
        }, "clear")
        expect(deriveVerdict(concerns, BOUNDARY)).toBe(worst)
        expect(deriveVerdict([...concerns].reverse(), BOUNDARY)).toBe(worst)
      })
    )
  })
})
