/**
 * A scoped transaction's merged policy: the named tools only, every other tool denied (no grace),
 * never looser than the agent's own policy for any tool, the transaction's own policy only ever
 * stricter; and its status on the clock.
 */
import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { evaluatePolicy } from "../../core/Policy.js"
import {
  EMPTY_POLICY,
  LOOSEST_DEFAULTS,
  transactionPolicy,
  transactionStatus,
  withUnsetDefaultsLoosest
} from "../../core/ScopedTransaction.js"
import { AlignmentCard } from "../../core/schema/Card.js"
import { decodePolicy, Policy, type PolicyEncoded, type PolicyVerdict } from "../../core/schema/Policy.js"

const policyOf = (encoded: PolicyEncoded): Policy => Schema.decodeUnknownSync(Policy)(encoded)

const card = Schema.decodeUnknownSync(AlignmentCard)({
  card_id: "ac-txn-1",
  agent_id: "agt-txn",
  issued_at: "2026-01-01T00:00:00Z",
  principal: { type: "human", relationship: "delegated_authority" },
  values: { declared: ["honesty"] },
  autonomy_envelope: { bounded_actions: ["read", "refund"], forbidden_actions: ["delete"], escalation_triggers: [] },
  audit_commitment: { retention_days: 30, queryable: false }
})

const NOW = new Date("2026-03-01T12:00:00Z")
const never = () => undefined

/** The verdict and finding types for one tool. */
const judge = (policy: Policy, tool: string) => {
  const evaluation = evaluatePolicy(policy, card, [{ name: tool }], never, NOW)
  return {
    verdict: evaluation.verdict,
    findings: [...evaluation.violations, ...evaluation.warnings].map((f) => `${f.type}:${f.severity}`)
  }
}

const RANK: Readonly<Record<PolicyVerdict, number>> = { pass: 0, warn: 1, fail: 2 }

const AGENT: PolicyEncoded = {
  meta: { schema_version: "1.0", name: "support" },
  capability_mappings: {
    reading: { tools: ["db_*"], card_actions: ["read"] },
    wiping: { tools: ["wipe_*"], card_actions: ["delete"] }
  },
  forbidden: [{ pattern: "shell_*", reason: "no shells" }],
  escalation_triggers: [{ condition: "tool_matches('pay_*')", action: "escalate", reason: "money" }],
  defaults: { enforcement_mode: "enforce", unmapped_tool_action: "warn" }
}

describe("transactionPolicy", () => {
  const TOOLS = ["db_read", "issue_refund", "shell_exec", "wipe_all", "pay_out"]

  it.each<[string, PolicyEncoded | undefined, PolicyEncoded | undefined, string, PolicyVerdict, ReadonlyArray<string>]>(
    [
      // [case, agent policy, transaction policy, tool, verdict, findings]
      ["named, mapped, bounded action", AGENT, undefined, "db_read", "pass", []],
      ["named, unmapped under warn: still a warning", AGENT, undefined, "issue_refund", "warn", ["escalation:medium"]],
      ["named but forbidden: still forbidden", AGENT, undefined, "shell_exec", "fail", ["forbidden:high"]],
      ["named, maps to an action the card forbids", AGENT, undefined, "wipe_all", "fail", ["card_forbidden:high"]],
      [
        "named, unmapped, with an escalation trigger: both warnings",
        AGENT,
        undefined,
        "pay_out",
        "warn",
        ["escalation:medium", "escalation:medium"]
      ],
      ["not named, though mapped", AGENT, undefined, "db_write", "fail", ["unmapped_denied:high"]],
      ["not named, unmapped: denied without grace", AGENT, undefined, "send_mail", "fail", ["unmapped_denied:high"]],
      ["no agent policy: a named tool passes", undefined, undefined, "issue_refund", "pass", []],
      ["no agent policy: another tool fails", undefined, undefined, "send_mail", "fail", ["unmapped_denied:high"]],
      [
        "the transaction's policy forbids a named tool",
        AGENT,
        { forbidden: [{ pattern: "db_read", reason: "not today", severity: "critical" }] },
        "db_read",
        "fail",
        ["forbidden:critical"]
      ],
      [
        "the transaction's policy maps a tool it does not name: still denied",
        AGENT,
        { capability_mappings: { sneaky: { tools: ["send_*"], card_actions: [] } } },
        "send_mail",
        "fail",
        ["unmapped_denied:high"]
      ],
      [
        "the transaction's policy adds a card action to a named tool",
        AGENT,
        { capability_mappings: { reading: { tools: ["db_read"], card_actions: ["delete"] } } },
        "db_read",
        "fail",
        ["card_forbidden:high"]
      ],
      [
        "unmapped deny in the agent's policy: a named unmapped tool stays denied",
        { defaults: { unmapped_tool_action: "deny", unmapped_severity: "critical", grace_period_hours: 48 } },
        { capability_mappings: { map_it: { tools: ["issue_refund"], card_actions: ["refund"] } } },
        "issue_refund",
        "fail",
        ["unmapped_denied:critical"]
      ],
      [
        "the transaction's unmapped allow does not loosen the agent's warn",
        AGENT,
        { defaults: { unmapped_tool_action: "allow" } },
        "issue_refund",
        "warn",
        ["escalation:medium"]
      ]
    ]
  )("%s", (_name, agent, extra, tool, verdict, findings) => {
    const merged = transactionPolicy(
      agent === undefined ? undefined : policyOf(agent),
      TOOLS,
      extra === undefined ? undefined : policyOf(extra)
    )
    expect(judge(merged, tool)).toEqual({ verdict, findings })
  })

  it("is a valid policy document, grace 0, unmapped deny at high or above, only named tools mapped", () => {
    const merged = transactionPolicy(policyOf(AGENT), ["db_read", "issue_refund"], undefined)
    expect(decodePolicy(merged)._tag).toBe("Right")
    expect(merged.defaults).toEqual({
      unmapped_tool_action: "deny",
      unmapped_severity: "high",
      fail_open: true,
      enforcement_mode: "enforce",
      grace_period_hours: 0
    })
    expect(merged.capability_mappings).toEqual({
      reading: { tools: ["db_read"], card_actions: ["read"] },
      transaction: {
        tools: ["issue_refund"],
        card_actions: [],
        description: expect.any(String)
      }
    })
    expect(merged.meta).toEqual({ schema_version: "1.0", name: "support", scope: "agent" })
  })

  it.each<[PolicyEncoded | undefined, PolicyEncoded | undefined, string]>([
    [undefined, undefined, "enforce"],
    [{ defaults: { enforcement_mode: "off" } }, undefined, "enforce"],
    [{ defaults: { enforcement_mode: "off" } }, { defaults: { enforcement_mode: "off" } }, "warn"],
    [undefined, { defaults: { enforcement_mode: "warn" } }, "warn"],
    [{ defaults: { enforcement_mode: "off" } }, { defaults: { enforcement_mode: "enforce" } }, "enforce"],
    [{ defaults: { enforcement_mode: "enforce" } }, { defaults: { enforcement_mode: "off" } }, "enforce"],
    [{ defaults: { enforcement_mode: "warn" } }, { defaults: { enforcement_mode: "warn" } }, "warn"]
  ])(
    "mode: agent %j, transaction %j → %s (the stricter; enforce unless the transaction names a mode; at least warn)",
    (agent, extra, mode) => {
      const merged = transactionPolicy(
        agent === undefined ? undefined : policyOf(agent),
        ["a"],
        extra === undefined ? undefined : policyOf(extra)
      )
      expect(merged.defaults.enforcement_mode).toBe(mode)
    }
  )

  it("fail_open only when both allow it; a critical unmapped severity stays critical", () => {
    const agent = policyOf({ defaults: { unmapped_severity: "critical" } })
    expect(transactionPolicy(agent, ["a"], undefined).defaults).toMatchObject({
      fail_open: true,
      unmapped_severity: "critical"
    })
    expect(transactionPolicy(agent, ["a"], policyOf({ defaults: { fail_open: false } })).defaults.fail_open).toBe(false)
  })

  it("never looser than the agent's policy, for any tool, named or not", () => {
    const agents: ReadonlyArray<Policy | undefined> = [
      undefined,
      policyOf(AGENT),
      policyOf({ defaults: { unmapped_tool_action: "allow" } }),
      policyOf({ defaults: { unmapped_tool_action: "deny", grace_period_hours: 0 } })
    ]
    const extras: ReadonlyArray<Policy | undefined> = [
      undefined,
      policyOf({
        defaults: { unmapped_tool_action: "allow" },
        capability_mappings: { x: { tools: ["*"], card_actions: [] } }
      })
    ]
    const universe = ["db_read", "db_write", "issue_refund", "shell_exec", "wipe_all", "pay_out", "send_mail"]
    for (const agent of agents)
      for (const extra of extras)
        for (const tool of universe) {
          const merged = transactionPolicy(agent, TOOLS, extra)
          const before = agent === undefined ? "pass" : judge(agent, tool).verdict
          const after = judge(merged, tool).verdict
          expect(RANK[after], `${tool} under ${JSON.stringify(agent?.defaults)}`).toBeGreaterThanOrEqual(RANK[before])
          if (!TOOLS.includes(tool)) expect(after).toBe("fail")
        }
  })

  it("a transaction policy's unset defaults are at their loosest: only what it sets tightens", () => {
    const document = { defaults: { enforcement_mode: "enforce" } } as const
    const extra = withUnsetDefaultsLoosest(policyOf(document), document)
    expect(extra.defaults).toEqual({ ...LOOSEST_DEFAULTS, enforcement_mode: "enforce" })
    const merged = transactionPolicy(policyOf({ defaults: { unmapped_tool_action: "allow" } }), ["a"], extra)
    expect(judge(merged, "a")).toEqual({ verdict: "pass", findings: [] })
    expect(merged.defaults.enforcement_mode).toBe("enforce")
    // The schema's defaults, had they been kept, would have made every named tool warn.
    expect(judge(transactionPolicy(undefined, ["a"], policyOf(document)), "a").verdict).toBe("warn")
    // …except the mode: a transaction whose policy names none is enforced.
    expect(withUnsetDefaultsLoosest(policyOf({}), undefined).defaults).toEqual({
      ...LOOSEST_DEFAULTS,
      enforcement_mode: "enforce"
    })
  })

  it("duplicates count once; the empty policy is the schema's defaults", () => {
    const merged = transactionPolicy(undefined, ["a", "a", "b"], undefined)
    expect(merged.capability_mappings.transaction?.tools).toEqual(["a", "b"])
    expect(EMPTY_POLICY.defaults.enforcement_mode).toBe("warn")
  })
})

describe("transactionStatus", () => {
  const expires_at = "2026-03-01T13:00:00.000Z"
  it.each<[string | null, string, string]>([
    [null, "2026-03-01T12:59:59.999Z", "active"],
    [null, "2026-03-01T13:00:00.000Z", "expired"],
    [null, "2026-03-02T00:00:00.000Z", "expired"],
    ["2026-03-01T12:30:00.000Z", "2026-03-01T12:31:00.000Z", "completed"],
    ["2026-03-01T12:30:00.000Z", "2026-03-02T00:00:00.000Z", "completed"]
  ])("ended_at %s at %s → %s", (ended_at, now, status) => {
    expect(transactionStatus({ expires_at, ended_at }, Date.parse(now))).toBe(status)
  })
})
