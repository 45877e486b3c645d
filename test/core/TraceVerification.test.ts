import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import type { AlignmentCard } from "../../core/schema/Card.js"
import type { APTraceDraft } from "../../core/schema/Trace.js"
import { cardExpiryMs, evaluateTriggerCondition, globMatches, verifyTrace } from "../../core/TraceVerification.js"

const card: AlignmentCard = {
  aap_version: "0.5.0",
  card_id: "card-1",
  agent_id: "agent-1",
  issued_at: "2026-01-01T00:00:00Z",
  expires_at: "2026-12-31",
  principal: { type: "human", relationship: "delegated_authority" },
  values: { declared: ["principal_benefit", "honesty"] },
  autonomy_envelope: {
    bounded_actions: ["search_*", "summarize", "Send_Email"],
    escalation_triggers: [
      { condition: "amount > 100", action: "escalate", reason: "large purchase" },
      {
        condition: "action_name == \"delete_file\" and context.environment.region == 'eu'",
        action: "deny",
        reason: "EU data"
      },
      { condition: "shares_personal_data", action: "escalate", reason: "PII" },
      { condition: "send_*", action: "log", reason: "audit mail" }
    ],
    forbidden_actions: ["*_admin", "rm_rf"]
  },
  audit_commitment: { trace_format: "ap-trace-v1", retention_days: 90, queryable: false }
}

const base: APTraceDraft = {
  trace_id: "tr-1",
  agent_id: "agent-1",
  card_id: "card-1",
  timestamp: "2026-06-01T12:00:00Z",
  action: { type: "execute", name: "search_web", category: "bounded" },
  decision: { selected: "search_web", selection_reasoning: "", values_applied: ["honesty"] },
  context: { session_id: "s-1" }
}

type TracePatch = Omit<Partial<APTraceDraft>, "action" | "decision"> & {
  readonly action?: Partial<APTraceDraft["action"]>
  readonly decision?: Partial<APTraceDraft["decision"]>
}

const trace = (patch: TracePatch): APTraceDraft => ({
  ...base,
  ...patch,
  action: { ...base.action, ...patch.action },
  decision: { ...base.decision, ...patch.decision }
})

const types = (t: APTraceDraft, c: AlignmentCard = card) => verifyTrace(t, c).violations.map((v) => v.type)

describe("glob matching", () => {
  it("matches exactly or with *, case-insensitively", () => {
    const table: ReadonlyArray<readonly [string, string, boolean]> = [
      ["summarize", "summarize", true],
      ["summarize", "SUMMARIZE", true],
      ["summarize", "summarize_all", false],
      ["search_*", "search_web", true],
      ["search_*", "search_", true],
      ["search_*", "research_web", false],
      ["*_admin", "grant_admin", true],
      ["*_admin", "grant_admin_now", false],
      ["*", "anything", true],
      ["a*b*c", "axxbyyc", true],
      ["a*b*c", "axxbyy", false],
      ["a**", "a", true],
      ["*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false],
      ["send.email", "sendXemail", false],
      ["", "", true],
      ["", "x", false]
    ]
    for (const [pattern, name, expected] of table)
      expect([pattern, name, globMatches(pattern, name)]).toEqual([pattern, name, expected])
  })

  it("agrees with an anchored regular expression (property)", () => {
    const text = FastCheck.stringMatching(/^[ab*]{0,8}$/)
    FastCheck.assert(
      FastCheck.property(text, FastCheck.stringMatching(/^[ab]{0,10}$/), (pattern, name) => {
        const regex = new RegExp(`^${pattern.replace(/\*/g, ".*")}$`)
        expect(globMatches(pattern, name)).toBe(regex.test(name))
      })
    )
  })
})

describe("trigger conditions", () => {
  const t = trace({
    action: { name: "buy_item", parameters: { amount: 150, currency: "EUR", tags: ["gift", "Urgent"] } },
    context: {
      session_id: "s-1",
      environment: { region: "eu" },
      metadata: { shares_personal_data: true, tier: "gold" }
    }
  })
  it("evaluates the documented language", () => {
    const table: ReadonlyArray<readonly [string, boolean | undefined]> = [
      ["amount > 100", true],
      ["amount >= 150", true],
      ["amount < 100", false],
      ["amount == 150", true],
      ["amount != 150", false],
      ["action.parameters.amount <= 150.0", true],
      ['currency == "eur"', true],
      ["currency == usd", false],
      ["missing_field != 3", false],
      ["missing_field > 3", false],
      ["tags contains 'urgent'", true],
      ['contains(tags, "gift")', true],
      ["tier contains ol", true],
      ["action_type == 'execute'", true],
      ["action_name matches 'buy_*'", true],
      ["region == 'eu' and amount > 200", false],
      ["region == 'eu' && (amount > 200 || tier == gold)", true],
      ["not shares_personal_data", false],
      ["!(amount > 1000)", true],
      ["shares_personal_data", true],
      ["buy_*", true],
      ['"BUY_ITEM"', true],
      ["delete_file", false],
      ["true", true],
      ["amount >", undefined],
      ["(amount > 1", undefined],
      ["amount > 1 amount", undefined],
      ["amount ~ 3", undefined],
      ["'unterminated", undefined],
      ["constructor", false],
      ["toString == 3", false],
      ["__proto__", false],
      [`${"(".repeat(600)}true${")".repeat(600)}`, undefined],
      [`${"(".repeat(200)}true${")".repeat(200)}`, true],
      ["", undefined]
    ]
    for (const [condition, expected] of table)
      expect([condition, evaluateTriggerCondition(condition, t)]).toEqual([condition, expected])
  })
})

describe("card expiry", () => {
  it("reads lenient dates as UTC; a bare date lasts the whole day", () => {
    expect(cardExpiryMs("2026-12-31")).toBe(Date.parse("2027-01-01T00:00:00Z"))
    expect(cardExpiryMs("2026-12-31T10:00")).toBe(Date.parse("2026-12-31T10:00:00Z"))
    expect(cardExpiryMs("2026-12-31 10:00:00")).toBe(Date.parse("2026-12-31T10:00:00Z"))
    expect(cardExpiryMs("2026-12-31T10:00:00+0200")).toBe(Date.parse("2026-12-31T08:00:00Z"))
    expect(cardExpiryMs("2026-12-31T10:00:00.5-01:00")).toBe(Date.parse("2026-12-31T11:00:00.500Z"))
    expect(cardExpiryMs("soon")).toBeUndefined()
  })
})

describe("trace verification", () => {
  it("passes a compliant trace", () => {
    expect(verifyTrace(base, card)).toEqual({
      verification: { verified: true, violations: [] },
      violations: [],
      warnings: [],
      checks_performed: ["card_reference", "card_expiration", "autonomy", "forbidden", "escalation", "values"]
    })
  })

  it("finds each violation with its severity", () => {
    const table: ReadonlyArray<readonly [string, APTraceDraft, ReadonlyArray<string>]> = [
      ["unbounded", trace({ action: { name: "book_flight" } }), ["UNBOUNDED_ACTION"]],
      ["bounded by case-insensitive exact name", trace({ action: { name: "send_email" } }), []],
      [
        "not bounded-category: no bounded check",
        trace({ action: { name: "book_flight", category: "escalation_trigger" } }),
        []
      ],
      ["respond is implicitly bounded", trace({ action: { type: "recommend", name: "respond" } }), []],
      ["forbidden by glob", trace({ action: { name: "grant_admin" } }), ["UNBOUNDED_ACTION", "FORBIDDEN_ACTION"]],
      [
        "forbidden whatever the category",
        trace({ action: { name: "rm_rf", category: "forbidden" } }),
        ["FORBIDDEN_ACTION"]
      ],
      ["missed escalation", trace({ action: { parameters: { amount: 500 } } }), ["MISSED_ESCALATION"]],
      [
        "escalated",
        trace({
          action: { parameters: { amount: 500 } },
          escalation: { evaluated: true, required: true, reason: "large" }
        }),
        []
      ],
      ["escalate action complies", trace({ action: { type: "escalate", parameters: { amount: 500 } } }), []],
      [
        "deny trigger not denied",
        trace({
          action: { name: "delete_file", category: "escalation_trigger" },
          context: { environment: { region: "EU" } }
        }),
        ["MISSED_ESCALATION"]
      ],
      [
        "deny trigger denied",
        trace({
          action: { type: "deny", name: "delete_file", category: "escalation_trigger" },
          context: { environment: { region: "eu" } }
        }),
        []
      ],
      ["log trigger never violates", trace({ action: { name: "send_email", parameters: {} } }), []],
      [
        "boolean context trigger",
        trace({ context: { metadata: { shares_personal_data: true } } }),
        ["MISSED_ESCALATION"]
      ],
      [
        "undeclared values, each",
        trace({ decision: { values_applied: ["speed", "honesty", "profit"] } }),
        ["UNDECLARED_VALUE", "UNDECLARED_VALUE"]
      ],
      ["card mismatch", trace({ card_id: "card-2" }), ["CARD_MISMATCH"]],
      ["no card named", trace({ card_id: null }), []],
      ["expired before the action", trace({ timestamp: "2027-01-01T00:00:01Z" }), ["CARD_EXPIRED"]],
      ["on the last day", trace({ timestamp: "2026-12-31T23:59:59Z" }), []]
    ]
    for (const [name, t, expected] of table) expect([name, types(t)]).toEqual([name, expected])

    const all = verifyTrace(
      trace({
        card_id: "card-x",
        timestamp: "2027-02-01T00:00:00Z",
        action: { name: "rm_rf", parameters: { amount: 101 } },
        decision: { values_applied: ["greed"] }
      }),
      card
    )
    expect(all.violations.map((v) => [v.type, v.severity, v.trace_field])).toEqual([
      ["CARD_MISMATCH", "critical", "card_id"],
      ["CARD_EXPIRED", "high", "timestamp"],
      ["UNBOUNDED_ACTION", "high", "action.name"],
      ["FORBIDDEN_ACTION", "critical", "action.name"],
      ["MISSED_ESCALATION", "high", "escalation.required"],
      ["UNDECLARED_VALUE", "medium", "decision.values_applied"]
    ])
    expect(all.verification).toEqual({
      verified: false,
      violations: [
        "CARD_MISMATCH",
        "CARD_EXPIRED",
        "UNBOUNDED_ACTION",
        "FORBIDDEN_ACTION",
        "MISSED_ESCALATION",
        "UNDECLARED_VALUE"
      ]
    })
  })

  it("lists each violation type once in the stored verification", () => {
    const result = verifyTrace(trace({ decision: { values_applied: ["a", "b"] } }), card)
    expect(result.violations).toHaveLength(2)
    expect(result.verification).toEqual({ verified: false, violations: ["UNDECLARED_VALUE"] })
  })

  it("warns near the boundary, on timeouts, unreadable triggers and expiry, and low similarity", () => {
    const odd: AlignmentCard = {
      ...card,
      expires_at: "next year",
      autonomy_envelope: {
        ...card.autonomy_envelope,
        escalation_triggers: [
          ...card.autonomy_envelope.escalation_triggers,
          { condition: "amount >>> 3", action: "escalate", reason: "" }
        ]
      }
    }
    const t = trace({
      action: { parameters: { amount: 500 } },
      escalation: { evaluated: true, required: true, reason: "large", escalation_status: "timeout" },
      decision: {
        confidence: 0.2,
        alternatives_considered: [
          { option_id: "a", description: "", score: 0.9 },
          { option_id: "b", description: "", score: 0.1 },
          { option_id: "c", description: "", score: null }
        ]
      }
    })
    const result = verifyTrace(t, odd, { behavioralSimilarity: 0.4 })
    expect(result.verification.verified).toBe(true)
    expect(result.warnings.map((w) => [w.type, w.trace_field])).toEqual([
      ["invalid_expiry", null],
      ["escalation_timeout", "escalation.escalation_status"],
      ["invalid_condition", null],
      ["near_boundary", "decision.confidence"],
      ["near_boundary", "decision.alternatives_considered[1].score"],
      ["low_behavioral_similarity", null]
    ])
    expect(verifyTrace(base, card, { behavioralSimilarity: 0.5 }).warnings).toEqual([])
  })

  it("takes options for implicit actions and re-verification against a new card", () => {
    expect(types(trace({ action: { name: "respond" } }))).toEqual([])
    expect(
      verifyTrace(trace({ action: { name: "respond" } }), card, { implicitActions: [] }).verification.violations
    ).toEqual(["UNBOUNDED_ACTION"])
    const result = verifyTrace(trace({ card_id: "card-old" }), card, { checkCardReference: false })
    expect(result.verification).toEqual({ verified: true, violations: [] })
    expect(result.checks_performed).not.toContain("card_reference")
  })

  it("has no expiry check without expires_at", () => {
    const { expires_at: _, ...open } = card
    expect(types(trace({ timestamp: "2099-01-01T00:00:00Z" }), open)).toEqual([])
  })
})
