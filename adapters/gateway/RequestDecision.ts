/**
 * The decision on an attributed request, from the agent's settings and what is known of the request:
 * one pure function (`decideRequest`: no service, no I/O, no effect) that the synchronous path and
 * the effectful path of `RequestPath.ts` both follow, so they cannot disagree.
 *
 * In order: containment (the agent's or its key's), the scoped transaction the request names, the
 * tool policy on the request's declared tools (the agent's, or the agent's narrowed by the open
 * transaction), the tool results the request carries; then the request is forwarded, with what
 * `X-Policy-Verdict` says and whether its answer is held for a verdict.
 *
 * What costs something to learn (reading the tools, evaluating them, screening and judging the tool
 * results) is learned only when the decision asks for it: the caller learns it, adds it to the
 * facts and asks again. The synchronous path learns what it can without an effect and leaves
 * everything else (a refusal to record, a finding to announce, a body to decode, a result to judge)
 * to the effectful path, which decides the same request from the same facts.
 */
import { containmentInForce, type ScopedContainment } from "../../core/Containment.js"
import { appliedVerdict, isPolicyActive, type PolicyEvaluation, type PolicyVerdict } from "../../core/Policy.js"
import { type TransactionLookup, transactionPolicy } from "../../core/ScopedTransaction.js"
import type { ContainmentState } from "../../core/schema/Containment.js"
import type { Policy } from "../../core/schema/Policy.js"
import type { GatewayTransaction } from "../../core/schema/ScopedTransaction.js"
import type { AgentSettings } from "../bus/AgentState.js"
import type { Screened } from "./ToolResultScreening.js"

/**
 * Each transaction's merged policy, computed once per settings object (the settings change, a new
 * object comes; the old one and its entries are collected with it).
 */
const transactionPolicies = new WeakMap<AgentSettings, Map<string, Policy>>()

const policyOfTransaction = (settings: AgentSettings, transaction: GatewayTransaction): Policy => {
  let policies = transactionPolicies.get(settings)
  if (policies === undefined) transactionPolicies.set(settings, (policies = new Map()))
  let policy = policies.get(transaction.transaction_id)
  if (policy === undefined) {
    policy = transactionPolicy(settings.policy, transaction.tools, transaction.policy)
    policies.set(transaction.transaction_id, policy)
  }
  return policy
}

/** The policy a request is evaluated against: the agent's, or the agent's narrowed by an open transaction. */
export const policyFor = (settings: AgentSettings, lookup: TransactionLookup | undefined): Policy | undefined => {
  if (lookup === undefined) return isPolicyActive(settings.policy) ? settings.policy : undefined
  return lookup.kind === "open" ? policyOfTransaction(settings, lookup.transaction) : undefined
}

/**
 * A non-streaming answer is held for its verdict when the agent's mode or its policy's is `enforce`:
 * the judge's violation blocks it in the first case, a tool call the policy forbids in the second.
 */
export const holds = (settings: AgentSettings, policy: Policy | undefined): boolean =>
  settings.mode === "enforce" || policy?.defaults.enforcement_mode === "enforce"

/** The active policy and what `X-Policy-Verdict` said of the request. */
export interface RequestPolicy {
  readonly policy: Policy
  readonly requestVerdict: PolicyVerdict
  /** The request's tools could not be read (a body undecodable or not JSON): forwarded unchecked. */
  readonly requestUnreadable: boolean
}

/** What is known of an attributed request when it is decided; the facts after `transaction` are learned when asked for. */
export interface RequestFacts {
  /** The key's containment (scope `key`, Admission.ts); undefined: the key is not contained. */
  readonly keyContainment: ContainmentState | undefined
  /** `X-Transaction-Id`, when sent. */
  readonly transactionId: string | undefined
  /** That transaction as the agent's settings know it (`lookupTransaction`); undefined when none is named. */
  readonly transaction: TransactionLookup | undefined
  /** Whether the request's tools cannot be read (a body undecodable or not JSON); undefined: not read yet (`ReadTools`). */
  readonly toolsUnreadable?: boolean | undefined
  /** The request's declared tools against the policy; undefined: not evaluated yet (`EvaluateTools`). */
  readonly evaluation?: PolicyEvaluation | undefined
  /** The tool results the request carries, screened and judged; undefined: not screened yet (`ScreenToolResults`). */
  readonly toolResults?: Screened | undefined
}

export type Decision =
  /** Refused: the agent or its key is contained (403, or 429 past the refusals recorded a second). */
  | { readonly _tag: "Contained"; readonly containment: ScopedContainment }
  /** Refused: the request names a transaction the agent has not open (403 `transaction_error`). */
  | {
      readonly _tag: "TransactionNotOpen"
      readonly transactionId: string
      readonly lookup: Exclude<TransactionLookup, { kind: "open" }>
    }
  /** A policy applies: the request's tools are to be read (`toolsUnreadable`). */
  | { readonly _tag: "ReadTools"; readonly policy: Policy }
  /** Refused: the tools cannot be read and the enforcing policy does not fail open (403). */
  | { readonly _tag: "ToolsUnreadable" }
  /** The tools read: to be evaluated against the policy (`evaluation`). */
  | { readonly _tag: "EvaluateTools"; readonly policy: Policy }
  /** Refused: the enforcing policy forbids a declared tool (403). */
  | { readonly _tag: "PolicyBlocked"; readonly evaluation: PolicyEvaluation }
  /** The tool results the request carries are to be screened, and the new ones judged (`toolResults`). */
  | { readonly _tag: "ScreenToolResults" }
  /** Refused: a tool result was judged a boundary violation, in `enforce` (403). */
  | { readonly _tag: "ToolResultRefused"; readonly checkpointId: string }
  /** Refused: more tool results not yet judged than one request may have judged, in `enforce` (429: retry). */
  | { readonly _tag: "ToolResultsOverCap"; readonly left: number }
  | {
      readonly _tag: "Forward"
      /** The policy applied and its verdict on the request; undefined without an active policy. */
      readonly policy: RequestPolicy | undefined
      /** The answer is held for its verdict, unless the request asks for a stream (`holds`). */
      readonly holdsAnswer: boolean
      /** Tool results left unjudged for a later request (outside `enforce`, where they would be a 429). */
      readonly toolResultsLeft: number
    }

const TOOLS_UNREADABLE: Decision = { _tag: "ToolsUnreadable" }
const SCREEN_TOOL_RESULTS: Decision = { _tag: "ScreenToolResults" }
/** The usual request's decision (no policy, no result left), allocated once rather than per request. */
const FORWARD_HELD: Decision = { _tag: "Forward", policy: undefined, holdsAnswer: true, toolResultsLeft: 0 }
const FORWARD_NOT_HELD: Decision = { _tag: "Forward", policy: undefined, holdsAnswer: false, toolResultsLeft: 0 }

/**
 * The next step of the request's decision from the agent's settings and the facts learned so far: a
 * refusal, a fact to learn first, or the request forwarded. Learning a fact changes nothing the
 * decision reads before it, so asking again with it added goes on where the last answer stopped.
 */
export const decideRequest = (settings: AgentSettings, facts: RequestFacts): Decision => {
  const containment = containmentInForce(settings.containment, facts.keyContainment)
  if (containment !== undefined) return { _tag: "Contained", containment }
  const { transaction, transactionId } = facts
  if (transactionId !== undefined && transaction !== undefined && transaction.kind !== "open") {
    return { _tag: "TransactionNotOpen", transactionId, lookup: transaction }
  }
  const policy = policyFor(settings, transaction)
  let requestVerdict: PolicyVerdict = "pass"
  let requestUnreadable = false
  if (policy !== undefined) {
    const unreadable = facts.toolsUnreadable
    if (unreadable === undefined) return { _tag: "ReadTools", policy }
    // Tools that cannot be read cannot be checked: refused in `enforce` under `fail_open: false`;
    // else forwarded, never as a pass (below).
    const mode = policy.defaults.enforcement_mode
    if (unreadable && !policy.defaults.fail_open && mode === "enforce") return TOOLS_UNREADABLE
    const evaluation = facts.evaluation
    if (evaluation === undefined) return { _tag: "EvaluateTools", policy }
    requestVerdict = appliedVerdict(evaluation.verdict, mode)
    if (requestVerdict === "fail") return { _tag: "PolicyBlocked", evaluation }
    // Forwarded under `fail_open`, but never as a pass: the client's header and the record say the
    // tools went unchecked.
    if (unreadable) requestVerdict = "warn"
    requestUnreadable = unreadable
  }
  const screened = facts.toolResults
  if (screened === undefined) return SCREEN_TOOL_RESULTS
  if (screened.kind === "refuse") return { _tag: "ToolResultRefused", checkpointId: screened.checkpointId }
  // More results than one request may have judged: in `enforce` the client is asked to retry (those
  // judged are remembered, so each retry judges the next ones); else the rest are judged when a
  // later request carries them again.
  if (screened.left > 0 && settings.mode === "enforce") return { _tag: "ToolResultsOverCap", left: screened.left }
  if (policy === undefined && screened.left === 0) return holds(settings, policy) ? FORWARD_HELD : FORWARD_NOT_HELD
  return {
    _tag: "Forward",
    policy: policy === undefined ? undefined : { policy, requestVerdict, requestUnreadable },
    holdsAnswer: holds(settings, policy),
    toolResultsLeft: screened.left
  }
}
