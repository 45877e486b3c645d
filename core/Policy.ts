/**
 * Tool policy evaluation: the tools a request declares (or a response calls) against the agent's
 * policy (`core/schema/Policy.ts`, the CLPI DSL) and Alignment Card. Pure and deterministic: the
 * clock and the "first seen" memory are arguments, and the findings come out in the order the
 * tools came in.
 *
 * Per distinct tool name:
 * 1. every `forbidden` rule that matches → a violation (`forbidden`) at the rule's severity; all of
 *    them are reported, not only the first;
 * 2. otherwise, the actions of every capability mapping that covers it: with a card, one the card
 *    forbids (`autonomy_envelope.forbidden_actions`) → violation `card_forbidden` (high); one the
 *    card does not bound (`bounded_actions`) → violation `capability_exceeded` (high);
 * 3. no mapping covers it → `defaults.unmapped_tool_action`: allow (nothing), warn (a warning
 *    `unmapped`), deny (a violation `unmapped_denied` at `defaults.unmapped_severity`);
 * 4. every escalation trigger whose `tool_matches` glob matches: `deny` → violation `escalation`
 *    (high); `escalate` and `warn` → warning `escalation` (medium).
 *
 * Verdict: `fail` when a violation is critical or high, else `warn` when there is any violation or
 * warning, else `pass`.
 *
 * Grace: an `unmapped_denied` violation for a tool first seen less than `grace_period_hours` ago is
 * a warning instead (with `grace_until`), so a new tool has time to be mapped. Nothing the policy
 * names gets grace (forbidden rules, mapped tools, triggers): someone named those tools, and agent
 * identities are cheap (a new `x-candor-agent` name is a new agent with no history), so grace on an
 * explicit rule would be a way around it.
 *
 * Globs are compiled once per policy object (literal names by hash lookup, `prefix*` by
 * `startsWith`, the rest by a linear-time wildcard matcher that cannot backtrack exponentially).
 */
import { tryCanonicalJson } from "./Canonical.js"
import type { AlignmentCard } from "./schema/Card.js"
import { severityRank } from "./schema/Concern.js"
import {
  type CapabilityMapping,
  type ForbiddenRule,
  type Policy,
  type PolicyEscalationTrigger,
  type PolicyFinding,
  type PolicyMeta,
  type PolicySeverity,
  type PolicyVerdict,
  triggerGlob,
  type UnmappedToolAction
} from "./schema/Policy.js"
import type { PolicyEnforcementMode } from "./schema/Verdict.js"

export type { PolicyFinding, PolicyFindingType, PolicyVerdict } from "./schema/Policy.js"

export interface PolicyEvaluation {
  /** `fail` with a critical or high violation, else `warn` with any finding, else `pass`. */
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

/** Rules under one or more globs each, split into exact names (one lookup) and patterns (one test each). */
interface RuleIndex<R> {
  readonly exact: ReadonlyMap<string, ReadonlyArray<readonly [number, R]>>
  readonly patterns: ReadonlyArray<readonly [number, (name: string) => boolean, R]>
}

const indexRules = <R>(rules: ReadonlyArray<R>, globs: (rule: R) => ReadonlyArray<string>): RuleIndex<R> => {
  const exact = new Map<string, Array<readonly [number, R]>>()
  const patterns: Array<readonly [number, (name: string) => boolean, R]> = []
  rules.forEach((rule, i) => {
    for (const glob of globs(rule)) {
      if (/[*?]/.test(glob)) patterns.push([i, globMatcher(glob), rule])
      else {
        const list = exact.get(glob)
        if (list === undefined) exact.set(glob, [[i, rule]])
        else list.push([i, rule])
      }
    }
  })
  return { exact, patterns }
}

/** The rules matching `name`, each once, in the policy's order. */
const matching = <R>(index: RuleIndex<R>, name: string): ReadonlyArray<R> => {
  const exact = index.exact.get(name)
  let hits: Array<readonly [number, R]> | undefined
  for (const [i, test, rule] of index.patterns) {
    if (test(name)) (hits ??= []).push([i, rule])
  }
  if (hits === undefined) {
    if (exact === undefined) return []
    if (exact.length === 1) return [exact[0]![1]]
    hits = [...exact]
  } else if (exact !== undefined) hits.push(...exact)
  hits.sort(([a], [b]) => a - b)
  const out: Array<R> = []
  let last = -1
  for (const [i, rule] of hits) {
    if (i !== last) out.push(rule)
    last = i
  }
  return out
}

interface CompiledPolicy {
  readonly forbidden: RuleIndex<ForbiddenRule>
  readonly mappings: RuleIndex<CapabilityMapping>
  readonly triggers: RuleIndex<PolicyEscalationTrigger>
}

const compiledPolicies = new WeakMap<Policy, CompiledPolicy>()

/** Memoised per policy object: the gateway evaluates one agent's policy object on every request. */
export const compilePolicy = (policy: Policy): CompiledPolicy => {
  let compiled = compiledPolicies.get(policy)
  if (compiled === undefined) {
    compiled = {
      forbidden: indexRules(policy.forbidden, (rule) => [rule.pattern]),
      mappings: indexRules(Object.values(policy.capability_mappings), (mapping) => mapping.tools),
      // A decoded policy's conditions always parse; anything else matches nothing.
      triggers: indexRules(policy.escalation_triggers, (trigger) => {
        const glob = triggerGlob(trigger.condition)
        return glob === undefined ? [] : [glob]
      })
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

/** High and critical violations fail the verdict; low and medium ones only warn. */
export const isBlocking = (severity: PolicySeverity): boolean => severity === "high" || severity === "critical"

export const policyVerdict = (
  violations: ReadonlyArray<PolicyFinding>,
  warnings: ReadonlyArray<PolicyFinding>
): PolicyVerdict =>
  violations.some((v) => isBlocking(v.severity))
    ? "fail"
    : violations.length > 0 || warnings.length > 0
      ? "warn"
      : "pass"

export const evaluatePolicy = (
  policy: Policy,
  card: AlignmentCard | undefined,
  tools: ReadonlyArray<{ readonly name: string }>,
  firstSeen: (tool: string) => Date | undefined,
  now: Date
): PolicyEvaluation => {
  const compiled = compilePolicy(policy)
  const envelope = card === undefined ? undefined : cardActions(card)
  const { grace_period_hours, unmapped_tool_action, unmapped_severity } = policy.defaults
  const graceMs = grace_period_hours * HOUR_MS
  const violations: Array<PolicyFinding> = []
  const warnings: Array<PolicyFinding> = []
  const seen = new Set<string>()

  /** An unmapped tool, by `unmapped_tool_action`; a denial gets the new-tool grace. */
  const unmapped = (tool: string, action: UnmappedToolAction) => {
    if (action === "allow") return
    const reason = "no capability mapping covers this tool"
    if (action === "warn") return void warnings.push({ type: "unmapped", tool, reason, severity: unmapped_severity })
    const finding: PolicyFinding = { type: "unmapped_denied", tool, reason, severity: unmapped_severity }
    const first = firstSeen(tool)?.getTime() ?? now.getTime() // never seen: it is new now
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
      for (const rule of forbidden) {
        violations.push({ type: "forbidden", tool: name, reason: rule.reason, severity: rule.severity })
      }
    } else {
      const mappings = matching(compiled.mappings, name)
      if (mappings.length === 0) unmapped(name, unmapped_tool_action)
      else if (envelope !== undefined) {
        const actions = [...new Set(mappings.flatMap((m) => m.card_actions))]
        const cardForbidden = actions.filter((a) => envelope.forbidden.has(a))
        const unbounded = actions.filter((a) => !envelope.bounded.has(a))
        if (cardForbidden.length > 0) {
          violations.push({
            type: "card_forbidden",
            tool: name,
            reason: `maps to card action ${quoteList(cardForbidden)}, which the card forbids`,
            severity: "high"
          })
        } else if (unbounded.length > 0) {
          violations.push({
            type: "capability_exceeded",
            tool: name,
            reason: `maps to card action ${quoteList(unbounded)}, which the card's bounded_actions do not include`,
            severity: "high"
          })
        }
      }
    }
    for (const trigger of matching(compiled.triggers, name)) {
      if (trigger.action === "deny") {
        violations.push({ type: "escalation", tool: name, reason: trigger.reason, severity: "high" })
      } else {
        warnings.push({ type: "escalation", tool: name, reason: trigger.reason, severity: "medium" })
      }
    }
  }

  return { verdict: policyVerdict(violations, warnings), violations, warnings, tools_evaluated: seen.size }
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

const stricter = <A>(a: A, b: A, rank: (value: A) => number): A => (rank(b) > rank(a) ? b : a)

/** The rules of both, the organization's first; a rule identical to an earlier one (every member) is kept once. */
/** Equal JSON, whatever the member order. */
const jsonKey = (value: unknown): string => tryCanonicalJson(value) ?? JSON.stringify(value)

const union = <R>(first: ReadonlyArray<R>, second: ReadonlyArray<R>): ReadonlyArray<R> => {
  const keys = new Set<string>()
  const out: Array<R> = []
  for (const rule of [...first, ...second]) {
    const key = jsonKey(rule)
    if (keys.has(key)) continue
    keys.add(key)
    out.push(rule)
  }
  return out
}

/** The organization's mappings as they are, then the agent's; one whose name is taken keeps it under `agent:<name>`. */
const mergeMappings = (org: Policy["capability_mappings"], agent: Policy["capability_mappings"]) => {
  const out: Record<string, CapabilityMapping> = { ...org }
  for (const [name, mapping] of Object.entries(agent)) {
    const taken = out[name]
    if (taken === undefined) {
      out[name] = mapping
      continue
    }
    if (jsonKey(taken) === jsonKey(mapping)) continue
    let key = `agent:${name}`
    for (let n = 2; out[key] !== undefined; n++) key = `agent:${name}#${n}`
    out[key] = mapping
  }
  return out
}

/**
 * An organization's policy and an agent's, merged with the organization as a floor (`org_floor`):
 * - capability mappings: the organization's, then the agent's; an agent mapping whose name the
 *   organization already uses does not replace it (that could remap a tool away from an action the
 *   card forbids), it is added as `agent:<name>`, so a tool both cover gets the actions of both;
 * - forbidden rules and escalation triggers: both lists, the organization's first (identical rules once);
 * - each default at the stricter of the two: mode off < warn < enforce, unmapped action
 *   allow < warn < deny, the higher unmapped severity, `fail_open` only when both allow it, the
 *   shorter grace;
 * - `meta`: the agent's (the organization's when the agent's has no name), with scope `agent`.
 */
export const mergePolicies = (org: Policy, agent: Policy): Policy => {
  const a = org.defaults
  const b = agent.defaults
  const source = agent.meta.name !== undefined || org.meta.name === undefined ? agent.meta : org.meta
  const meta: PolicyMeta = { ...source, scope: "agent" }
  return {
    meta,
    capability_mappings: mergeMappings(org.capability_mappings, agent.capability_mappings),
    forbidden: union(org.forbidden, agent.forbidden),
    escalation_triggers: union(org.escalation_triggers, agent.escalation_triggers),
    defaults: {
      unmapped_tool_action: stricter(a.unmapped_tool_action, b.unmapped_tool_action, (x) => UNMAPPED_STRICTNESS[x]),
      unmapped_severity: stricter(a.unmapped_severity, b.unmapped_severity, severityRank),
      fail_open: a.fail_open && b.fail_open,
      enforcement_mode: stricter(a.enforcement_mode, b.enforcement_mode, (x) => MODE_STRICTNESS[x]),
      grace_period_hours: Math.min(a.grace_period_hours, b.grace_period_hours)
    }
  }
}

/** The policy in force for an agent: the merge of both, either one alone, or none. */
export const resolvePolicy = (org: Policy | undefined, agent: Policy | undefined): Policy | undefined =>
  org === undefined ? agent : agent === undefined ? org : mergePolicies(org, agent)
