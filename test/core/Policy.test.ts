/**
 * The tool policy (CLPI DSL 1.0): schema defaults and strictness, globs, each rule of the
 * evaluation and its severities, the grace period for new tools (never for what the policy names),
 * floor-and-union merging, and the speed the gateway's request path needs.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import fc from "fast-check"
import {
  appliedVerdict,
  DEFAULT_POLICY_MAX_RULES,
  evaluatePolicy,
  globMatcher,
  isPolicyActive,
  MAX_LISTED_FINDINGS,
  mergePolicies,
  policyEvaluator,
  policyOverLimits,
  policyRuleCount,
  resolvePolicy
} from "../../core/Policy.js"
import { policyHash } from "../../core/Commitments.js"
import { AlignmentCard } from "../../core/schema/Card.js"
import { decodePolicy, Policy, type PolicyEncoded, triggerGlob } from "../../core/schema/Policy.js"
import { fuzzParameters } from "../support/Fuzz.js"

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
const old = seenAgo(48 * HOUR)
const tools = (...names: ReadonlyArray<string>) => names.map((name) => ({ name }))

const base = policyOf({
  meta: { schema_version: "1.0", name: "base", scope: "agent" },
  capability_mappings: {
    browsing: { tools: ["mcp__browser__*"], card_actions: ["web_fetch"] },
    reading: { tools: ["mcp__fs__read*", "cat"], card_actions: ["read"] },
    deleting: { tools: ["mcp__fs__delete*"], card_actions: ["delete"] },
    messaging: { tools: ["mcp__slack__post"], card_actions: ["send_message"] }
  },
  forbidden: [{ pattern: "shell_*", reason: "no shell access" }],
  escalation_triggers: [
    { condition: "tool_matches('mcp__browser__submit*')", action: "escalate", reason: "form submissions need review" }
  ],
  defaults: { enforcement_mode: "enforce", unmapped_tool_action: "deny", unmapped_severity: "high" }
})

describe("Policy schema", () => {
  it("fills every default, so a decoded policy is complete", () => {
    expect(policyOf({})).toEqual({
      meta: { schema_version: "1.0" },
      capability_mappings: {},
      forbidden: [],
      escalation_triggers: [],
      defaults: {
        unmapped_tool_action: "warn",
        unmapped_severity: "medium",
        fail_open: true,
        enforcement_mode: "warn",
        grace_period_hours: 24
      }
    })
    expect(policyOf({ forbidden: [{ pattern: "x", reason: "y" }] }).forbidden).toEqual([
      { pattern: "x", reason: "y", severity: "high" }
    ])
    expect(policyOf({ defaults: { unmapped_tool_action: "deny" } }).defaults).toMatchObject({
      unmapped_tool_action: "deny",
      enforcement_mode: "warn",
      grace_period_hours: 24
    })
  })

  const message = (input: unknown): string => {
    const result = decodePolicy(input)
    return Either.isLeft(result) ? result.left.message : "decoded"
  }

  it("decodePolicy rejects unknown members (a misspelt rule is a hole) and bad values, naming them", () => {
    expect(message({ forbiden: [{ pattern: "x", reason: "y" }] })).toContain("forbiden")
    expect(message({ forbidden: [{ pattern: "x", reason: "y", tool: "z" }] })).toContain('"tool"')
    expect(message({ defaults: { enforcement_mode: "block" } })).toContain("must be one of warn, enforce, off")
    expect(message({ forbidden: [{ pattern: "", reason: "y" }] })).toContain("tool pattern must not be empty")
    expect(message({ forbidden: [{ pattern: "x" }] })).toContain("reason")
    expect(message({ forbidden: [{ pattern: "x", reason: "y", severity: "severe" }] })).toContain(
      "must be one of low, medium, high, critical"
    )
    expect(message({ defaults: { grace_period_hours: -1 } })).toContain("between 0 and 8760")
    expect(message({ defaults: { grace_period_hours: 8761 } })).toContain("between 0 and 8760")
    expect(message({ capability_mappings: { x: { tools: [], card_actions: ["read"] } } })).toContain(
      "at least one tool pattern"
    )
    expect(message({ capability_mappings: [{ tools: ["a"], card_actions: [] }] })).not.toBe("decoded")
    expect(message({ capability_mappings: { r: { tools: ["a*"], card_actions: ["read"] } } })).toBe("decoded")
  })

  it("accepts only schema_version 1.0", () => {
    expect(message({ meta: { schema_version: "1.0", scope: "org" } })).toBe("decoded")
    expect(message({ meta: { schema_version: "2.0" } })).toContain('must be "1.0"')
    expect(message({ meta: { schema_version: 1 } })).toContain('must be "1.0"')
    expect(message({ meta: { name: "no version" } })).toContain("schema_version")
    expect(message({ meta: { schema_version: "1.0", scope: "global" } })).toContain("must be one of org, agent")
  })

  it("escalation conditions must be tool_matches('<glob>'), single or double quotes", () => {
    expect(triggerGlob("tool_matches('pay_*')")).toBe("pay_*")
    expect(triggerGlob(' tool_matches( "pay_?" ) ')).toBe("pay_?")
    expect(triggerGlob("tool_matches('')")).toBeUndefined()
    expect(triggerGlob("tool_matches(pay_*)")).toBeUndefined()
    expect(triggerGlob("tool_matches('a') || true")).toBeUndefined()
    expect(triggerGlob("tool_matches('a\")")).toBeUndefined()
    const trigger = (condition: string) => ({ escalation_triggers: [{ condition, action: "warn", reason: "r" }] })
    expect(message(trigger("tool_matches('x')"))).toBe("decoded")
    expect(message(trigger("tool_name == 'x'"))).toContain("must be tool_matches('<glob>')")
    expect(
      message({ escalation_triggers: [{ condition: "tool_matches('x')", action: "pause", reason: "r" }] })
    ).toContain("must be one of escalate, warn, deny")
  })

  it("round-trips through JSON unchanged (the agent-state KV stores it as JSON), and its hash is stable", () => {
    expect(JSON.parse(JSON.stringify(base))).toEqual(base)
    expect(policyOf(JSON.parse(JSON.stringify(base)))).toEqual(base)
    expect(policyHash(policyOf(JSON.parse(JSON.stringify(base))))).toBe(policyHash(base))
    expect(policyHash(base)).toMatch(/^[0-9a-f]{64}$/)
    expect(policyHash(policyOf({}))).not.toBe(policyHash(base))
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
    ["?ash", "bash", true],
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
  it("passes tools mapped to actions the card bounds (any of a mapping's globs)", () => {
    const result = evaluatePolicy(base, card, tools("mcp__browser__navigate", "mcp__fs__read_file", "cat"), never, NOW)
    expect(result).toEqual({ verdict: "pass", violations: [], warnings: [], tools_evaluated: 3 })
  })

  it("fails a tool on the forbidden list, with the rule's reason and severity, even when it is brand new", () => {
    const result = evaluatePolicy(base, card, tools("shell_exec"), never, NOW)
    expect(result.verdict).toBe("fail")
    expect(result.violations).toEqual([
      { type: "forbidden", tool: "shell_exec", reason: "no shell access", severity: "high" }
    ])
  })

  it("reports every forbidden rule that matches, not only the first, and `?` matches one character", () => {
    const policy = policyOf({
      forbidden: [
        { pattern: "?ash", reason: "no shells", severity: "critical" },
        { pattern: "bash", reason: "bash in particular", severity: "low" },
        { pattern: "b*", reason: "nothing starting with b", severity: "medium" },
        { pattern: "z?", reason: "not matching", severity: "high" }
      ],
      defaults: { unmapped_tool_action: "allow" }
    })
    const result = evaluatePolicy(policy, undefined, tools("bash", "zsh", "ash"), old, NOW)
    expect(result.violations).toEqual([
      { type: "forbidden", tool: "bash", reason: "no shells", severity: "critical" },
      { type: "forbidden", tool: "bash", reason: "bash in particular", severity: "low" },
      { type: "forbidden", tool: "bash", reason: "nothing starting with b", severity: "medium" }
    ])
    expect(result.verdict).toBe("fail")
  })

  it("low and medium violations warn; high and critical fail", () => {
    const withSeverity = (severity: "low" | "medium" | "high" | "critical") =>
      evaluatePolicy(
        policyOf({ forbidden: [{ pattern: "x", reason: "r", severity }], defaults: { unmapped_tool_action: "allow" } }),
        undefined,
        tools("x"),
        old,
        NOW
      ).verdict
    expect([withSeverity("low"), withSeverity("medium"), withSeverity("high"), withSeverity("critical")]).toEqual([
      "warn",
      "warn",
      "fail",
      "fail"
    ])
  })

  it("fails a tool mapped to an action the card forbids, even when it is brand new", () => {
    const result = evaluatePolicy(base, card, tools("mcp__fs__delete_all"), never, NOW)
    expect(result.violations).toEqual([
      {
        type: "card_forbidden",
        tool: "mcp__fs__delete_all",
        reason: 'maps to card action "delete", which the card forbids',
        severity: "high"
      }
    ])
  })

  it("a mapped tool whose actions the card does not all bound exceeds its capability (high, no grace)", () => {
    const result = evaluatePolicy(base, card, tools("mcp__slack__post"), never, NOW)
    expect(result).toMatchObject({
      verdict: "fail",
      violations: [
        {
          type: "capability_exceeded",
          tool: "mcp__slack__post",
          reason: 'maps to card action "send_message", which the card\'s bounded_actions do not include',
          severity: "high"
        }
      ],
      warnings: []
    })
    // Several mappings covering one tool: every action of every mapping counts.
    const both = policyOf({
      capability_mappings: {
        a: { tools: ["mcp__x"], card_actions: ["read"] },
        b: { tools: ["mcp__*"], card_actions: ["web_fetch", "write"] }
      }
    })
    expect(evaluatePolicy(both, card, tools("mcp__x"), never, NOW).violations).toMatchObject([
      { type: "capability_exceeded", reason: expect.stringContaining('"write"') }
    ])
  })

  it("without a card, a mapped tool passes (there is nothing to check its actions against)", () => {
    expect(evaluatePolicy(base, undefined, tools("mcp__fs__delete_all", "mcp__slack__post"), never, NOW).verdict).toBe(
      "pass"
    )
  })

  it("unmapped tools: allow passes, warn warns, deny is a violation at unmapped_severity once out of grace", () => {
    const withAction = (unmapped_tool_action: "allow" | "warn" | "deny", unmapped_severity?: "low" | "critical") =>
      evaluatePolicy(
        policyOf({ defaults: { unmapped_tool_action, ...(unmapped_severity ? { unmapped_severity } : {}) } }),
        card,
        tools("mystery"),
        old,
        NOW
      )
    expect(withAction("allow")).toMatchObject({ verdict: "pass", violations: [], warnings: [] })
    expect(withAction("warn")).toMatchObject({
      verdict: "warn",
      warnings: [
        { type: "unmapped", tool: "mystery", reason: "no capability mapping covers this tool", severity: "medium" }
      ]
    })
    // The default unmapped_severity is medium: a violation, but the verdict only warns.
    expect(withAction("deny")).toMatchObject({
      verdict: "warn",
      violations: [{ type: "unmapped_denied", tool: "mystery", severity: "medium" }]
    })
    expect(withAction("deny", "critical")).toMatchObject({
      verdict: "fail",
      violations: [{ type: "unmapped_denied", severity: "critical" }]
    })
  })

  it("a tool first seen less than grace_period_hours ago is a warning with grace_until, not a violation", () => {
    const firstSeen = new Date(NOW.getTime() - 23 * HOUR)
    const young = evaluatePolicy(base, card, tools("mystery"), () => firstSeen, NOW)
    expect(young.verdict).toBe("warn")
    expect(young.violations).toEqual([])
    expect(young.warnings).toEqual([
      {
        type: "unmapped_denied",
        tool: "mystery",
        reason: "no capability mapping covers this tool",
        severity: "high",
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

  it("grace never softens what the policy names: forbidden, card-forbidden, capability, deny triggers", () => {
    const denying = policyOf({
      ...base,
      escalation_triggers: [{ condition: "tool_matches('pay_*')", action: "deny", reason: "no payments" }],
      defaults: { ...base.defaults, grace_period_hours: 8760 }
    })
    const result = evaluatePolicy(
      denying,
      card,
      tools("shell_exec", "mcp__fs__delete_x", "mcp__slack__post", "pay_now"),
      never,
      NOW
    )
    expect(result.verdict).toBe("fail")
    expect(result.violations.map((v) => [v.type, v.tool])).toEqual([
      ["forbidden", "shell_exec"],
      ["card_forbidden", "mcp__fs__delete_x"],
      ["capability_exceeded", "mcp__slack__post"],
      ["escalation", "pay_now"]
    ])
    // pay_now is unmapped too: that part alone is in grace.
    expect(result.warnings).toMatchObject([
      { type: "unmapped_denied", tool: "pay_now", grace_until: expect.any(String) }
    ])
    expect(result.violations.every((v) => v.grace_until === undefined)).toBe(true)
  })

  it("escalation triggers: escalate and warn are warnings beside the tool's other findings, deny a high violation", () => {
    const result = evaluatePolicy(base, card, tools("mcp__browser__submit_form"), never, NOW)
    expect(result).toMatchObject({
      verdict: "warn",
      violations: [],
      warnings: [
        {
          type: "escalation",
          tool: "mcp__browser__submit_form",
          reason: "form submissions need review",
          severity: "medium"
        }
      ]
    })
    const triggers = policyOf({
      escalation_triggers: [
        { condition: "tool_matches('pay_?')", action: "warn", reason: "w" },
        { condition: 'tool_matches("pay_*")', action: "deny", reason: "d" }
      ],
      defaults: { unmapped_tool_action: "allow" }
    })
    expect(evaluatePolicy(triggers, undefined, tools("pay_x"), never, NOW)).toMatchObject({
      verdict: "fail",
      violations: [{ type: "escalation", tool: "pay_x", reason: "d", severity: "high" }],
      warnings: [{ type: "escalation", tool: "pay_x", reason: "w", severity: "medium" }]
    })
    expect(evaluatePolicy(triggers, undefined, tools("pay_xy"), never, NOW).warnings).toEqual([])
  })

  it("a forbidden tool is reported as forbidden, whatever it also maps to", () => {
    const both = policyOf({ ...base, capability_mappings: { s: { tools: ["shell_*"], card_actions: ["read"] } } })
    expect(evaluatePolicy(both, card, tools("shell_exec"), never, NOW).violations).toEqual([
      { type: "forbidden", tool: "shell_exec", reason: "no shell access", severity: "high" }
    ])
  })

  it("evaluates each distinct name once, in the order given, deterministically", () => {
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
      capability_mappings: Object.fromEntries(
        Array.from({ length: 60 }, (_, i) => [
          `m${i}`,
          { tools: [i % 2 === 0 ? `mcp__svc${i}__*` : `tool_${i}`], card_actions: [i % 3 === 0 ? "read" : "web_fetch"] }
        ])
      ),
      forbidden: Array.from({ length: 30 }, (_, i) => ({ pattern: `*danger${i}*`, reason: `rule ${i}` })),
      escalation_triggers: Array.from({ length: 10 }, (_, i) => ({
        condition: `tool_matches('mcp__svc${i}__pay?')`,
        action: "escalate" as const,
        reason: "money"
      })),
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

describe("policyEvaluator (issue 24: an evaluation is bounded and can be spread over turns)", () => {
  const letters = "abc*?_"
  const globs = fc.array(fc.constantFrom(...letters), { minLength: 1, maxLength: 6 }).map((cs) => cs.join(""))
  const names = fc.array(fc.constantFrom("a", "b", "c", "_"), { maxLength: 8 }).map((cs) => cs.join(""))
  const policies = fc
    .record({
      forbidden: fc.array(
        fc.record({
          pattern: globs,
          severity: fc.constantFrom("low", "medium", "high", "critical") as fc.Arbitrary<"low">
        }),
        { maxLength: 4 }
      ),
      mappings: fc.array(
        fc.record({
          tools: fc.array(globs, { minLength: 1, maxLength: 3 }),
          action: fc.constantFrom("read", "web_fetch", "delete", "other")
        }),
        { maxLength: 5 }
      ),
      triggers: fc.array(
        fc.record({ glob: globs, action: fc.constantFrom("escalate", "warn", "deny") as fc.Arbitrary<"deny"> }),
        { maxLength: 3 }
      ),
      unmapped: fc.constantFrom("allow", "warn", "deny") as fc.Arbitrary<"deny">
    })
    .map(({ forbidden, mappings, triggers, unmapped }) =>
      policyOf({
        capability_mappings: Object.fromEntries(
          mappings.map((m, i) => [`m${i}`, { tools: m.tools, card_actions: [m.action] }])
        ),
        forbidden: forbidden.map((f, i) => ({ ...f, reason: `forbidden ${i}` })),
        escalation_triggers: triggers.map((t, i) => ({
          condition: `tool_matches('${t.glob}')`,
          action: t.action,
          reason: `trigger ${i}`
        })),
        defaults: { unmapped_tool_action: unmapped, unmapped_severity: "high", grace_period_hours: 0 }
      })
    )

  it("gives the same evaluation whatever the budget of each run", () => {
    fc.assert(
      fc.property(
        policies,
        fc.array(names, { maxLength: 12 }),
        fc.integer({ min: 1, max: 40 }),
        (policy, requested, budget) => {
          const tools = requested.map((name) => ({ name }))
          // A fresh copy each time: the memo of one must not make the other's answer.
          const whole = evaluatePolicy(structuredClone(policy), card, tools, never, NOW)
          const evaluator = policyEvaluator(structuredClone(policy), card, tools, never, NOW)
          let result = evaluator.run(budget)
          for (let turns = 0; result === undefined; turns++) {
            expect(turns).toBeLessThan(10_000)
            result = evaluator.run(budget)
          }
          expect(result).toEqual(whole)
        }
      ),
      fuzzParameters(300)
    )
  })

  it("remembers a costly name per policy: the second request offering it costs a lookup", () => {
    const costly = policyOf({
      forbidden: Array.from({ length: 200 }, (_, i) => ({
        pattern: `*${"ab"[i % 2]}?${"ab"[(i >> 1) % 2]}*z${i}*`,
        reason: "r"
      }))
    })
    const requested = tools("abababababababababab_tool_one", "abababababababababab_tool_two")
    const first = policyEvaluator(costly, undefined, requested, never, NOW)
    first.run(Number.POSITIVE_INFINITY)
    const second = policyEvaluator(costly, undefined, requested, never, NOW)
    second.run(Number.POSITIVE_INFINITY)
    expect(first.steps()).toBeGreaterThan(200 * 2)
    // Two lookups (and the findings they bring), not 200 glob tests each.
    expect(second.steps()).toBeLessThan(64)
  })

  it("lists at most MAX_LISTED_FINDINGS per list, counts the rest, and the verdict still sees them", () => {
    const everything = policyOf({
      forbidden: [
        ...Array.from({ length: 20 }, (_, i) => ({
          pattern: `*${"?".repeat(i)}`,
          reason: `low ${i}`,
          severity: "low" as const
        })),
        { pattern: "t_0*", reason: "the one that blocks", severity: "critical" as const }
      ]
    })
    const requested = Array.from({ length: 50 }, (_, i) => ({ name: `t_${i}_`.padEnd(24, "x") }))
    const result = evaluatePolicy(everything, undefined, requested, never, NOW)
    expect(result.violations).toHaveLength(MAX_LISTED_FINDINGS)
    // Every tool matches the 20 "*???…" rules; t_0_… the blocking one too.
    const all = 50 * 20 + 1
    expect(result.findings_omitted).toBe(all - MAX_LISTED_FINDINGS)
    expect(result.verdict).toBe("fail")
    expect(evaluatePolicy(everything, undefined, tools("t_1"), never, NOW)).not.toHaveProperty("findings_omitted")
  })

  it("quotes at most 8 card actions in a finding's reason", () => {
    const many = policyOf({
      capability_mappings: {
        wide: { tools: ["wide_*"], card_actions: Array.from({ length: 20 }, (_, i) => `action_${i}`) }
      }
    })
    const [finding] = evaluatePolicy(many, card, tools("wide_x"), never, NOW).violations
    expect(finding?.reason).toBe(
      `maps to card action ${Array.from({ length: 8 }, (_, i) => `"action_${i}"`).join(", ")} and 12 more, which the card's bounded_actions do not include`
    )
  })
})

describe("policyOverLimits (issue 24: POLICY_MAX_RULES)", () => {
  it("counts forbidden rules, triggers, and mapping globs and card actions", () => {
    expect(policyRuleCount(base)).toBe(1 + 1 + (1 + 1) + (2 + 1) + (1 + 1) + (1 + 1))
    expect(policyOverLimits(base, DEFAULT_POLICY_MAX_RULES)).toBeUndefined()
  })

  it("refuses a policy over the cap, naming the cap and the count", () => {
    const big = policyOf({
      forbidden: Array.from({ length: 1001 }, (_, i) => ({ pattern: `tool_${i}`, reason: "r" }))
    })
    expect(policyOverLimits(big, DEFAULT_POLICY_MAX_RULES)).toMatch(/1001 rules .* at most 1000 .*POLICY_MAX_RULES/)
    expect(policyOverLimits(big, 2000)).toBeUndefined()
  })

  it("refuses reasons and card actions that would bloat every finding", () => {
    const longReason = policyOf({ forbidden: [{ pattern: "x", reason: "r".repeat(2001) }] })
    expect(policyOverLimits(longReason, DEFAULT_POLICY_MAX_RULES)).toMatch(/reason must be at most 2000/)
    const longAction = policyOf({ capability_mappings: { m: { tools: ["x"], card_actions: ["a".repeat(257)] } } })
    expect(policyOverLimits(longAction, DEFAULT_POLICY_MAX_RULES)).toMatch(/card action must be at most 256/)
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
    meta: { schema_version: "1.0", name: "org policy", scope: "org" },
    capability_mappings: {
      browsing: { tools: ["mcp__browser__*"], card_actions: ["web_fetch"] },
      files: { tools: ["mcp__fs__*"], card_actions: ["delete"] }
    },
    forbidden: [{ pattern: "shell_*", reason: "org: no shell" }],
    escalation_triggers: [{ condition: "tool_matches('wire_*')", action: "deny", reason: "org: no wires" }],
    defaults: {
      enforcement_mode: "enforce",
      unmapped_tool_action: "warn",
      unmapped_severity: "high",
      fail_open: true,
      grace_period_hours: 12
    }
  })
  const agent = policyOf({
    meta: { schema_version: "1.0", name: "agent policy", scope: "agent" },
    capability_mappings: {
      browsing: { tools: ["mcp__browser__*"], card_actions: ["web_fetch"] },
      files: { tools: ["mcp__fs__*"], card_actions: ["read"] },
      reading: { tools: ["mcp__docs__read*"], card_actions: ["read"] }
    },
    forbidden: [
      { pattern: "shell_*", reason: "org: no shell" },
      { pattern: "shell_*", reason: "agent: no shell", severity: "critical" },
      { pattern: "mcp__fs__delete*", reason: "agent: no deletes" }
    ],
    escalation_triggers: [{ condition: "tool_matches('pay_*')", action: "escalate", reason: "money" }],
    defaults: {
      enforcement_mode: "warn",
      unmapped_tool_action: "deny",
      unmapped_severity: "low",
      fail_open: false,
      grace_period_hours: 48
    }
  })

  it("unions the rules (organization first, identical rules once) and floors each default at the stricter", () => {
    expect(mergePolicies(org, agent)).toEqual({
      meta: { schema_version: "1.0", name: "agent policy", scope: "agent" },
      capability_mappings: {
        browsing: { tools: ["mcp__browser__*"], card_actions: ["web_fetch"] },
        files: { tools: ["mcp__fs__*"], card_actions: ["delete"] },
        "agent:files": { tools: ["mcp__fs__*"], card_actions: ["read"] },
        reading: { tools: ["mcp__docs__read*"], card_actions: ["read"] }
      },
      forbidden: [
        { pattern: "shell_*", reason: "org: no shell", severity: "high" },
        { pattern: "shell_*", reason: "agent: no shell", severity: "critical" },
        { pattern: "mcp__fs__delete*", reason: "agent: no deletes", severity: "high" }
      ],
      escalation_triggers: [
        { condition: "tool_matches('wire_*')", action: "deny", reason: "org: no wires" },
        { condition: "tool_matches('pay_*')", action: "escalate", reason: "money" }
      ],
      defaults: {
        enforcement_mode: "enforce",
        unmapped_tool_action: "deny",
        unmapped_severity: "high",
        fail_open: false,
        grace_period_hours: 12
      }
    })
  })

  it("an agent can tighten the organization's defaults but never loosen them", () => {
    const loose = policyOf({
      defaults: {
        enforcement_mode: "off",
        unmapped_tool_action: "allow",
        unmapped_severity: "low",
        fail_open: true,
        grace_period_hours: 100
      }
    })
    const strict = policyOf({
      defaults: {
        enforcement_mode: "enforce",
        unmapped_tool_action: "deny",
        unmapped_severity: "critical",
        fail_open: false,
        grace_period_hours: 1
      }
    })
    expect(mergePolicies(loose, strict).defaults).toEqual(strict.defaults)
    expect(mergePolicies(strict, loose).defaults).toEqual(strict.defaults)
    expect(mergePolicies(policyOf({}), policyOf({})).defaults).toEqual(policyOf({}).defaults)
  })

  it("an agent cannot remap the organization's mapping away from an action the card forbids", () => {
    const merged = mergePolicies(org, agent)
    expect(evaluatePolicy(merged, card, tools("mcp__fs__list"), never, NOW).violations).toMatchObject([
      { type: "card_forbidden", tool: "mcp__fs__list" }
    ])
  })

  it("the merged policy evaluates with both sets of rules, every matching forbidden rule reported", () => {
    const result = evaluatePolicy(
      mergePolicies(org, agent),
      undefined,
      tools("shell_x", "mcp__fs__delete_y", "mcp__docs__read_z", "wire_1"),
      never,
      NOW
    )
    expect(result.violations.map((v) => [v.tool, v.reason])).toEqual([
      ["shell_x", "org: no shell"],
      ["shell_x", "agent: no shell"],
      ["mcp__fs__delete_y", "agent: no deletes"],
      ["wire_1", "org: no wires"]
    ])
  })

  it("resolvePolicy: either alone as it is, both merged, neither none", () => {
    expect(resolvePolicy(undefined, undefined)).toBeUndefined()
    expect(resolvePolicy(org, undefined)).toBe(org)
    expect(resolvePolicy(undefined, agent)).toBe(agent)
    expect(resolvePolicy(org, agent)).toEqual(mergePolicies(org, agent))
  })
})
