/**
 * Human approval, the pure part (docs/approvals.md): which `approve` escalation triggers a tool call
 * matches, how long it may wait, and the states an approval moves through. The store and the wait are
 * services/Approvals.ts; the policy evaluation itself (core/Policy.ts) treats `approve` as the LLM
 * path must (deny when enforcing, escalate otherwise), so a path that holds calls evaluates the
 * policy without those triggers (`withoutApproveTriggers`) and holds on `approvalTrigger`.
 */
import { toHex } from "./Bytes.js"
import { canonicalHash, tryCanonicalJson } from "./Canonical.js"
import { globMatcher } from "./Policy.js"
import type { ApprovalStatus } from "./schema/Approval.js"
import {
  DEFAULT_APPROVAL_TIMEOUT_SECONDS,
  type Policy,
  type PolicyEscalationTrigger,
  triggerGlob
} from "./schema/Policy.js"

/** Seconds a held call waits for a decision under this policy (then it is `expired`, i.e. denied). */
export const approvalTimeoutSeconds = (policy: Policy): number =>
  policy.defaults.approval_timeout_seconds ?? DEFAULT_APPROVAL_TIMEOUT_SECONDS

const matchers = new WeakMap<PolicyEscalationTrigger, (name: string) => boolean>()

const matches = (trigger: PolicyEscalationTrigger, tool: string): boolean => {
  let match = matchers.get(trigger)
  if (match === undefined) {
    const glob = triggerGlob(trigger.condition)
    // A decoded policy's conditions always parse; anything else matches nothing.
    match = glob === undefined ? () => false : globMatcher(glob)
    matchers.set(trigger, match)
  }
  return match(tool)
}

/**
 * The first `approve` trigger the tool matches (its reason is the approval's), or undefined. One
 * approval per call whatever the number of triggers: a person decides on the call, not on a rule.
 */
export const approvalTrigger = (policy: Policy, tool: string): PolicyEscalationTrigger | undefined =>
  policy.escalation_triggers.find((trigger) => trigger.action === "approve" && matches(trigger, tool))

const withoutApprove = new WeakMap<Policy, Policy>()

/**
 * The policy less its `approve` triggers, for a path that holds the calls they match instead of
 * evaluating them (one object per policy object, so core/Policy.ts's compiled globs are kept).
 */
export const withoutApproveTriggers = (policy: Policy): Policy => {
  if (!policy.escalation_triggers.some((t) => t.action === "approve")) return policy
  let out = withoutApprove.get(policy)
  if (out === undefined) {
    out = { ...policy, escalation_triggers: policy.escalation_triggers.filter((t) => t.action !== "approve") }
    withoutApprove.set(policy, out)
  }
  return out
}

/** Whether the held call may go on: only an approval a person gave. */
export const releases = (status: ApprovalStatus): boolean => status === "approved"

/** Whether a status is final (a held call's wait ends on it). */
export const isFinal = (status: ApprovalStatus): boolean => status !== "pending"

/**
 * The hash an approval binds its call to: hex `SHA-256("candor/v1/approval-arguments\0" ‖ JCS(arguments))`
 * (core/Canonical.ts), so the same arguments in any key order are the same call, and any other
 * arguments are another call, which the approval does not release. Undefined for arguments JSON
 * cannot represent (a caller refuses the call then: nothing unhashable is ever held or sent).
 */
export const argumentsHash = (args: unknown): string | undefined => {
  if (tryCanonicalJson(args ?? {}) === undefined) return undefined
  return toHex(canonicalHash("approval-arguments", args ?? {}))
}
