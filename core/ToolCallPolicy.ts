/**
 * The tool policy on one tool call with its arguments (issue 28: the MCP gateway's `tools/call`):
 * the call's tool name against the policy as any declared tool is (`core/Policy.ts`: forbidden
 * patterns, capability mappings, escalation triggers, unmapped defaults, grace), then the policy's
 * `argument_conditions` against its arguments. Pure: the clock and the first sightings are arguments.
 *
 * An argument condition applies when its `tool` glob matches the call's name; the argument named
 * must then be present and satisfy every bound the condition gives, else a violation of type
 * `argument` at the condition's severity. Arguments are never quoted in a finding (they may hold
 * anything the agent sent): the finding names the tool, the argument and the condition's reason.
 * Globs are compiled once per policy object; a glob over a value is linear in the value's length
 * (core/GlobSet.ts), and values longer than `MAX_MATCHED_VALUE` are a violation without a match.
 */
import { GlobSet } from "./GlobSet.js"
import {
  evaluatePolicy,
  MAX_LISTED_FINDINGS,
  type PolicyEvaluation,
  type PolicyFinding,
  policyVerdict
} from "./Policy.js"
import type { AlignmentCard } from "./schema/Card.js"
import type { ArgumentCondition, Policy } from "./schema/Policy.js"

/** String values longer than this are not matched against a glob: the condition fails (a violation). */
export const MAX_MATCHED_VALUE = 64 * 1024

interface CompiledConditions {
  readonly tools: GlobSet
  readonly values: ReadonlyArray<GlobSet | undefined>
}

const compiled = new WeakMap<ReadonlyArray<ArgumentCondition>, CompiledConditions>()

const compile = (conditions: ReadonlyArray<ArgumentCondition>): CompiledConditions => {
  let entry = compiled.get(conditions)
  if (entry === undefined) {
    entry = {
      tools: new GlobSet(conditions.map((c) => c.tool)),
      values: conditions.map((c) => (c.matches === undefined ? undefined : new GlobSet([c.matches])))
    }
    compiled.set(conditions, entry)
  }
  return entry
}

/** What breaks the condition in `value` (a short phrase, never the value), or undefined when it holds. */
const broken = (condition: ArgumentCondition, glob: GlobSet | undefined, value: unknown): string | undefined => {
  if (value === undefined) return "is missing"
  const stringBound = condition.matches !== undefined || condition.max_length !== undefined
  const numberBound = condition.min !== undefined || condition.max !== undefined
  if (stringBound) {
    if (typeof value !== "string") return "is not a string"
    if (condition.max_length !== undefined && value.length > condition.max_length)
      return `is longer than ${condition.max_length} characters`
    if (glob !== undefined && (value.length > MAX_MATCHED_VALUE || glob.match(value).length === 0))
      return `does not match ${condition.matches}`
  }
  if (numberBound) {
    if (typeof value !== "number" || !Number.isFinite(value)) return "is not a number"
    if (condition.min !== undefined && value < condition.min) return `is below ${condition.min}`
    if (condition.max !== undefined && value > condition.max) return `is above ${condition.max}`
  }
  return undefined
}

/** The argument conditions' violations for one call, in the policy's order. */
export const argumentFindings = (policy: Policy, tool: string, args: unknown): ReadonlyArray<PolicyFinding> => {
  const conditions = policy.argument_conditions
  if (conditions === undefined || conditions.length === 0) return []
  const { tools, values } = compile(conditions)
  const matched = tools.match(tool)
  if (matched.length === 0) return []
  const record: Readonly<Record<string, unknown>> =
    typeof args === "object" && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : {}
  const findings: Array<PolicyFinding> = []
  for (const index of [...new Set(matched)].sort((a, b) => a - b)) {
    const condition = conditions[index]!
    const value = Object.prototype.hasOwnProperty.call(record, condition.argument)
      ? record[condition.argument]
      : undefined
    const why = broken(condition, values[index], value)
    if (why !== undefined)
      findings.push({
        type: "argument",
        tool,
        reason: `argument ${condition.argument} ${why}: ${condition.reason}`,
        severity: condition.severity
      })
  }
  return findings
}

/**
 * The whole evaluation of some calls: their tools as declared tools, then their arguments (the MCP
 * gateway's one `tools/call`; the tool calls of an LLM answer).
 */
export const evaluateToolCalls = (
  policy: Policy,
  card: AlignmentCard | undefined,
  calls: ReadonlyArray<{ readonly name: string; readonly arguments?: unknown }>,
  firstSeen: (tool: string) => Date | undefined,
  now: Date
): PolicyEvaluation => {
  const byName = evaluatePolicy(policy, card, calls, firstSeen, now)
  const found = calls.flatMap((call) => argumentFindings(policy, call.name, call.arguments))
  if (found.length === 0) return byName
  const all = [...byName.violations, ...found]
  const violations = all.slice(0, MAX_LISTED_FINDINGS)
  const omitted = (byName.findings_omitted ?? 0) + all.length - violations.length
  return {
    // Over the whole list: a finding past the listed ones still counts for the verdict.
    verdict: byName.verdict === "fail" ? "fail" : policyVerdict(all, byName.warnings),
    violations,
    warnings: byName.warnings,
    tools_evaluated: byName.tools_evaluated,
    ...(omitted > 0 ? { findings_omitted: omitted } : {})
  }
}

/** One call (the MCP gateway's `tools/call`). */
export const evaluateToolCall = (
  policy: Policy,
  card: AlignmentCard | undefined,
  tool: string,
  args: unknown,
  firstSeen: (tool: string) => Date | undefined,
  now: Date
): PolicyEvaluation => evaluateToolCalls(policy, card, [{ name: tool, arguments: args }], firstSeen, now)
