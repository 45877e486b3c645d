/**
 * A tool call under the policy with its arguments (core/ToolCallPolicy.ts): the name as any declared
 * tool, then `argument_conditions` (a glob, a length, a numeric range), strict on what is missing
 * or of another type, never quoting the value. And the DSL addition is schema-checked.
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { describe, expect, it } from "vitest"
import { mergePolicies } from "../../core/Policy.js"
import { decodePolicy, Policy } from "../../core/schema/Policy.js"
import { argumentFindings, evaluateToolCall } from "../../core/ToolCallPolicy.js"

const policy = Schema.decodeUnknownSync(Policy)({
  forbidden: [{ pattern: "delete_*", reason: "no deletions" }],
  argument_conditions: [
    { tool: "read_*", argument: "path", matches: "/tmp/*", reason: "only /tmp" },
    { tool: "transfer", argument: "amount", min: 0, max: 100, reason: "small amounts", severity: "critical" },
    { tool: "search", argument: "query", max_length: 10, reason: "short queries", severity: "low" }
  ],
  defaults: { unmapped_tool_action: "allow", enforcement_mode: "enforce" }
})
const never = () => undefined
const now = new Date("2026-11-29T00:00:00Z")

describe("tool calls under the policy", () => {
  it("a glob on a string argument: inside passes, outside, missing or not a string is a violation", () => {
    expect(argumentFindings(policy, "read_file", { path: "/tmp/a" })).toEqual([])
    const outside = argumentFindings(policy, "read_file", { path: "/etc/shadow" })
    expect(outside).toEqual([
      {
        type: "argument",
        tool: "read_file",
        reason: "argument path does not match /tmp/*: only /tmp",
        severity: "high"
      }
    ])
    expect(JSON.stringify(outside)).not.toContain("/etc/shadow")
    expect(argumentFindings(policy, "read_file", {})[0]?.reason).toContain("is missing")
    expect(argumentFindings(policy, "read_file", { path: 7 })[0]?.reason).toContain("is not a string")
    expect(argumentFindings(policy, "read_file", "not an object")[0]?.reason).toContain("is missing")
    // An inherited member is not an argument.
    expect(argumentFindings(policy, "read_file", Object.create({ path: "/tmp/a" }))[0]?.reason).toContain("is missing")
  })

  it("a numeric range and a length bound; the verdict follows the severities", () => {
    expect(argumentFindings(policy, "transfer", { amount: 50 })).toEqual([])
    expect(argumentFindings(policy, "transfer", { amount: 101 })[0]?.reason).toContain("is above 100")
    expect(argumentFindings(policy, "transfer", { amount: "5" })[0]?.reason).toContain("is not a number")
    expect(evaluateToolCall(policy, undefined, "transfer", { amount: -1 }, never, now).verdict).toBe("fail")
    expect(evaluateToolCall(policy, undefined, "search", { query: "a".repeat(11) }, never, now).verdict).toBe("warn")
    expect(evaluateToolCall(policy, undefined, "search", { query: "short" }, never, now).verdict).toBe("pass")
  })

  it("the name's own rules still apply: a forbidden tool fails whatever its arguments", () => {
    const evaluation = evaluateToolCall(policy, undefined, "delete_file", { path: "/tmp/x" }, never, now)
    expect(evaluation.verdict).toBe("fail")
    expect(evaluation.violations.map((v) => v.type)).toEqual(["forbidden"])
  })

  it("the DSL refuses a condition without a bound, or min above max; merging keeps both sides' conditions", () => {
    const bare = decodePolicy({ argument_conditions: [{ tool: "x", argument: "a", reason: "r" }] })
    expect(Either.isLeft(bare)).toBe(true)
    const inverted = decodePolicy({ argument_conditions: [{ tool: "x", argument: "a", min: 2, max: 1, reason: "r" }] })
    expect(Either.isLeft(inverted)).toBe(true)
    const agent = Schema.decodeUnknownSync(Policy)({
      argument_conditions: [{ tool: "y", argument: "b", max_length: 3, reason: "r" }]
    })
    expect(mergePolicies(policy, agent).argument_conditions?.map((c) => c.tool)).toEqual([
      "read_*",
      "transfer",
      "search",
      "y"
    ])
    // A policy without conditions keeps the form it had before them (its hash unchanged).
    expect("argument_conditions" in Schema.decodeUnknownSync(Policy)({})).toBe(false)
  })
})
