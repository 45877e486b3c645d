/**
 * The request's decision (adapters/gateway/RequestDecision.ts `decideRequest`), the one pure function
 * the gateway's synchronous and effectful paths both follow: containment first (the agent's or its
 * key's), then the transaction the request names, the tool policy on its declared tools (read, then
 * evaluated), its tool results; then forwarded, with the policy's verdict and whether the answer is
 * held. Each fact the decision asks for, added, takes it one step on; the same facts, the same step.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import { type PolicyEvaluation, policyEvaluator } from "../../../core/Policy.js"
import { lookupTransaction, type TransactionLookup } from "../../../core/ScopedTransaction.js"
import type { ContainmentState } from "../../../core/schema/Containment.js"
import { Policy, type PolicyEncoded } from "../../../core/schema/Policy.js"
import type { GatewayTransaction } from "../../../core/schema/ScopedTransaction.js"
import { type AgentSettings, defaultSettings } from "../../../adapters/bus/AgentState.js"
import { type Decision, decideRequest, type RequestFacts } from "../../../adapters/gateway/RequestDecision.js"
import type { Screened } from "../../../adapters/gateway/ToolResultScreening.js"

const NOW = Date.parse("2026-06-01T12:00:00Z")

const policyOf = (encoded: PolicyEncoded): Policy => Schema.decodeUnknownSync(Policy)(encoded)

const SHELL_FORBIDDEN = (mode: "enforce" | "warn" | "off", failOpen = true) =>
  policyOf({
    forbidden: [{ pattern: "shell_exec", reason: "no shell" }],
    defaults: { enforcement_mode: mode, unmapped_tool_action: "allow", fail_open: failOpen }
  })

const paused: ContainmentState = {
  status: "paused",
  reason: "investigating",
  contained_at: "2026-06-01T11:00:00Z",
  contained_by: "usr_1"
}
const killed: ContainmentState = { ...paused, status: "killed" }

const settingsWith = (patch: Partial<AgentSettings>): AgentSettings => ({ ...defaultSettings, ...patch })

const evaluate = (policy: Policy, tools: ReadonlyArray<string>): PolicyEvaluation => {
  const evaluation = policyEvaluator(
    policy,
    undefined,
    tools.map((name) => ({ name })),
    () => undefined,
    new Date(NOW)
  ).run(Number.MAX_SAFE_INTEGER)
  if (evaluation === undefined) throw new Error("evaluation not done")
  return evaluation
}

/** Facts of a request naming no transaction from a key not contained, with the later facts given. */
const factsOf = (more: Omit<RequestFacts, "keyContainment" | "transactionId" | "transaction"> = {}): RequestFacts =>
  Object.freeze({ keyContainment: undefined, transactionId: undefined, transaction: undefined, ...more })

const NOTHING_LEFT: Screened = { kind: "pass", left: 0 }

/** Follows the decision as a path does: each fact asked for is given from `learn`, until a refusal or `Forward`. */
const follow = (
  settings: AgentSettings,
  facts: RequestFacts,
  learn: {
    readonly unreadable?: boolean
    readonly tools?: ReadonlyArray<string>
    readonly toolResults?: RequestFacts["toolResults"]
  } = {}
): { readonly decision: Decision; readonly steps: ReadonlyArray<Decision["_tag"]> } => {
  const steps: Array<Decision["_tag"]> = []
  let known = facts
  for (;;) {
    const decision = decideRequest(settings, known)
    steps.push(decision._tag)
    switch (decision._tag) {
      case "ReadTools":
        known = { ...known, toolsUnreadable: learn.unreadable ?? false }
        break
      case "EvaluateTools":
        known = { ...known, evaluation: evaluate(decision.policy, learn.tools ?? []) }
        break
      case "ScreenToolResults":
        known = { ...known, toolResults: learn.toolResults ?? NOTHING_LEFT }
        break
      default:
        return { decision, steps }
    }
  }
}

describe("decideRequest", () => {
  it("forwards a request of an agent without a policy once its tool results are screened; holds in enforce", () => {
    expect(decideRequest(defaultSettings, factsOf())).toEqual({ _tag: "ScreenToolResults" })
    expect(decideRequest(defaultSettings, factsOf({ toolResults: NOTHING_LEFT }))).toEqual({
      _tag: "Forward",
      policy: undefined,
      holdsAnswer: false,
      toolResultsLeft: 0
    })
    const enforcing = decideRequest(settingsWith({ mode: "enforce" }), factsOf({ toolResults: NOTHING_LEFT }))
    expect(enforcing).toMatchObject({ _tag: "Forward", holdsAnswer: true })
  })

  it("refuses a contained agent or key before anything else, under the more severe containment", () => {
    const transaction: TransactionLookup = { kind: "unknown" }
    expect(
      decideRequest(settingsWith({ containment: paused }), {
        keyContainment: undefined,
        transactionId: "txn-1",
        transaction
      })
    ).toEqual({ _tag: "Contained", containment: { scope: "agent", containment: paused } })
    expect(
      decideRequest(settingsWith({ policy: SHELL_FORBIDDEN("enforce") }), {
        ...factsOf(),
        keyContainment: killed
      })
    ).toEqual({ _tag: "Contained", containment: { scope: "key", containment: killed } })
    expect(decideRequest(settingsWith({ containment: paused }), { ...factsOf(), keyContainment: killed })).toEqual({
      _tag: "Contained",
      containment: { scope: "key", containment: killed }
    })
  })

  it("refuses a transaction the agent has not open, and narrows the policy by an open one", () => {
    const open: GatewayTransaction = {
      transaction_id: "txn-open",
      tools: ["read_file"],
      expires_at: "2026-06-01T13:00:00Z"
    }
    const expired: GatewayTransaction = { ...open, transaction_id: "txn-old", expires_at: "2026-06-01T11:59:00Z" }
    const settings = settingsWith({ transactions: [open, expired] })
    const named = (transactionId: string): RequestFacts => ({
      keyContainment: undefined,
      transactionId,
      transaction: lookupTransaction(settings.transactions, transactionId, NOW)
    })
    expect(decideRequest(settings, named("txn-none"))).toEqual({
      _tag: "TransactionNotOpen",
      transactionId: "txn-none",
      lookup: { kind: "unknown" }
    })
    expect(decideRequest(settings, named("txn-old"))).toEqual({
      _tag: "TransactionNotOpen",
      transactionId: "txn-old",
      lookup: { kind: "expired", transaction: expired }
    })
    // An open transaction applies its policy (enforcing its tools) even where the agent has none,
    // the same object each time for the same settings.
    const first = decideRequest(settings, named("txn-open"))
    const again = decideRequest(settings, named("txn-open"))
    expect(first._tag).toBe("ReadTools")
    expect(again).toEqual(first)
    if (first._tag !== "ReadTools" || again._tag !== "ReadTools") throw new Error("unreachable")
    expect(again.policy).toBe(first.policy)
    const { decision } = follow(settings, named("txn-open"), { tools: ["shell_exec"] })
    expect(decision._tag).toBe("PolicyBlocked")
    expect(follow(settings, named("txn-open"), { tools: ["read_file"] }).decision).toMatchObject({
      _tag: "Forward",
      policy: { requestVerdict: "pass", requestUnreadable: false },
      holdsAnswer: true
    })
  })

  it("reads the tools, then evaluates them, when a policy is active; none when it is off", () => {
    const enforce = SHELL_FORBIDDEN("enforce")
    const settings = settingsWith({ policy: enforce })
    expect(decideRequest(settings, factsOf())).toEqual({ _tag: "ReadTools", policy: enforce })
    expect(decideRequest(settings, factsOf({ toolsUnreadable: false }))).toEqual({
      _tag: "EvaluateTools",
      policy: enforce
    })
    const passed = follow(settings, factsOf(), { tools: ["read_file"] })
    expect(passed.steps).toEqual(["ReadTools", "EvaluateTools", "ScreenToolResults", "Forward"])
    expect(passed.decision).toEqual({
      _tag: "Forward",
      policy: { policy: enforce, requestVerdict: "pass", requestUnreadable: false },
      holdsAnswer: true,
      toolResultsLeft: 0
    })
    const off = settingsWith({ policy: SHELL_FORBIDDEN("off") })
    expect(follow(off, factsOf(), { tools: ["shell_exec"] })).toEqual({
      decision: { _tag: "Forward", policy: undefined, holdsAnswer: false, toolResultsLeft: 0 },
      steps: ["ScreenToolResults", "Forward"]
    })
  })

  it("blocks a forbidden tool in enforce, and forwards it as warn in warn mode", () => {
    const enforce = follow(settingsWith({ policy: SHELL_FORBIDDEN("enforce") }), factsOf(), { tools: ["shell_exec"] })
    expect(enforce.decision._tag).toBe("PolicyBlocked")
    if (enforce.decision._tag !== "PolicyBlocked") throw new Error("unreachable")
    expect(enforce.decision.evaluation.violations.map((v) => v.tool)).toEqual(["shell_exec"])
    const warn = follow(settingsWith({ policy: SHELL_FORBIDDEN("warn") }), factsOf(), { tools: ["shell_exec"] })
    expect(warn.decision).toMatchObject({
      _tag: "Forward",
      policy: { requestVerdict: "warn", requestUnreadable: false },
      holdsAnswer: false
    })
  })

  it("refuses unreadable tools only in enforce without fail_open; else forwards them as warn, never as pass", () => {
    const closed = follow(settingsWith({ policy: SHELL_FORBIDDEN("enforce", false) }), factsOf(), { unreadable: true })
    expect(closed).toEqual({ decision: { _tag: "ToolsUnreadable" }, steps: ["ReadTools", "ToolsUnreadable"] })
    for (const policy of [SHELL_FORBIDDEN("enforce", true), SHELL_FORBIDDEN("warn", false)]) {
      const open = follow(settingsWith({ policy }), factsOf(), { unreadable: true })
      expect(open.steps).toEqual(["ReadTools", "EvaluateTools", "ScreenToolResults", "Forward"])
      expect(open.decision).toMatchObject({
        _tag: "Forward",
        policy: { requestVerdict: "warn", requestUnreadable: true }
      })
    }
  })

  it("decides on the screened tool results: refused, over the cap in enforce, else forwarded with those left", () => {
    const refused = decideRequest(defaultSettings, factsOf({ toolResults: { kind: "refuse", checkpointId: "ckp-1" } }))
    expect(refused).toEqual({ _tag: "ToolResultRefused", checkpointId: "ckp-1" })
    const left = factsOf({ toolResults: { kind: "pass", left: 3 } })
    expect(decideRequest(settingsWith({ mode: "enforce" }), left)).toEqual({ _tag: "ToolResultsOverCap", left: 3 })
    expect(decideRequest(settingsWith({ mode: "nudge" }), left)).toEqual({
      _tag: "Forward",
      policy: undefined,
      holdsAnswer: false,
      toolResultsLeft: 3
    })
    // The policy is decided before the tool results: a blocked request judges none.
    const blocked = follow(settingsWith({ policy: SHELL_FORBIDDEN("enforce") }), factsOf(), {
      tools: ["shell_exec"],
      toolResults: { kind: "refuse", checkpointId: "ckp-1" }
    })
    expect(blocked.steps).toEqual(["ReadTools", "EvaluateTools", "PolicyBlocked"])
  })

  it("holds the answer when the policy enforces though the agent only observes", () => {
    const settings = settingsWith({ mode: "observe", policy: SHELL_FORBIDDEN("enforce") })
    expect(follow(settings, factsOf(), { tools: ["read_file"] }).decision).toMatchObject({ holdsAnswer: true })
    const warn = settingsWith({ mode: "observe", policy: SHELL_FORBIDDEN("warn") })
    expect(follow(warn, factsOf(), { tools: ["read_file"] }).decision).toMatchObject({ holdsAnswer: false })
  })
})
