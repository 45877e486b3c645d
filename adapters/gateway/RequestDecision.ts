/**
 * The request's decision from the agent's settings: which policy a request is evaluated against
 * (the agent's, or the agent's narrowed by the open transaction it names), and whether its answer
 * is held for a verdict. Pure: no service, no I/O.
 */
import { isPolicyActive } from "../../core/Policy.js"
import { type TransactionLookup, transactionPolicy } from "../../core/ScopedTransaction.js"
import type { Policy } from "../../core/schema/Policy.js"
import type { GatewayTransaction } from "../../core/schema/ScopedTransaction.js"
import type { AgentSettings } from "../bus/AgentState.js"

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
