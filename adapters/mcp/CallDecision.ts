/**
 * A `tools/call` decided before the server sees it (docs/mcp.md): a scoped transaction it names,
 * its tool's pin (a changed definition under an enforcing policy), then the agent's resolved policy
 * with the call's arguments (core/ToolCallPolicy.ts); an `approve` trigger holds it for a person
 * (docs/approvals.md). A finding is announced, a warning recorded.
 */
import { randomUUID } from "node:crypto"
import type { IncomingMessage } from "node:http"
import { approvalTimeoutSeconds, approvalTrigger, withoutApproveTriggers } from "../../core/Approval.js"
import { mcpRecord } from "../../core/EnforcementRecords.js"
import { type GatewayBlock, policyViolationEvent } from "../../core/EventData.js"
import { isPolicyActive, type PolicyEvaluation } from "../../core/Policy.js"
import { lookupTransaction, transactionErrorBody, transactionPolicy } from "../../core/ScopedTransaction.js"
import type { Policy } from "../../core/schema/Policy.js"
import { evaluateToolCall } from "../../core/ToolCallPolicy.js"
import { type Caller, headerValue, type ProxyContext } from "./ProxyContext.js"
import type { ToolPins } from "./ToolPins.js"

const TRANSACTION_HEADER = "x-transaction-id"

export type CallDecision =
  | { readonly _tag: "forward" }
  /** An `approve` trigger matched (docs/approvals.md): held until a person decides, at most `timeoutSeconds`. */
  | { readonly _tag: "hold"; readonly reason: string; readonly timeoutSeconds: number }
  | {
      readonly _tag: "refuse"
      readonly rule: GatewayBlock["rule"]
      readonly reason: string
      readonly data: Record<string, unknown>
    }

const findingsText = (evaluation: PolicyEvaluation): string =>
  evaluation.violations.map((v) => `${v.type} ${v.tool}: ${v.reason}`).join("; ")

export const makeCallDecision = ({ announce, clock, now, record, state }: ProxyContext, pins: ToolPins) => {
  /** The caller's policy for this request: the agent's, or narrowed by the transaction it names. */
  const policyOf = (
    caller: Caller,
    req: IncomingMessage
  ): { readonly policy: Policy | undefined } | { readonly refusal: CallDecision } => {
    const transactionId = headerValue(req.headers[TRANSACTION_HEADER])
    if (transactionId === undefined)
      return { policy: isPolicyActive(caller.settings.policy) ? caller.settings.policy : undefined }
    const lookup = lookupTransaction(caller.settings.transactions, transactionId, clock.unsafeCurrentTimeMillis())
    if (lookup.kind !== "open") {
      const body = transactionErrorBody(caller.agentId, transactionId, lookup)
      return { refusal: { _tag: "refuse", rule: "transaction", reason: body.reason, data: { ...body } } }
    }
    const { transaction } = lookup
    return { policy: transactionPolicy(caller.settings.policy, transaction.tools, transaction.policy) }
  }

  /** A `tools/call`, before the server sees it: what the module comment lists, in that order. */
  const decideCall = (caller: Caller, req: IncomingMessage, tool: string, args: unknown): CallDecision => {
    const resolved = policyOf(caller, req)
    if ("refusal" in resolved) return resolved.refusal
    const { policy } = resolved
    const mode = policy?.defaults.enforcement_mode
    const changed = pins.changed(caller.serverId, tool)
    const unpinnable = pins.unpinnable(caller.serverId, tool)
    if (mode === "enforce" && (changed !== undefined || unpinnable !== undefined)) {
      return {
        _tag: "refuse",
        rule: "tool_changed",
        reason:
          changed !== undefined
            ? `tool ${tool}: its definition changed (${changed}) and waits for an Owner's or Admin's acceptance`
            : `tool ${tool}: its definition cannot be pinned (${unpinnable})`,
        data: {
          server_id: caller.serverId,
          tool_name: tool,
          ...(changed === undefined ? {} : { definition_hash: changed })
        }
      }
    }
    if (policy === undefined) return { _tag: "forward" }
    const at = now()
    // What the policy refuses is refused before anyone is asked; the approve triggers hold instead.
    const approval = approvalTrigger(policy, tool)
    const held: CallDecision =
      approval === undefined
        ? { _tag: "forward" }
        : { _tag: "hold", reason: approval.reason, timeoutSeconds: approvalTimeoutSeconds(policy) }
    const evaluation = evaluateToolCall(
      withoutApproveTriggers(policy),
      caller.settings.card,
      tool,
      args,
      state.toolsFirstSeen(caller.agentId),
      at
    )
    state.noteTools(caller.agentId, [{ name: tool }], at.getTime())
    if (evaluation.verdict === "pass") return held
    const policyMode = mode ?? "warn"
    announce(
      policyViolationEvent(
        { agentId: caller.agentId, checkpointId: null, phase: "request", mode: policyMode, evaluation },
        randomUUID(),
        caller.orgId,
        at
      )
    )
    if (evaluation.verdict === "fail" && policyMode === "enforce")
      return {
        _tag: "refuse",
        rule: "policy",
        reason: findingsText(evaluation),
        data: { policy_verdict: { mode: policyMode, ...evaluation } }
      }
    record(caller, {
      type: "gateway.enforcement",
      mode: caller.settings.mode,
      record: mcpRecord(
        "warned",
        {
          agentId: caller.agentId,
          rule: "policy",
          reason:
            findingsText(evaluation) || evaluation.warnings.map((w) => `${w.type} ${w.tool}: ${w.reason}`).join("; ")
        },
        randomUUID(),
        at
      )
    })
    return held
  }

  return { decideCall }
}
