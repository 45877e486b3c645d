/**
 * A scoped transaction's policy and status (docs/transactions.md). Pure: the gateway and the API
 * compute the same merged policy from the same inputs, and the clock is an argument.
 *
 * The rule (`transactionPolicy`): start from the agent's policy in force (the organization's and the
 * agent's merged, `resolvePolicy`; the schema's defaults when there is none), add the transaction's
 * own policy with the organization-floor merge (`mergePolicies`: rules of both, the stricter of each
 * default), then narrow it to the transaction's tools:
 * - every tool not named by the transaction is denied: `unmapped_tool_action: deny` at severity
 *   high at least, no grace, and every capability mapping keeps only the named tools it covers (a
 *   mapping left with none is dropped), so no mapping can let another tool through;
 * - a named tool the agent's policy maps keeps its mappings (their card actions are still checked
 *   against the card), also the transaction policy's, which only add actions to check;
 * - a named tool the agent's policy does not map gets what the merged `unmapped_tool_action` gives
 *   it: `deny` keeps it unmapped, so it is still denied (now without grace); `warn` maps it under a
 *   mapping without card actions and adds a `warn` escalation trigger for it, so it still warns;
 *   `allow` maps it without card actions, so it passes as before (an agent without a policy allows
 *   every tool);
 * - forbidden rules and escalation triggers of both stay as they are: a named tool that either
 *   forbids is still forbidden;
 * - the mode is the stricter of both and `enforce` unless the transaction's policy names a mode (a
 *   scope that only warned would not be a scope); at least `warn` (a transaction is always
 *   evaluated); `fail_open` only when both allow it.
 *
 * So for any tool the verdict under the transaction is never better than under the agent's policy,
 * and every tool the transaction does not name fails.
 */
import { argumentConditionsOf, matchingRules, mergePolicies } from "./Policy.js"
import { severityRank } from "./schema/Concern.js"
import {
  type CapabilityMapping,
  DEFAULT_POLICY_DEFAULTS,
  type Policy,
  type PolicyDefaults,
  type PolicyEscalationTrigger,
  POLICY_SCHEMA_VERSION
} from "./schema/Policy.js"
import type { GatewayTransaction, TransactionStatus } from "./schema/ScopedTransaction.js"

/**
 * The policy of an agent that has none: no rules, and every tool allowed (as no evaluation at all
 * allows it); the schema's other defaults.
 */
export const EMPTY_POLICY: Policy = {
  meta: { schema_version: POLICY_SCHEMA_VERSION, scope: "agent" },
  capability_mappings: {},
  forbidden: [],
  escalation_triggers: [],
  defaults: { ...DEFAULT_POLICY_DEFAULTS, unmapped_tool_action: "allow" }
}

/** Each default at its loosest: under the stricter-of-both merge, the other side's value stands. */
export const LOOSEST_DEFAULTS: PolicyDefaults = {
  unmapped_tool_action: "allow",
  unmapped_severity: "low",
  fail_open: true,
  enforcement_mode: "off",
  grace_period_hours: 8760
}

/**
 * A transaction's own policy as decoded (every default filled in by the schema) with the defaults
 * its document did not set put at their loosest, so that only what the caller wrote tightens the
 * agent's policy: `{"defaults": {"enforcement_mode": "enforce"}}` asks for enforcement, not also for
 * the schema's `unmapped_tool_action: warn`.
 */
export const withUnsetDefaultsLoosest = (policy: Policy, document: unknown): Policy => {
  const given = (document as { defaults?: unknown } | undefined)?.defaults
  const set = new Set(typeof given === "object" && given !== null ? Object.keys(given) : [])
  const defaults = Object.fromEntries(
    (Object.keys(LOOSEST_DEFAULTS) as Array<keyof PolicyDefaults>).map((key) => [
      key,
      set.has(key) ? policy.defaults[key] : key === "enforcement_mode" ? TRANSACTION_MODE : LOOSEST_DEFAULTS[key]
    ])
  ) as unknown as PolicyDefaults
  return { ...policy, defaults }
}

/** A transaction's mode when its policy names none: a scope is a limit, so it is enforced. */
export const TRANSACTION_MODE = "enforce"

/** The transaction's own policy when it was opened without one: only the default mode. */
const MODE_ONLY: Policy = { ...EMPTY_POLICY, defaults: { ...LOOSEST_DEFAULTS, enforcement_mode: TRANSACTION_MODE } }

/** The name of the mapping that holds named tools no mapping of the policy covers. */
export const TRANSACTION_MAPPING = "transaction"

const freeName = (taken: Readonly<Record<string, unknown>>, name: string): string => {
  let key = name
  for (let n = 2; taken[key] !== undefined; n++) key = `${name}#${n}`
  return key
}

/** Distinct, in the order given. */
export const distinctTools = (tools: ReadonlyArray<string>): ReadonlyArray<string> => [...new Set(tools)]

/** The agent's policy (`base`, undefined: none) narrowed to `tools` and merged with `extra` (see the module comment). */
export const transactionPolicy = (
  base: Policy | undefined,
  tools: ReadonlyArray<string>,
  extra: Policy | undefined
): Policy => {
  const floor = base ?? EMPTY_POLICY
  const merged = mergePolicies(floor, extra ?? MODE_ONLY)
  const named = distinctTools(tools)
  // One match per named tool against each policy (compiled once, linear per name: core/GlobSet.ts).
  const unmappedInBase = new Set(named.filter((tool) => matchingRules(floor, tool).mappings.length === 0))
  const unmappedAction = merged.defaults.unmapped_tool_action
  // A tool the agent's policy leaves unmapped under `deny` stays unmapped: denied, as before.
  const passing = named.filter((tool) => !(unmappedAction === "deny" && unmappedInBase.has(tool)))

  const entries = Object.entries(merged.capability_mappings)
  const covered: Array<Array<string>> = entries.map(() => [])
  const uncovered: Array<string> = []
  for (const tool of passing) {
    const covering = matchingRules(merged, tool).mappings
    for (const i of covering) covered[i]!.push(tool)
    if (covering.length === 0) uncovered.push(tool)
  }
  const mappings: Record<string, CapabilityMapping> = {}
  entries.forEach(([name, mapping], i) => {
    const kept = covered[i]!
    if (kept.length > 0) mappings[name] = { ...mapping, tools: kept }
  })
  if (uncovered.length > 0) {
    mappings[freeName(mappings, TRANSACTION_MAPPING)] = {
      tools: uncovered,
      card_actions: [],
      description: "tools of the transaction no mapping covers (allowed, or warned about, as the agent's policy says)"
    }
  }

  // A forbidden tool never reaches the mappings, so the agent's policy gives it no unmapped warning either.
  const forbidden = (tool: string) => matchingRules(merged, tool).forbidden.length > 0
  const warned: ReadonlyArray<PolicyEscalationTrigger> =
    unmappedAction === "warn"
      ? passing
          .filter((tool) => unmappedInBase.has(tool) && !forbidden(tool))
          .map((tool) => ({
            condition: `tool_matches('${tool}')`,
            action: "warn" as const,
            reason: "no capability mapping of the agent's policy covers this tool"
          }))
      : []

  const d = merged.defaults
  return {
    meta: { ...merged.meta, scope: "agent" },
    capability_mappings: mappings,
    forbidden: merged.forbidden,
    escalation_triggers: [...merged.escalation_triggers, ...warned],
    ...argumentConditionsOf(merged.argument_conditions ?? []),
    defaults: {
      unmapped_tool_action: "deny",
      unmapped_severity: severityRank(d.unmapped_severity) >= severityRank("high") ? d.unmapped_severity : "high",
      fail_open: d.fail_open,
      enforcement_mode: d.enforcement_mode === "off" ? "warn" : d.enforcement_mode,
      grace_period_hours: 0
    }
  }
}

/** Closed: completed; else expired once `expires_at` has passed (at that instant too); else active. */
export const transactionStatus = (
  transaction: { readonly expires_at: string; readonly ended_at: string | null },
  now: number
): TransactionStatus =>
  transaction.ended_at !== null ? "completed" : now >= Date.parse(transaction.expires_at) ? "expired" : "active"

// ---------------------------------------------------------------------------------------------
// At the gateway

/** A request's transaction, as the agent's settings know it. */
export type TransactionLookup =
  | { readonly kind: "open"; readonly transaction: GatewayTransaction }
  | { readonly kind: "expired"; readonly transaction: GatewayTransaction }
  | { readonly kind: "unknown" }

/** The transaction `transactionId` among the agent's open ones, checked against the clock. */
export const lookupTransaction = (
  transactions: ReadonlyArray<GatewayTransaction> | undefined,
  transactionId: string,
  now: number
): TransactionLookup => {
  const transaction = transactions?.find((t) => t.transaction_id === transactionId)
  if (transaction === undefined) return { kind: "unknown" }
  return now >= Date.parse(transaction.expires_at) ? { kind: "expired", transaction } : { kind: "open", transaction }
}

export type TransactionRefusal = "transaction_unknown" | "transaction_expired"

/**
 * The gateway's 403 body for a request naming a transaction it cannot apply. An id of another
 * agent reads as unknown (the agent is identified by its key: it learns nothing of other agents'
 * transactions), as does a completed one. `transaction_error` is what clients act on.
 */
export const transactionErrorBody = (
  agentId: string,
  transactionId: string,
  lookup: Exclude<TransactionLookup, { kind: "open" }>
) => {
  const reason: TransactionRefusal = lookup.kind === "expired" ? "transaction_expired" : "transaction_unknown"
  const shown = JSON.stringify(transactionId.slice(0, 128))
  return {
    error:
      lookup.kind === "expired"
        ? `transaction ${shown} expired at ${lookup.transaction.expires_at}; open a new one`
        : `transaction ${shown} is not open for this agent (unknown, another agent's, or completed)`,
    type: "transaction_error" as const,
    reason,
    transaction_error: {
      type: "transaction_error" as const,
      reason,
      transaction_id: transactionId.slice(0, 128),
      agent_id: agentId,
      expires_at: lookup.kind === "expired" ? lookup.transaction.expires_at : null
    }
  }
}
