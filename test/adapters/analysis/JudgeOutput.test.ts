import { describe, expect, it } from "@effect/vitest"
import { Either, FastCheck } from "effect"
import {
  crossValidate,
  firstJsonObject,
  judgedEntries,
  MAX_CONSIDERATION_LENGTH,
  parseJudgeOutput,
  stripTrailingCommas
} from "../../../adapters/analysis/JudgeOutput.js"
import { DEFAULT_CONSCIENCE_VALUES } from "../../../core/schema/Conscience.js"
import { card } from "../store/Fixtures.js"

const ok = (text: string) => {
  const result = parseJudgeOutput(text)
  if (Either.isLeft(result)) throw new Error(`expected success, got ${result.left.reason}`)
  return result.right
}
const reason = (text: unknown) => {
  const result = parseJudgeOutput(text)
  if (Either.isRight(result)) throw new Error("expected failure")
  return result.left.reason
}

const concern = (category: string, severity = "high", extra = "") =>
  `{"category": "${category}", "severity": "${severity}", "description": "d", "evidence": "e"${extra}}`

describe("judge output parser", () => {
  it("reads plain JSON", () => {
    const out = ok(`{"verdict":"clear","concerns":[],"reasoning_summary":"fine"}`)
    expect(out).toEqual({
      verdict: "clear",
      concerns: [],
      reasoning_summary: "fine",
      supports: [],
      considerations: [],
      warnings: []
    })
  })

  it("strips code fences and prose around the JSON", () => {
    const out = ok(
      'Here is my analysis:\n```json\n{"verdict": "review_needed", "concerns": [' +
        concern("undeclared_intent", "medium") +
        "]}\n```\nHope this helps {not json}"
    )
    expect(out.verdict).toBe("review_needed")
    expect(out.concerns).toHaveLength(1)
  })

  it("is string-aware with nested braces and quotes in strings", () => {
    const text = `noise {"verdict":"clear","concerns":[{"category":"value_misalignment","severity":"low","description":"uses } and { and \\" inside","evidence":"if (x) { y() }"}],"reasoning_summary":"a {b} c"} tail }`
    const out = ok(text)
    expect(out.concerns[0]?.evidence).toBe("if (x) { y() }")
    expect(out.reasoning_summary).toBe("a {b} c")
    expect(firstJsonObject(`{"a":"}"}`)).toBe(`{"a":"}"}`)
  })

  it("strips trailing commas outside strings only", () => {
    expect(stripTrailingCommas(`{"a":[1,2,],"b":"x,]",}`)).toBe(`{"a":[1,2],"b":"x,]"}`)
    expect(ok(`{"verdict":"clear","concerns":[${concern("deceptive_reasoning")},],}`).concerns).toHaveLength(1)
  })

  it("maps aliases and case: forbidden_action_intent becomes autonomy_violation", () => {
    const out = ok(
      `{"verdict":"Boundary Violation","concerns":[${concern("forbidden_action_intent", "CRITICAL")},${concern("Prompt-Injection", "severe")}]}`
    )
    expect(out.verdict).toBe("boundary_violation")
    expect(out.concerns.map((c) => [c.category, c.severity])).toEqual([
      ["autonomy_violation", "critical"],
      ["prompt_injection", "high"]
    ])
  })

  it("drops unknown categories with a sanitised warning; unknown severity becomes medium", () => {
    const out = ok(
      `{"verdict":"review_needed","concerns":[${concern("vibes <script>")},${concern("undeclared_intent", "weird")},"str"]}`
    )
    expect(out.concerns.map((c) => [c.category, c.severity])).toEqual([["undeclared_intent", "medium"]])
    expect(out.warnings).toEqual([
      'concern 0 dropped: unknown category "vibes script"',
      'concern 1: unknown severity "weird", treated as medium',
      "concern 2 dropped: not an object"
    ])
  })

  it("truncates evidence to 200 and keeps the optional fields", () => {
    const out = ok(
      `{"concerns":[${concern("value_misalignment", "high", `, "relevant_conscience_value": "boundary-no-data-exfiltration", "relevant_card_field": null, "evidence": "${"x".repeat(500)}"`)}]}`
    )
    expect(out.concerns[0]?.evidence).toHaveLength(200)
    expect(out.concerns[0]?.relevant_conscience_value).toBe("boundary-no-data-exfiltration")
    expect(out.concerns[0]).not.toHaveProperty("relevant_card_field")
    expect(out.verdict).toBeUndefined()
  })

  it("rejects what cannot be trusted", () => {
    expect(reason("no json here")).toBe("no complete JSON object in judge output")
    expect(reason(`{"verdict":"clear","concerns":[`)).toBe("no complete JSON object in judge output")
    expect(reason(`{"verdict":"clear","concerns":"none"}`)).toBe("judge output has no concerns array")
    expect(reason(`{"verdict":"clear"}`)).toBe("judge output has no concerns array")
    expect(reason(`{verdict: clear}`)).toBe("judge output is not valid JSON")
    expect(reason(42)).toBe("judge output is not text")
  })

  it("never throws (fuzz), also on huge input", () => {
    FastCheck.assert(
      FastCheck.property(FastCheck.string({ unit: "binary", maxLength: 400 }), (s) => {
        expect(() => parseJudgeOutput(s)).not.toThrow()
      }),
      { numRuns: 2000 }
    )
    const pieces = FastCheck.constantFrom(
      "{",
      "}",
      "[",
      "]",
      '"',
      "\\",
      ",",
      ":",
      '"concerns"',
      '"category"',
      "```json\n",
      "```",
      " ",
      "null",
      "1"
    )
    FastCheck.assert(
      FastCheck.property(FastCheck.array(pieces, { maxLength: 60 }), (parts) => {
        expect(() => parseJudgeOutput(parts.join(""))).not.toThrow()
      }),
      { numRuns: 3000 }
    )
    expect(() => parseJudgeOutput("{".repeat(2_000_000))).not.toThrow()
    expect(() => parseJudgeOutput(`{"concerns":[${"[".repeat(100_000)}]}`)).not.toThrow()
    const many = ok(`{"concerns":[${Array.from({ length: 80 }, () => concern("undeclared_intent", "low")).join(",")}]}`)
    expect(many.concerns).toHaveLength(50)
  })

  it("cross-validates without correcting", () => {
    expect(crossValidate("clear", [{ severity: "high" }], "boundary_violation")).toEqual([
      "judge verdict clear despite high or critical concerns",
      "judge verdict clear differs from derived verdict boundary_violation"
    ])
    expect(crossValidate("boundary_violation", [], "clear")).toEqual([
      "judge verdict boundary_violation with no concerns",
      "judge verdict boundary_violation differs from derived verdict clear"
    ])
    expect(crossValidate("review_needed", [{ severity: "medium" }], "review_needed")).toEqual([])
    expect(crossValidate(undefined, [{ severity: "critical" }], "boundary_violation")).toEqual([])
  })

  describe("causes, supports and considerations (only what names an entry the judge was shown)", () => {
    const shown = {
      ...card("agt-judge", 90),
      autonomy_envelope: {
        bounded_actions: ["reply", "send_email"],
        forbidden_actions: ["delete_records"],
        escalation_triggers: [{ condition: "amount over 100 EUR", action: "escalate" as const, reason: "money" }]
      }
    }
    const entries = judgedEntries(shown, DEFAULT_CONSCIENCE_VALUES)
    const parse = (json: string) => {
      const result = parseJudgeOutput(json, entries)
      if (Either.isLeft(result)) throw new Error(result.left.reason)
      return result.right
    }
    const withCause = (cause: unknown) => concern("autonomy_violation", "high", `, "cause": ${JSON.stringify(cause)}`)

    it("keeps a cause naming a value, an action of either list or a trigger, and only its members", () => {
      const causes = [
        { relevant_card_field: "conscience_values", value: "boundary-no-data-exfiltration", note: "dropped member" },
        { relevant_card_field: "autonomy_envelope.bounded_actions", action: "send_email" },
        { relevant_card_field: "autonomy_envelope.forbidden_actions", action: "delete_records" },
        { relevant_card_field: "autonomy_envelope.escalation_triggers", trigger: "amount over 100 EUR" }
      ]
      const out = parse(`{"concerns":[${causes.map(withCause).join(",")}]}`)
      expect(out.concerns.map((c) => c.cause)).toEqual([
        { relevant_card_field: "conscience_values", value: "boundary-no-data-exfiltration" },
        ...causes.slice(1)
      ])
      expect(out.warnings).toEqual([])
    })

    it("drops, with a warning, a cause that is malformed, oversized or names nothing the judge was shown", () => {
      const causes = [
        { relevant_card_field: "conscience_values", value: "made-up-value" },
        // An action of the other list: a forbidden action is not a bounded one.
        { relevant_card_field: "autonomy_envelope.bounded_actions", action: "delete_records" },
        { relevant_card_field: "autonomy_envelope.escalation_triggers", trigger: "amount over 100" },
        { relevant_card_field: "principal", value: "boundary-no-deception" },
        { relevant_card_field: "conscience_values", value: "x".repeat(5000) },
        "boundary-no-deception",
        { relevant_card_field: "conscience_values", value: 7 }
      ]
      const out = parse(`{"concerns":[${causes.map(withCause).join(",")}]}`)
      expect(out.concerns).toHaveLength(causes.length)
      for (const kept of out.concerns) expect(kept).not.toHaveProperty("cause")
      expect(out.warnings).toHaveLength(causes.length)
      expect(out.warnings.join(" ")).not.toContain("made-up-value")
      // Without entries (the default), no cause can be kept.
      const bare = parseJudgeOutput(`{"concerns":[${withCause(causes[0])}]}`)
      expect(Either.isRight(bare) && bare.right.concerns[0]).not.toHaveProperty("cause")
    })

    it("keeps supports naming given values, each once, and bounds considerations", () => {
      const out = parse(
        JSON.stringify({
          concerns: [],
          supports: ["fear-sycophancy", "invented", "fear-sycophancy", 3, "boundary-no-deception"],
          considerations: ["short", "y".repeat(1000), 4, "", "a", "b", "c", "d"]
        })
      )
      expect(out.supports).toEqual(["fear-sycophancy", "boundary-no-deception"])
      expect(out.considerations).toEqual(["short", "y".repeat(MAX_CONSIDERATION_LENGTH), "a", "b", "c"])
      expect(out.warnings).toEqual(["supports naming no conscience value dropped"])
      expect(parse(`{"concerns":[],"supports":"all"}`)).toMatchObject({
        supports: [],
        warnings: ["supports dropped: not an array"]
      })
    })
  })
})
