/**
 * Human approval's pure part (core/Approval.ts) and its place in the policy DSL: an `approve`
 * trigger on the LLM path (core/Policy.ts's evaluation) acts as `deny` under an enforcing policy and
 * as `escalate` otherwise; the held path finds the trigger and evaluates without it; the timeout is
 * bounded, optional (a policy written before it decodes (and hashes) as before) and merged to the shorter; the
 * arguments hash ignores key order and nothing else.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import {
  approvalTimeoutSeconds,
  approvalTrigger,
  argumentsHash,
  releases,
  withoutApproveTriggers
} from "../../core/Approval.js"
import { evaluatePolicy, mergePolicies } from "../../core/Policy.js"
import { decodePolicy, Policy, type PolicyEncoded } from "../../core/schema/Policy.js"

const policyOf = (encoded: PolicyEncoded): Policy => Schema.decodeUnknownSync(Policy)(encoded)
const NOW = new Date("2026-03-01T12:00:00Z")
const never = () => undefined

const approving = (mode: "enforce" | "warn" | "off") =>
  policyOf({
    escalation_triggers: [
      { condition: "tool_matches('repo_delete*')", action: "approve", reason: "deleting needs a person" },
      { condition: "tool_matches('repo_*')", action: "warn", reason: "repositories" }
    ],
    defaults: { unmapped_tool_action: "allow", enforcement_mode: mode }
  })

describe("approve on the LLM path", () => {
  it("acts as deny under an enforcing policy: a high violation, verdict fail", () => {
    expect(evaluatePolicy(approving("enforce"), undefined, [{ name: "repo_delete" }], never, NOW)).toMatchObject({
      verdict: "fail",
      violations: [{ type: "escalation", tool: "repo_delete", reason: "deleting needs a person", severity: "high" }]
    })
  })

  it("acts as escalate otherwise: a medium warning, never a violation", () => {
    for (const mode of ["warn", "off"] as const) {
      const result = evaluatePolicy(approving(mode), undefined, [{ name: "repo_delete" }], never, NOW)
      expect(result.verdict).toBe("warn")
      expect(result.violations).toEqual([])
      expect(result.warnings).toContainEqual({
        type: "escalation",
        tool: "repo_delete",
        reason: "deleting needs a person",
        severity: "medium"
      })
    }
  })
})

describe("the held path", () => {
  it("finds the approve trigger a tool matches, and evaluates the rest of the policy without it", () => {
    const policy = approving("enforce")
    expect(approvalTrigger(policy, "repo_delete_all")?.reason).toBe("deleting needs a person")
    expect(approvalTrigger(policy, "repo_read")).toBeUndefined()
    const held = withoutApproveTriggers(policy)
    expect(held).toBe(withoutApproveTriggers(policy))
    const result = evaluatePolicy(held, undefined, [{ name: "repo_delete" }], never, NOW)
    expect(result).toMatchObject({ verdict: "warn", violations: [] })
    // A policy without approve triggers is itself.
    const plain = policyOf({})
    expect(withoutApproveTriggers(plain)).toBe(plain)
  })

  it("only approved releases the call", () => {
    expect(["pending", "approved", "denied", "expired", "cancelled"].filter((s) => releases(s as never))).toEqual([
      "approved"
    ])
  })

  it("binds the arguments: key order is the same call, any other value another", () => {
    const a = argumentsHash({ repo: "candor", force: true })
    expect(a).toMatch(/^[0-9a-f]{64}$/)
    expect(argumentsHash({ force: true, repo: "candor" })).toBe(a)
    expect(argumentsHash({ repo: "candor", force: false })).not.toBe(a)
    expect(argumentsHash({ repo: "candor ", force: true })).not.toBe(a)
    expect(argumentsHash(undefined)).toBe(argumentsHash({}))
    expect(argumentsHash({ n: Number.NaN })).toBeUndefined()
  })
})

describe("approval_timeout_seconds", () => {
  it("defaults to 300 s, absent from the stored policy: a policy written before it decodes (and hashes) as before", () => {
    const before = policyOf({ forbidden: [{ pattern: "shell_*", reason: "no shell" }] })
    expect(approvalTimeoutSeconds(before)).toBe(300)
    expect(Object.keys(before.defaults).sort()).toEqual([
      "enforcement_mode",
      "fail_open",
      "grace_period_hours",
      "unmapped_severity",
      "unmapped_tool_action"
    ])
    expect(approvalTimeoutSeconds(policyOf({ defaults: { approval_timeout_seconds: 60 } }))).toBe(60)
  })

  it("is a whole number from 10 to 3600", () => {
    for (const bad of [9, 3601, 30.5, -1, "60"]) {
      const decoded = decodePolicy({ defaults: { approval_timeout_seconds: bad } })
      expect(Either.isLeft(decoded)).toBe(true)
    }
    for (const good of [10, 3600]) {
      expect(Either.isRight(decodePolicy({ defaults: { approval_timeout_seconds: good } }))).toBe(true)
    }
  })

  it("merges to the shorter wait; absent on both sides stays absent", () => {
    const org = policyOf({ defaults: { approval_timeout_seconds: 120 } })
    const agent = policyOf({ defaults: { approval_timeout_seconds: 600 } })
    expect(mergePolicies(org, agent).defaults.approval_timeout_seconds).toBe(120)
    expect(mergePolicies(agent, policyOf({})).defaults.approval_timeout_seconds).toBe(600)
    expect("approval_timeout_seconds" in mergePolicies(policyOf({}), policyOf({})).defaults).toBe(false)
  })
})
