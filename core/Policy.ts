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
 *    (high); `escalate` and `warn` → warning `escalation` (medium); `approve` (human approval, which
 *    only an MCP call can wait for: core/Approval.ts) → as `deny` under an enforcing policy and as
 *    `escalate` otherwise, the rule of the LLM path, where an answer cannot wait for a person.
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
 * Each list of findings holds at most `MAX_LISTED_FINDINGS`; the rest are counted in
 * `findings_omitted` and still count for the verdict.
 *
 * Globs are compiled once per policy object into one `GlobSet` (core/GlobSet.ts: literal names by
 * hash lookup, `prefix*` and `*suffix` by trie walks, the rest by a bit-parallel simulation that
 * cannot backtrack), and names matched are remembered per policy object, so an agent's usual tools
 * cost O(name length) each; `policyEvaluator` does the work a budget of steps at a time.
 */
import { tryCanonicalJson } from "./Canonical.js"
import { type GlobCursor, GlobSet } from "./GlobSet.js"
import type { AlignmentCard } from "./schema/Card.js"
import { severityRank } from "./schema/Concern.js"
import {
  type ArgumentCondition,
  type CapabilityMapping,
  type Policy,
  type PolicyFinding,
  type PolicyFindingType,
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
  /** At most `MAX_LISTED_FINDINGS` each, in the order found. */
  readonly violations: ReadonlyArray<PolicyFinding>
  readonly warnings: ReadonlyArray<PolicyFinding>
  /** Distinct tool names evaluated. */
  readonly tools_evaluated: number
  /** Findings past `MAX_LISTED_FINDINGS` in either list, counted but not listed; absent when none. */
  readonly findings_omitted?: number
}

// ---------------------------------------------------------------------------------------------
// Globs

/** One glob as a test (compiled on each call: for a policy's many globs, `compilePolicy`). */
export const globMatcher = (pattern: string): ((name: string) => boolean) => {
  const set = new GlobSet([pattern])
  return (name) => set.match(name).length > 0
}

/** The rules of a policy one name matches, as indices into its lists, each once, ascending. */
export interface MatchedRules {
  readonly forbidden: ReadonlyArray<number>
  /** Into `Object.values(policy.capability_mappings)`. */
  readonly mappings: ReadonlyArray<number>
  readonly triggers: ReadonlyArray<number>
}

const FORBIDDEN = 0
const MAPPING = 1
const TRIGGER = 2

interface CompiledPolicy {
  /** Every glob of the policy: forbidden patterns, then mapping tools, then trigger globs. */
  readonly globs: GlobSet
  /** Per glob id, the list it belongs to and the rule's index there. */
  readonly list: Uint8Array
  readonly rule: Int32Array
  readonly mappings: ReadonlyArray<CapabilityMapping>
  /** Names already matched, oldest first; bounded by `MEMO_CAPACITY`. */
  readonly memo: Map<string, MatchedRules>
}

/**
 * Names remembered per policy object (the oldest goes first when it is full): an agent offers the
 * same tools on every request, so each name costs its match once, then a lookup. A request's worth
 * of tools at the gateway's cap, and more; kept with the policy object (one agent's), so no
 * tenant's names push out another's.
 */
const MEMO_CAPACITY = 1024
/** A lookup in that memory, in steps (core/GlobSet.ts): hashing the name is not free. */
const MEMO_STEPS = 8

const compiledPolicies = new WeakMap<Policy, CompiledPolicy>()

/** Compiled once per policy object: the gateway evaluates one agent's policy object on every request. */
const compilePolicy = (policy: Policy): CompiledPolicy => {
  let compiled = compiledPolicies.get(policy)
  if (compiled === undefined) {
    const globs: Array<string> = []
    const list: Array<number> = []
    const rule: Array<number> = []
    const add = (glob: string, kind: number, index: number) => {
      globs.push(glob)
      list.push(kind)
      rule.push(index)
    }
    policy.forbidden.forEach((forbidden, i) => add(forbidden.pattern, FORBIDDEN, i))
    const mappings = Object.values(policy.capability_mappings)
    mappings.forEach((mapping, i) => mapping.tools.forEach((glob) => add(glob, MAPPING, i)))
    policy.escalation_triggers.forEach((trigger, i) => {
      // A decoded policy's conditions always parse; anything else matches nothing.
      const glob = triggerGlob(trigger.condition)
      if (glob !== undefined) add(glob, TRIGGER, i)
    })
    compiled = {
      globs: new GlobSet(globs),
      list: Uint8Array.from(list),
      rule: Int32Array.from(rule),
      mappings,
      memo: new Map()
    }
    compiledPolicies.set(policy, compiled)
  }
  return compiled
}

/** The glob ids a cursor found, as rule indices per list (a mapping with several matching globs once). */
const rulesOf = (compiled: CompiledPolicy, ids: ReadonlyArray<number>): MatchedRules => {
  const lists: [Array<number>, Array<number>, Array<number>] = [[], [], []]
  for (const id of ids) {
    const target = lists[compiled.list[id]!]!
    const index = compiled.rule[id]!
    if (target[target.length - 1] !== index) target.push(index)
  }
  return { forbidden: lists[FORBIDDEN], mappings: lists[MAPPING], triggers: lists[TRIGGER] }
}

const remember = (compiled: CompiledPolicy, name: string, rules: MatchedRules) => {
  const memo = compiled.memo
  if (memo.size >= MEMO_CAPACITY) memo.delete(memo.keys().next().value!)
  memo.set(name, rules)
}

/** The rules `name` matches, in the policy's order (whatever it costs: the gateway's request path uses `policyEvaluator`). */
export const matchingRules = (policy: Policy, name: string): MatchedRules => {
  const compiled = compilePolicy(policy)
  const known = compiled.memo.get(name)
  if (known !== undefined) return known
  const cursor = compiled.globs.start(name)
  cursor.run(Number.POSITIVE_INFINITY)
  const rules = rulesOf(compiled, cursor.ids())
  remember(compiled, name, rules)
  return rules
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

/**
 * Findings listed per list (violations, warnings) of one evaluation; the rest are counted in
 * `findings_omitted` and still decide the verdict. A request at the gateway's caps (512 tools)
 * against 1,000 rules that all match could otherwise list 512,000 findings in one 403 body and event.
 */
export const MAX_LISTED_FINDINGS = 256

/** What a finding weighs in steps (an object and a few checks: several glob steps' time). */
const FINDING_STEPS = 8

/** Actions quoted in one finding's reason; more are counted ("and 3 more"), so a finding stays small. */
const QUOTED_ACTIONS = 8

const quoteList = (actions: ReadonlyArray<string>): string => {
  const quoted = actions
    .slice(0, QUOTED_ACTIONS)
    .map((a) => JSON.stringify(a))
    .join(", ")
  return actions.length > QUOTED_ACTIONS ? `${quoted} and ${actions.length - QUOTED_ACTIONS} more` : quoted
}

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

/** An evaluation in progress, done a budget of steps at a time (see core/GlobSet.ts for what a step is). */
export interface PolicyEvaluator {
  /** Evaluates further, about `budget` steps (at least one tool's worth of progress); the evaluation once done. */
  readonly run: (budget: number) => PolicyEvaluation | undefined
  /** Steps spent so far. */
  readonly steps: () => number
}

/**
 * `evaluatePolicy`, resumable: the gateway runs a small budget synchronously and spreads the rest of
 * a costly evaluation over turns of its event loop (adapters/gateway/PolicySlices.ts). Names already
 * matched against this policy object cost a lookup.
 */
export const policyEvaluator = (
  policy: Policy,
  card: AlignmentCard | undefined,
  tools: ReadonlyArray<{ readonly name: string }>,
  firstSeen: (tool: string) => Date | undefined,
  now: Date
): PolicyEvaluator => {
  const compiled = compilePolicy(policy)
  const envelope = card === undefined ? undefined : cardActions(card)
  const { grace_period_hours, unmapped_tool_action, unmapped_severity } = policy.defaults
  const graceMs = grace_period_hours * HOUR_MS
  const approveDenies = policy.defaults.enforcement_mode === "enforce"
  const violations: Array<PolicyFinding> = []
  const warnings: Array<PolicyFinding> = []
  let omitted = 0
  let blocking = false
  let findings = 0
  const seen = new Set<string>()
  let spent = 0
  let next = 0
  let cursor: GlobCursor | undefined
  let counted = 0
  let result: PolicyEvaluation | undefined

  /**
   * A finding, counted for the verdict and listed while its list has room. Findings are costlier than
   * a glob test (an object each), so they weigh `FINDING_STEPS`.
   */
  const violation = (type: PolicyFindingType, tool: string, reason: string, severity: PolicySeverity) => {
    findings++
    spent += FINDING_STEPS
    if (isBlocking(severity)) blocking = true
    if (violations.length < MAX_LISTED_FINDINGS) violations.push({ type, tool, reason, severity })
    else omitted++
  }
  const warning = (finding: PolicyFinding) => {
    findings++
    spent += FINDING_STEPS
    if (warnings.length < MAX_LISTED_FINDINGS) warnings.push(finding)
    else omitted++
  }

  /** An unmapped tool, by `unmapped_tool_action`; a denial gets the new-tool grace. */
  const unmapped = (tool: string, action: UnmappedToolAction) => {
    if (action === "allow") return
    const reason = "no capability mapping covers this tool"
    if (action === "warn") return warning({ type: "unmapped", tool, reason, severity: unmapped_severity })
    const first = firstSeen(tool)?.getTime() ?? now.getTime() // never seen: it is new now
    if (graceMs > 0 && now.getTime() - first < graceMs) {
      const grace_until = new Date(first + graceMs).toISOString()
      warning({ type: "unmapped_denied", tool, reason, severity: unmapped_severity, grace_until })
    } else {
      violation("unmapped_denied", tool, reason, unmapped_severity)
    }
  }

  /**
   * Findings that cannot be listed (their lists are full) once the verdict is already `fail`: counted
   * at once, nothing built, so a name matching hundreds of rules costs one step past the cap.
   */
  const settled = (count: number, lists: ReadonlyArray<ReadonlyArray<PolicyFinding>>): boolean => {
    if (!blocking || lists.some((list) => list.length < MAX_LISTED_FINDINGS)) return false
    findings += count
    omitted += count
    spent++
    return true
  }

  const findingsOf = (name: string, rules: MatchedRules) => {
    if (rules.forbidden.length > 0) {
      if (!settled(rules.forbidden.length, [violations]))
        for (const i of rules.forbidden) {
          const rule = policy.forbidden[i]!
          violation("forbidden", name, rule.reason, rule.severity)
        }
    } else if (rules.mappings.length === 0) unmapped(name, unmapped_tool_action)
    else if (envelope !== undefined) {
      const actions = new Set<string>()
      for (const i of rules.mappings) for (const action of compiled.mappings[i]!.card_actions) actions.add(action)
      spent += actions.size
      const cardForbidden = [...actions].filter((a) => envelope.forbidden.has(a))
      const unbounded = [...actions].filter((a) => !envelope.bounded.has(a))
      if (cardForbidden.length > 0) {
        violation(
          "card_forbidden",
          name,
          `maps to card action ${quoteList(cardForbidden)}, which the card forbids`,
          "high"
        )
      } else if (unbounded.length > 0) {
        violation(
          "capability_exceeded",
          name,
          `maps to card action ${quoteList(unbounded)}, which the card's bounded_actions do not include`,
          "high"
        )
      }
    }
    if (settled(rules.triggers.length, [violations, warnings])) return
    for (const i of rules.triggers) {
      const trigger = policy.escalation_triggers[i]!
      if (trigger.action === "deny" || (trigger.action === "approve" && approveDenies)) {
        violation("escalation", name, trigger.reason, "high")
      } else {
        warning({ type: "escalation", tool: name, reason: trigger.reason, severity: "medium" })
      }
    }
  }

  const run = (budget: number): PolicyEvaluation | undefined => {
    if (result !== undefined) return result
    const limit = spent + budget
    while (next < tools.length) {
      const name = tools[next]!.name
      let rules: MatchedRules | undefined
      if (cursor === undefined) {
        spent++
        if (seen.has(name)) {
          next++
          continue
        }
        rules = compiled.memo.get(name)
        spent += MEMO_STEPS
        if (rules === undefined) {
          cursor = compiled.globs.start(name)
          counted = 0
        }
      }
      if (cursor !== undefined) {
        cursor.run(limit - spent - (cursor.steps - counted))
        spent += cursor.steps - counted
        counted = cursor.steps
        if (!cursor.done) return undefined
        rules = rulesOf(compiled, cursor.ids())
        remember(compiled, name, rules)
        cursor = undefined
      }
      seen.add(name)
      findingsOf(name, rules!)
      next++
      if (spent >= limit && next < tools.length) return undefined
    }
    const verdict: PolicyVerdict = blocking ? "fail" : findings > 0 ? "warn" : "pass"
    result = { verdict, violations, warnings, tools_evaluated: seen.size }
    if (omitted > 0) result = { ...result, findings_omitted: omitted }
    return result
  }

  return { run, steps: () => spent }
}

export const evaluatePolicy = (
  policy: Policy,
  card: AlignmentCard | undefined,
  tools: ReadonlyArray<{ readonly name: string }>,
  firstSeen: (tool: string) => Date | undefined,
  now: Date
): PolicyEvaluation => policyEvaluator(policy, card, tools, firstSeen, now).run(Number.POSITIVE_INFINITY)!

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
// Limits

/**
 * Rules a stored policy may hold by default (`POLICY_MAX_RULES`): every forbidden rule, every
 * escalation trigger, and every tool glob and every card action of a capability mapping count one,
 * since each is work for every tool of every request. The policy in force for an agent merges its
 * organization's and its own, so it holds at most twice as many (a scoped transaction's own policy
 * adds at most as many again): each side is capped where it is written, and an organization's
 * policy never fails because of what its agents hold. The gateway's costs are measured at that size
 * (docs/benchmarks.md).
 */
export const DEFAULT_POLICY_MAX_RULES = 1000

/** Reasons are copied into every finding (403 bodies, events): as long as a mapping's description at most. */
export const MAX_RULE_REASON_LENGTH = 2000
/** Card actions are quoted in findings; no card names one longer. */
export const MAX_CARD_ACTION_LENGTH = 256

/** The rules of `policy`, as `DEFAULT_POLICY_MAX_RULES` counts them. */
export const policyRuleCount = (policy: Policy): number =>
  policy.forbidden.length +
  (policy.argument_conditions?.length ?? 0) +
  policy.escalation_triggers.length +
  Object.values(policy.capability_mappings).reduce((sum, m) => sum + m.tools.length + m.card_actions.length, 0)

/**
 * What makes `policy` larger than a policy may be stored (a sentence naming the limit), or
 * undefined. Checked where policies are written (the policy and transaction routes), not in the
 * schema: a stored policy from before a limit still decodes.
 */
export const policyOverLimits = (policy: Policy, maxRules: number): string | undefined => {
  const rules = policyRuleCount(policy)
  if (rules > maxRules) {
    return `the policy has ${rules} rules (forbidden rules, escalation triggers, and the tool globs and card actions of capability mappings); at most ${maxRules} are accepted (POLICY_MAX_RULES)`
  }
  const long = [...policy.forbidden, ...policy.escalation_triggers, ...(policy.argument_conditions ?? [])].findIndex(
    (rule) => rule.reason.length > MAX_RULE_REASON_LENGTH
  )
  if (long >= 0) return `a rule's reason must be at most ${MAX_RULE_REASON_LENGTH} characters`
  for (const mapping of Object.values(policy.capability_mappings)) {
    if (mapping.card_actions.some((action) => action.length > MAX_CARD_ACTION_LENGTH)) {
      return `a card action must be at most ${MAX_CARD_ACTION_LENGTH} characters`
    }
  }
  return undefined
}

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

/** `argument_conditions` only when there are any: a policy without keeps the form (and hash) it had before them. */
export const argumentConditionsOf = (
  conditions: ReadonlyArray<ArgumentCondition>
): { readonly argument_conditions?: ReadonlyArray<ArgumentCondition> } =>
  conditions.length === 0 ? {} : { argument_conditions: conditions }

/**
 * An organization's policy and an agent's, merged with the organization as a floor (`org_floor`):
 * - capability mappings: the organization's, then the agent's; an agent mapping whose name the
 *   organization already uses does not replace it (that could remap a tool away from an action the
 *   card forbids), it is added as `agent:<name>`, so a tool both cover gets the actions of both;
 * - forbidden rules, escalation triggers and argument conditions: both lists, the organization's first (identical rules once);
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
    ...argumentConditionsOf(union(org.argument_conditions ?? [], agent.argument_conditions ?? [])),
    defaults: {
      unmapped_tool_action: stricter(a.unmapped_tool_action, b.unmapped_tool_action, (x) => UNMAPPED_STRICTNESS[x]),
      unmapped_severity: stricter(a.unmapped_severity, b.unmapped_severity, severityRank),
      fail_open: a.fail_open && b.fail_open,
      enforcement_mode: stricter(a.enforcement_mode, b.enforcement_mode, (x) => MODE_STRICTNESS[x]),
      grace_period_hours: Math.min(a.grace_period_hours, b.grace_period_hours),
      ...shorterApprovalTimeout(a.approval_timeout_seconds, b.approval_timeout_seconds)
    }
  }
}

/** The shorter of two approval timeouts (a held call waits less); absent when neither policy sets one. */
const shorterApprovalTimeout = (a: number | undefined, b: number | undefined) => {
  const shorter = a === undefined ? b : b === undefined ? a : Math.min(a, b)
  return shorter === undefined ? {} : { approval_timeout_seconds: shorter }
}

/** The policy in force for an agent: the merge of both, either one alone, or none. */
export const resolvePolicy = (org: Policy | undefined, agent: Policy | undefined): Policy | undefined =>
  org === undefined ? agent : agent === undefined ? org : mergePolicies(org, agent)
