/**
 * Tool policy evaluation: the tools a request declares (or a response calls) against the agent's
 * policy and Alignment Card. Pure and deterministic: the clock and the "first seen" memory are
 * arguments, and the findings come out in the order the tools came in.
 *
 * Per distinct tool name:
 * 1. a `forbidden` rule matches → violation (`forbidden`);
 * 2. it maps to an action the card forbids (`autonomy_envelope.forbidden_actions`) → violation
 *    (`card_forbidden`);
 * 3. no mapping covers it (`unmapped`), or, with a card, none of its actions is one the card bounds
 *    (`unbounded`) → `defaults.unmapped_tool_action`: allow, a warning, or a violation;
 * 4. an escalation trigger matches → warning (`escalation`).
 *
 * Grace: a violation of step 3 for a tool first seen less than `grace_period_hours` ago is a
 * warning instead (with `grace_until`), so a new tool has time to be mapped. Steps 1 and 2 get no
 * grace: those tools are not unknown to the policy, someone named them, and agent identities are
 * cheap (a new `x-candor-agent` name is a new agent with no history), so grace on an explicit
 * prohibition would be a way around it.
 *
 * Globs are compiled once per policy object (literal names by hash lookup, `prefix*` by
 * `startsWith`, the rest by a linear-time wildcard matcher that cannot backtrack exponentially).
 */
import type { AlignmentCard } from "./schema/Card.js"
import type { Policy, UnmappedToolAction } from "./schema/Policy.js"
import type { PolicyEnforcementMode } from "./schema/Verdict.js"

export type PolicyVerdict = "pass" | "warn" | "fail"

export type PolicyFindingKind = "forbidden" | "card_forbidden" | "unmapped" | "unbounded" | "escalation"

export interface PolicyFinding {
  readonly tool: string
  readonly kind: PolicyFindingKind
  readonly reason: string
  /** On a violation turned warning because the tool is new: when its grace ends (RFC 3339). */
  readonly grace_until?: string
}

export interface PolicyEvaluation {
  /** `fail` with any violation, else `warn` with any warning, else `pass`. */
  readonly verdict: PolicyVerdict
  readonly violations: ReadonlyArray<PolicyFinding>
  readonly warnings: ReadonlyArray<PolicyFinding>
  /** Distinct tool names evaluated. */
  readonly tools_evaluated: number
}

// ---------------------------------------------------------------------------------------------
// Globs

/** `*` any run of characters, `?` one, in O(pattern × name) at worst (greedy with one backtrack point). */
const wildcardMatch = (pattern: string, name: string): boolean => {
  let p = 0
  let n = 0
  let star = -1
  let mark = 0
  while (n < name.length) {
    const c = pattern.charCodeAt(p)
    if (p < pattern.length && (c === 63 /* ? */ || c === name.charCodeAt(n))) {
      p++
      n++
    } else if (p < pattern.length && c === 42 /* * */) {
      star = p++
      mark = n
    } else if (star >= 0) {
      p = star + 1
      n = ++mark
    } else {
      return false
    }
  }
  while (pattern.charCodeAt(p) === 42) p++
  return p === pattern.length
}

/** One glob as the cheapest test that decides it. */
export const globMatcher = (pattern: string): ((name: string) => boolean) => {
  const firstWildcard = pattern.search(/[*?]/)
  if (firstWildcard < 0) return (name) => name === pattern
  if (firstWildcard === pattern.length - 1 && pattern.endsWith("*")) {
    const prefix = pattern.slice(0, -1)
    return (name) => name.startsWith(prefix)
  }
  return (name) => wildcardMatch(pattern, name)
}

/** Rules with a tool pattern, split into exact names (one lookup) and patterns (one test each). */
interface RuleIndex<R> {
  readonly exact: ReadonlyMap<string, ReadonlyArray<readonly [number, R]>>
  readonly patterns: ReadonlyArray<readonly [number, (name: string) => boolean, R]>
}

const indexRules = <R extends { readonly tool: string }>(rules: ReadonlyArray<R>): RuleIndex<R> => {
  const exact = new Map<string, Array<readonly [number, R]>>()
  const patterns: Array<readonly [number, (name: string) => boolean, R]> = []
  rules.forEach((rule, i) => {
    if (/[*?]/.test(rule.tool)) patterns.push([i, globMatcher(rule.tool), rule])
    else {
      const list = exact.get(rule.tool)
      if (list === undefined) exact.set(rule.tool, [[i, rule]])
      else list.push([i, rule])
    }
  })
  return { exact, patterns }
}

/** The rules matching `name`, in the policy's order. */
const matching = <R>(index: RuleIndex<R>, name: string): ReadonlyArray<R> => {
  const exact = index.exact.get(name)
  let hits: Array<readonly [number, R]> | undefined
  for (const [i, test, rule] of index.patterns) {
    if (test(name)) (hits ??= []).push([i, rule])
  }
  if (hits === undefined) return exact === undefined ? [] : exact.map(([, rule]) => rule)
  if (exact !== undefined) hits.push(...exact)
  return hits.sort(([a], [b]) => a - b).map(([, rule]) => rule)
}

interface CompiledPolicy {
  readonly forbidden: RuleIndex<Policy["forbidden"][number]>
  readonly mappings: RuleIndex<Policy["capability_mappings"][number]>
  readonly escalations: RuleIndex<Policy["escalation_triggers"][number]>
}

const compiledPolicies = new WeakMap<Policy, CompiledPolicy>()

/** Memoised per policy object: the gateway evaluates one agent's policy object on every request. */
export const compilePolicy = (policy: Policy): CompiledPolicy => {
  let compiled = compiledPolicies.get(policy)
  if (compiled === undefined) {
    compiled = {
      forbidden: indexRules(policy.forbidden),
      mappings: indexRules(policy.capability_mappings),
      escalations: indexRules(policy.escalation_triggers)
    }
    compiledPolicies.set(policy, compiled)
  }
  return compiled
}

interface CardActions {
  readonly bounded: ReadonlySet<string>
  readonly forbidden: ReadonlySet<string>
}

const cardActionSets = new WeakMap<AlignmentCard, CardActions>()

const cardActions = (card: AlignmentCard): CardActions => {
  let actions = cardActionSets.get(card)
  if (actions === undefined) {
    const envelope = card.autonomy_envelope
    actions = { bounded: new Set(envelope.bounded_actions), forbidden: new Set(envelope.forbidden_actions ?? []) }
    cardActionSets.set(card, actions)
  }
  return actions
}

// ---------------------------------------------------------------------------------------------
// Evaluation

const HOUR_MS = 3_600_000

const quoteList = (actions: ReadonlyArray<string>): string => actions.map((a) => JSON.stringify(a)).join(", ")

export const evaluatePolicy = (
  policy: Policy,
  card: AlignmentCard | undefined,
  tools: ReadonlyArray<{ readonly name: string }>,
  firstSeen: (tool: string) => Date | undefined,
  now: Date
): PolicyEvaluation => {
  const compiled = compilePolicy(policy)
  const envelope = card === undefined ? undefined : cardActions(card)
  const { grace_period_hours, unmapped_tool_action } = policy.defaults
  const graceMs = grace_period_hours * HOUR_MS
  const violations: Array<PolicyFinding> = []
  const warnings: Array<PolicyFinding> = []
  const seen = new Set<string>()

  /** A finding the policy leaves to `unmapped_tool_action`, with the new-tool grace. */
  const gap = (finding: PolicyFinding, action: UnmappedToolAction) => {
    if (action === "allow") return
    if (action === "warn") return void warnings.push(finding)
    const first = firstSeen(finding.tool)?.getTime() ?? now.getTime() // never seen: it is new now
    if (graceMs > 0 && now.getTime() - first < graceMs) {
      warnings.push({ ...finding, grace_until: new Date(first + graceMs).toISOString() })
    } else {
      violations.push(finding)
    }
  }

  for (const { name } of tools) {
    if (seen.has(name)) continue
    seen.add(name)
    const forbidden = matching(compiled.forbidden, name)
    if (forbidden.length > 0) {
      for (const rule of forbidden) violations.push({ tool: name, kind: "forbidden", reason: rule.reason })
    } else {
      const actions = [...new Set(matching(compiled.mappings, name).map((m) => m.action))]
      const cardForbidden = envelope === undefined ? [] : actions.filter((a) => envelope.forbidden.has(a))
      if (cardForbidden.length > 0) {
        violations.push({
          tool: name,
          kind: "card_forbidden",
          reason: `maps to card action ${quoteList(cardForbidden)}, which the card forbids`
        })
      } else if (actions.length === 0) {
        gap({ tool: name, kind: "unmapped", reason: "no capability mapping covers this tool" }, unmapped_tool_action)
      } else if (envelope !== undefined && !actions.some((a) => envelope.bounded.has(a))) {
        gap(
          {
            tool: name,
            kind: "unbounded",
            reason: `maps to card action ${quoteList(actions)}, which the card does not bound`
          },
          unmapped_tool_action
        )
      }
    }
    for (const rule of matching(compiled.escalations, name))
      warnings.push({ tool: name, kind: "escalation", reason: rule.reason })
  }

  return {
    verdict: violations.length > 0 ? "fail" : warnings.length > 0 ? "warn" : "pass",
    violations,
    warnings,
    tools_evaluated: seen.size
  }
}

/**
 * The verdict after the mode is applied, as `X-Policy-Verdict` reports it: in `enforce` a `fail`
 * is blocked and stays `fail`; in `warn` nothing is blocked, so a `fail` goes through as `warn`
 * (the evaluation itself, with its violations, is recorded unchanged).
 */
export const appliedVerdict = (verdict: PolicyVerdict, mode: PolicyEnforcementMode): PolicyVerdict =>
  mode === "enforce" || verdict !== "fail" ? verdict : "warn"

/** Whether a policy asks for evaluation at all: set, and not `off`. */
export const isPolicyActive = (policy: Policy | undefined): policy is Policy =>
  policy !== undefined && policy.defaults.enforcement_mode !== "off"

// ---------------------------------------------------------------------------------------------
// Merge

const MODE_STRICTNESS: Readonly<Record<PolicyEnforcementMode, number>> = { off: 0, warn: 1, enforce: 2 }
const UNMAPPED_STRICTNESS: Readonly<Record<UnmappedToolAction, number>> = { allow: 0, warn: 1, deny: 2 }

/** The rules of both, the organization's first; a later rule identical in `key` to an earlier one is dropped. */
const union = <R>(first: ReadonlyArray<R>, second: ReadonlyArray<R>, key: (rule: R) => string): ReadonlyArray<R> => {
  const keys = new Set<string>()
  const out: Array<R> = []
  for (const rule of [...first, ...second]) {
    const k = key(rule)
    if (keys.has(k)) continue
    keys.add(k)
    out.push(rule)
  }
  return out
}

/**
 * An organization's policy and an agent's, merged: the union of mappings, forbidden rules and
 * escalation triggers (the agent can add, never remove), and each default at the stricter of the
 * two (the organization's defaults are a floor): the stricter mode (off < warn < enforce), the
 * stricter unmapped action (allow < warn < deny), the shorter grace.
 */
export const mergePolicies = (org: Policy, agent: Policy): Policy => {
  const a = org.defaults
  const b = agent.defaults
  return {
    capability_mappings: union(org.capability_mappings, agent.capability_mappings, (m) => `${m.tool}\0${m.action}`),
    forbidden: union(org.forbidden, agent.forbidden, (f) => f.tool),
    escalation_triggers: union(org.escalation_triggers, agent.escalation_triggers, (e) => e.tool),
    defaults: {
      enforcement_mode:
        MODE_STRICTNESS[b.enforcement_mode] > MODE_STRICTNESS[a.enforcement_mode]
          ? b.enforcement_mode
          : a.enforcement_mode,
      unmapped_tool_action:
        UNMAPPED_STRICTNESS[b.unmapped_tool_action] > UNMAPPED_STRICTNESS[a.unmapped_tool_action]
          ? b.unmapped_tool_action
          : a.unmapped_tool_action,
      grace_period_hours: Math.min(a.grace_period_hours, b.grace_period_hours)
    }
  }
}
