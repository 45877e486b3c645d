/**
 * The tool policy: schema defaults and strictness, globs, each rule of the evaluation, the grace
 * period for new tools, floor-and-union merging, and the speed the gateway's request path needs.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import { appliedVerdict, evaluatePolicy, globMatcher, isPolicyActive, mergePolicies } from "../../core/Policy.js"
import { AlignmentCard } from "../../core/schema/Card.js"
import { decodePolicy, Policy, type PolicyEncoded } from "../../core/schema/Policy.js"

const policyOf = (encoded: PolicyEncoded): Policy => Schema.decodeUnknownSync(Policy)(encoded)

const card = Schema.decodeUnknownSync(AlignmentCard)({
  card_id: "ac-policy-1",
  agent_id: "agt-policy",
  issued_at: "2026-01-01T00:00:00Z",
  principal: { type: "human", relationship: "delegated_authority" },
  values: { declared: ["honesty"] },
  autonomy_envelope: {
    bounded_actions: ["web_fetch", "read"],
    forbidden_actions: ["delete"],
    escalation_triggers: []
  },
  audit_commitment: { retention_days: 30, queryable: false }
})

const NOW = new Date("2026-03-01T12:00:00Z")
const HOUR = 3_600_000
const never = () => undefined
const seenAgo = (ms: number) => () => new Date(NOW.getTime() - ms)
const tools = (...names: ReadonlyArray<string>) => names.map((name) => ({ name }))

const base = policyOf({
  capability_mappings: [
    { tool: "mcp__browser__*", action: "web_fetch" },
    { tool: "mcp__fs__read*", action: "read" },
    { tool: "mcp__fs__delete*", action: "delete" },
    { tool: "mcp__slack__post", action: "send_message" }
  ],
  forbidden: [{ tool: "shell_*", reason: "no shell access" }],
  escalation_triggers: [{ tool: "mcp__browser__submit*", reason: "form submissions need review" }],
  defaults: { enforcement_mode: "enforce", unmapped_tool_action: "deny" }
})

describe("Policy schema", () => {
  it("fills every default, so a decoded policy is complete", () => {
    expect(policyOf({})).toEqual({
      capability_mappings: [],
      forbidden: [],
      escalation_triggers: [],
      defaults: { enforcement_mode: "warn", unmapped_tool_action: "warn", grace_period_hours: 24 }
    })
    expect(policyOf({ defaults: { unmapped_tool_action: "deny" } }).defaults).toEqual({
      enforcement_mode: "warn",
      unmapped_tool_action: "deny",
      grace_period_hours: 24
    })
  })

  it("decodePolicy rejects unknown members (a misspelt rule is a hole) and bad values, naming them", () => {
    const typo = decodePolicy({ forbiden: [{ tool: "x", reason: "y" }] })
    expect(Either.isLeft(typo) && typo.left.message).toContain("forbiden")
    const mode = decodePolicy({ defaults: { enforcement_mode: "block" } })
    expect(Either.isLeft(mode) && mode.left.message).toContain("must be one of warn, enforce, off")
    const empty = decodePolicy({ forbidden: [{ tool: "", reason: "y" }] })
    expect(Either.isLeft(empty) && empty.left.message).toContain("tool pattern must not be empty")
    expect(Either.isLeft(decodePolicy({ defaults: { grace_period_hours: -1 } }))).toBe(true)
    expect(Either.isRight(decodePolicy({ capability_mappings: [{ tool: "a*", action: "read" }] }))).toBe(true)
  })

  it("round-trips through JSON unchanged (the agent-state KV stores it as JSON)", () => {
    expect(JSON.parse(JSON.stringify(base))).toEqual(base)
  })
})

describe("globMatcher", () => {
  const cases: ReadonlyArray<readonly [string, string, boolean]> = [
    ["read_file", "read_file", true],
    ["read_file", "read_files", false],
    ["read_file", "Read_file", false], // case-sensitive, as the providers are
    ["mcp__browser__*", "mcp__browser__navigate", true],
    ["mcp__browser__*", "mcp__browser__", true],
    ["mcp__browser__*", "mcp__brows", false],
    ["*_delete", "fs_delete", true],
    ["*_delete", "fs_delete_all", false],
    ["mcp__*__delete*", "mcp__github__delete_repo", true],
    ["mcp__*__delete*", "mcp__github__create", false],
    ["tool?", "tool1", true],
    ["tool?", "tool", false],
    ["tool?", "tool12", false],
    ["*", "", true],
    ["a.b+c", "a.b+c", true], // regex metacharacters are literal
    ["a.b+c", "aXb+c", false],
    ["**x**", "abxcd", true]
  ]
  it.each(cases)("%s against %s is %s", (pattern, name, expected) => {
    expect(globMatcher(pattern)(name)).toBe(expected)
  })

  it("does not backtrack exponentially on a pathological pattern", () => {
    const pattern = `${"*a".repeat(20)}*b`
    const name = "a".repeat(5000)
    const started = performance.now()
    expect(globMatcher(pattern)(name)).toBe(false)
    expect(performance.now() - started).toBeLessThan(1000)
  })
})

describe("evaluatePolicy", () => {
  it("passes tools mapped to actions the card bounds", () => {
    const result = evaluatePolicy(base, card, tools("mcp__browser__navigate", "mcp__fs__read_file"), never, NOW)
    expect(result).toEqual({ verdict: "pass", violations: [], warnings: [], tools_evaluated: 2 })
  })

  it("fails a tool on the forbidden list, with the rule's reason, even when it is brand new", () => {
    const result = evaluatePolicy(base, card, tools("shell_exec"), never, NOW)
    expect(result.verdict).toBe("fail")
    expect(result.violations).toEqual([{ tool: "shell_exec", kind: "forbidden", reason: "no shell access" }])
  })

  it("fails a tool mapped to an action the card forbids, even when it is brand new", () => {
    const result = evaluatePolicy(base, card, tools("mcp__fs__delete_all"), never, NOW)
    expect(result.violations).toEqual([
      {
        tool: "mcp__fs__delete_all",
        kind: "card_forbidden",
        reason: 'maps to card action "delete", which the card forbids'
      }
    ])
  })

  it("without a card, a mapped tool passes (there is nothing to check its action against)", () => {
    expect(evaluatePolicy(base, undefined, tools("mcp__fs__delete_all", "mcp__slack__post"), never, NOW).verdict).toBe(
      "pass"
    )
  })

  it("a mapped tool whose action the card does not bound follows unmapped_tool_action", () => {
    const old = seenAgo(48 * HOUR)
    const denied = evaluatePolicy(base, card, tools("mcp__slack__post"), old, NOW)
    expect(denied.violations).toEqual([
      {
        tool: "mcp__slack__post",
        kind: "unbounded",
        reason: 'maps to card action "send_message", which the card does not bound'
      }
    ])
    const warned = policyOf({ ...base, defaults: { unmapped_tool_action: "warn" } })
    expect(evaluatePolicy(warned, card, tools("mcp__slack__post"), old, NOW).verdict).toBe("warn")
  })

  it("unmapped tools: allow passes, warn warns, deny fails once the grace period is over", () => {
    const old = seenAgo(48 * HOUR)
    const withAction = (unmapped_tool_action: "allow" | "warn" | "deny") =>
      evaluatePolicy(policyOf({ defaults: { unmapped_tool_action } }), card, tools("mystery"), old, NOW)
    expect(withAction("allow")).toMatchObject({ verdict: "pass", violations: [], warnings: [] })
    expect(withAction("warn")).toMatchObject({
      verdict: "warn",
      warnings: [{ tool: "mystery", kind: "unmapped", reason: "no capability mapping covers this tool" }]
    })
    expect(withAction("deny")).toMatchObject({ verdict: "fail", violations: [{ tool: "mystery", kind: "unmapped" }] })
  })

  it("a tool first seen less than grace_period_hours ago is a warning with grace_until, not a violation", () => {
    const firstSeen = new Date(NOW.getTime() - 23 * HOUR)
    const young = evaluatePolicy(base, card, tools("mystery"), () => firstSeen, NOW)
    expect(young.verdict).toBe("warn")
    expect(young.violations).toEqual([])
    expect(young.warnings).toEqual([
      {
        tool: "mystery",
        kind: "unmapped",
        reason: "no capability mapping covers this tool",
        grace_until: new Date(firstSeen.getTime() + 24 * HOUR).toISOString()
      }
    ])
    // Never seen before: new right now, so in grace too.
    expect(evaluatePolicy(base, card, tools("mystery"), never, NOW).warnings[0]?.grace_until).toBe(
      new Date(NOW.getTime() + 24 * HOUR).toISOString()
    )
    // Exactly at the end of the grace period it counts.
    expect(evaluatePolicy(base, card, tools("mystery"), seenAgo(24 * HOUR), NOW).verdict).toBe("fail")
    // A configured grace of 6 hours, and none at all.
    const six = policyOf({ ...base, defaults: { ...base.defaults, grace_period_hours: 6 } })
    expect(evaluatePolicy(six, card, tools("mystery"), seenAgo(7 * HOUR), NOW).verdict).toBe("fail")
    expect(evaluatePolicy(six, card, tools("mystery"), seenAgo(5 * HOUR), NOW).verdict).toBe("warn")
    const none = policyOf({ ...base, defaults: { ...base.defaults, grace_period_hours: 0 } })
    expect(evaluatePolicy(none, card, tools("mystery"), never, NOW).verdict).toBe("fail")
  })

  it("an escalation trigger is a warning beside the tool's other findings", () => {
    const result = evaluatePolicy(base, card, tools("mcp__browser__submit_form"), never, NOW)
    expect(result).toMatchObject({
      verdict: "warn",
      violations: [],
      warnings: [{ tool: "mcp__browser__submit_form", kind: "escalation", reason: "form submissions need review" }]
    })
  })

  it("a forbidden tool is reported once, as forbidden, whatever it also maps to", () => {
    const both = policyOf({ ...base, capability_mappings: [{ tool: "shell_*", action: "read" }] })
    expect(evaluatePolicy(both, card, tools("shell_exec"), never, NOW).violations).toEqual([
      { tool: "shell_exec", kind: "forbidden", reason: "no shell access" }
    ])
  })

  it("evaluates each distinct name once, in the order given, deterministically", () => {
    const old = seenAgo(48 * HOUR)
    const input = tools("zeta", "shell_a", "zeta", "mcp__fs__delete_x", "alpha", "shell_a")
    const first = evaluatePolicy(base, card, input, old, NOW)
    expect(first.tools_evaluated).toBe(4)
    expect(first.violations.map((v) => v.tool)).toEqual(["zeta", "shell_a", "mcp__fs__delete_x", "alpha"])
    expect(evaluatePolicy(base, card, input, old, NOW)).toEqual(first)
  })

  it("no tools is a pass", () => {
    expect(evaluatePolicy(base, card, [], never, NOW)).toEqual({
      verdict: "pass",
      violations: [],
      warnings: [],
      tools_evaluated: 0
    })
  })

  it("takes well under 5 ms for 100 rules and 50 tools (the gateway's budget)", () => {
    const big = policyOf({
      capability_mappings: Array.from({ length: 60 }, (_, i) => ({
        tool: i % 2 === 0 ? `mcp__svc${i}__*` : `tool_${i}`,
        action: i % 3 === 0 ? "read" : "web_fetch"
      })),
      forbidden: Array.from({ length: 30 }, (_, i) => ({ tool: `*danger${i}*`, reason: `rule ${i}` })),
      escalation_triggers: Array.from({ length: 10 }, (_, i) => ({ tool: `mcp__svc${i}__pay?`, reason: "money" })),
      defaults: { unmapped_tool_action: "deny" }
    })
    const requested = Array.from({ length: 50 }, (_, i) => ({
      name: i % 5 === 0 ? `x_danger${i % 30}_y` : `mcp__svc${i}__action_${i}`
    }))
    evaluatePolicy(big, card, requested, never, NOW) // compiles and warms up
    const runs = 200
    const started = performance.now()
    for (let i = 0; i < runs; i++) evaluatePolicy(big, card, requested, never, NOW)
    expect((performance.now() - started) / runs).toBeLessThan(5)
  })
})

describe("appliedVerdict and isPolicyActive", () => {
  it("enforce keeps fail; warn lets a fail through as warn; pass and warn are unchanged", () => {
    expect(appliedVerdict("fail", "enforce")).toBe("fail")
    expect(appliedVerdict("fail", "warn")).toBe("warn")
    expect(appliedVerdict("warn", "enforce")).toBe("warn")
    expect(appliedVerdict("pass", "warn")).toBe("pass")
  })

  it("a policy is active when set and not off", () => {
    expect(isPolicyActive(undefined)).toBe(false)
    expect(isPolicyActive(policyOf({ defaults: { enforcement_mode: "off" } }))).toBe(false)
    expect(isPolicyActive(policyOf({}))).toBe(true)
  })
})

describe("mergePolicies", () => {
  const org = policyOf({
    capability_mappings: [{ tool: "mcp__browser__*", action: "web_fetch" }],
    forbidden: [{ tool: "shell_*", reason: "org: no shell" }],
    defaults: { enforcement_mode: "enforce", unmapped_tool_action: "warn", grace_period_hours: 12 }
  })
  const agent = policyOf({
    capability_mappings: [
      { tool: "mcp__browser__*", action: "web_fetch" },
      { tool: "mcp__fs__read*", action: "read" }
    ],
    forbidden: [
      { tool: "shell_*", reason: "agent: no shell" },
      { tool: "mcp__fs__delete*", reason: "agent: no deletes" }
    ],
    escalation_triggers: [{ tool: "pay_*", reason: "money" }],
    defaults: { enforcement_mode: "warn", unmapped_tool_action: "deny", grace_period_hours: 48 }
  })

  it("unions the rules (organization first, duplicates once) and floors each default at the stricter", () => {
    expect(mergePolicies(org, agent)).toEqual({
      capability_mappings: [
        { tool: "mcp__browser__*", action: "web_fetch" },
        { tool: "mcp__fs__read*", action: "read" }
      ],
      forbidden: [
        { tool: "shell_*", reason: "org: no shell" },
        { tool: "mcp__fs__delete*", reason: "agent: no deletes" }
      ],
      escalation_triggers: [{ tool: "pay_*", reason: "money" }],
      defaults: { enforcement_mode: "enforce", unmapped_tool_action: "deny", grace_period_hours: 12 }
    })
  })

  it("an agent can tighten the organization's defaults but never loosen them", () => {
    const loose = policyOf({
      defaults: { enforcement_mode: "off", unmapped_tool_action: "allow", grace_period_hours: 100 }
    })
    const strict = policyOf({
      defaults: { enforcement_mode: "enforce", unmapped_tool_action: "deny", grace_period_hours: 1 }
    })
    expect(mergePolicies(loose, strict).defaults).toEqual(strict.defaults)
    expect(mergePolicies(strict, loose).defaults).toEqual(strict.defaults)
    expect(mergePolicies(policyOf({}), policyOf({})).defaults).toEqual(policyOf({}).defaults)
  })

  it("the merged policy evaluates with both sets of rules", () => {
    const merged = mergePolicies(org, agent)
    const result = evaluatePolicy(
      merged,
      undefined,
      tools("shell_x", "mcp__fs__delete_y", "mcp__fs__read_z"),
      never,
      NOW
    )
    expect(result.violations.map((v) => [v.tool, v.reason])).toEqual([
      ["shell_x", "org: no shell"],
      ["mcp__fs__delete_y", "agent: no deletes"]
    ])
  })
})
