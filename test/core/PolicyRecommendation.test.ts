/** The recommended policy: what each rule comes from, what it leaves out, that it decodes, determinism. */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import { recommendPolicy, type RecommendationInput } from "../../core/PolicyRecommendation.js"
import { evaluatePolicy } from "../../core/Policy.js"
import { decodePolicy } from "../../core/schema/Policy.js"

const INPUT: RecommendationInput = {
  team_id: "team-1",
  team_name: "Ops",
  members: [
    { agent_id: "b", envelope: { forbidden_actions: ["rm_*", "send_email"], escalation_triggers: [] } },
    {
      agent_id: "a",
      envelope: {
        forbidden_actions: ["rm_*"],
        escalation_triggers: [{ condition: 'tool_matches("pay_*")', action: "log", reason: "audit payments" }]
      }
    }
  ],
  team_envelope: { forbidden_actions: ["x".repeat(300)], escalation_triggers: [] },
  tools_seen: new Map([
    ["search", ["b", "a"]],
    ["send_email", ["a"]]
  ])
}

describe("recommendPolicy", () => {
  it("allows the observed tools, forbids the cards' forbidden actions, keeps tool triggers, warns by default", () => {
    const { policy, reasoning } = recommendPolicy(INPUT)
    expect(policy.capability_mappings).toEqual({
      observed_tools: { tools: ["search"], card_actions: [], description: "Tools the team's members were seen to use" }
    })
    expect(policy.forbidden).toEqual([
      { pattern: "rm_*", reason: "forbidden by agent a's card, agent b's card", severity: "high" },
      { pattern: "send_email", reason: "forbidden by agent b's card", severity: "high" }
    ])
    expect(policy.escalation_triggers).toEqual([
      { condition: 'tool_matches("pay_*")', action: "warn", reason: "audit payments" }
    ])
    expect(policy.defaults).toMatchObject({ unmapped_tool_action: "warn", enforcement_mode: "warn" })
    expect(reasoning).toContainEqual({
      rule: "capability_mappings.observed_tools",
      source: "search: seen in the traces of a, b"
    })
    expect(reasoning).toContainEqual({
      rule: "capability_mappings.observed_tools",
      source: "send_email left out: seen (a) but forbidden by a card"
    })
    expect(reasoning).toContainEqual({
      rule: "forbidden",
      source: `${"x".repeat(300)} left out (from the team card): longer than a tool pattern may be (256)`
    })
  })

  it("decodes with the policy schema, and evaluates as it says", () => {
    const { policy } = recommendPolicy(INPUT)
    expect(Either.isRight(decodePolicy(policy))).toBe(true)
    const evaluation = evaluatePolicy(
      policy,
      undefined,
      [{ name: "search" }, { name: "rm_all" }, { name: "unknown_tool" }],
      () => undefined,
      new Date(0)
    )
    expect(evaluation.violations.map((v) => [v.tool, v.type])).toEqual([["rm_all", "forbidden"]])
    expect(evaluation.warnings.map((v) => [v.tool, v.type])).toEqual([["unknown_tool", "unmapped"]])
  })

  it("is deterministic whatever order members and tools come in", () => {
    const reordered: RecommendationInput = {
      ...INPUT,
      members: [...INPUT.members].reverse(),
      tools_seen: new Map([...INPUT.tools_seen.entries()].reverse())
    }
    expect(recommendPolicy(reordered)).toEqual(recommendPolicy(INPUT))
  })
})
