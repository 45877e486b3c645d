/**
 * Post-hoc verification of an AP-Trace against the agent's Alignment Card (AAP §7; reference
 * `verification/api.py` `verify_trace`). The `verification` member of the result is what an
 * AP-Trace stores (`{verified, violations}`, each violation type listed once); the full list, with
 * severities and the trace field at fault, and the warnings come beside it.
 *
 * Violations:
 * - `CARD_MISMATCH` (critical): the trace names a card other than the one it is verified against.
 *   A trace that names no card is verified against the card given and does not mismatch.
 * - `CARD_EXPIRED` (high): the card's `expires_at` had passed when the agent acted (the trace's
 *   `timestamp`, not the verification time, so a re-verification cannot expire an old decision).
 *   Offset-less times are UTC; a date without a time expires at the end of that day.
 * - `UNBOUNDED_ACTION` (high): an action of category `bounded` that no `bounded_actions` entry
 *   matches. Actions in `implicitActions` (default `respond`, the gateway's name for a plain answer
 *   with no tool call) are always bounded: answering is not an autonomous act.
 * - `FORBIDDEN_ACTION` (critical): a `forbidden_actions` entry matches the action, whatever its category.
 * - `MISSED_ESCALATION` (high): an escalation trigger's condition holds and the trace did not comply:
 *   an `escalate` trigger needs `escalation.required` (or an `escalate` action), a `deny` trigger a
 *   `deny` action (or `escalation.required`); `log` triggers only log and are never violated.
 * - `UNDECLARED_VALUE` (medium): a value in `decision.values_applied` that the card does not declare.
 *
 * Warnings: `near_boundary` (confidence or an alternative's score below 0.35), `escalation_timeout`,
 * `invalid_expiry`, `invalid_condition` (a trigger this evaluator cannot read; it never matches),
 * `low_behavioral_similarity` (when the caller passes a drift similarity below 0.50).
 *
 * Action names match card entries exactly or by glob, case-insensitively: `*` stands for any run
 * of characters (`delete_*`, `*_admin`, `*`); nothing else is special.
 *
 * Trigger conditions (AAP §4.6, the subset Mnemom's implementation supports and a little more):
 *   condition := or ; or := and ("or" | "||") and … ; and := not ("and" | "&&") not … ;
 *   not := ("not" | "!") not | "(" or ")" | "contains(" field "," value ")" | field op value | term
 *   op := > < >= <= == != contains matches
 * - A field is `action_type`, `action_name`, `action_category`, a path into the trace
 *   (`action.parameters.amount`, `context.environment.region`), or a bare name looked up in
 *   `context`, `context.environment`, `context.metadata`, `action.parameters`, then `action.target`.
 * - A value is a quoted string, a number, `true`, `false`, `null`, or a bare word (a string).
 * - String comparison is case-insensitive; `<`/`>` compare numbers (numeric strings count);
 *   `contains` is substring or array membership; `matches` is the glob above, not a regular
 *   expression (a card's pattern must not be able to stall verification). A comparison on a field
 *   the trace lacks is false, `!=` included.
 * - A term alone is true when it names a field whose value is truthy, or when it matches the action
 *   name (`delete_*`, `"transfer_funds"`): triggers may simply name actions.
 * - Conditions longer than 1024 characters are not evaluated (`invalid_condition`).
 */
import type { AlignmentCard } from "./schema/Card.js"
import type { Severity } from "./schema/Concern.js"
import type { APTraceDraft } from "./schema/Trace.js"

export const VIOLATION_TYPES = [
  "UNBOUNDED_ACTION",
  "FORBIDDEN_ACTION",
  "MISSED_ESCALATION",
  "UNDECLARED_VALUE",
  "CARD_EXPIRED",
  "CARD_MISMATCH"
] as const
export type ViolationType = (typeof VIOLATION_TYPES)[number]

export const VIOLATION_SEVERITY: Readonly<Record<ViolationType, Severity>> = {
  UNBOUNDED_ACTION: "high",
  FORBIDDEN_ACTION: "critical",
  MISSED_ESCALATION: "high",
  UNDECLARED_VALUE: "medium",
  CARD_EXPIRED: "high",
  CARD_MISMATCH: "critical"
}

export const NEAR_BOUNDARY_THRESHOLD = 0.35
export const BEHAVIORAL_SIMILARITY_THRESHOLD = 0.5
export const DEFAULT_IMPLICIT_ACTIONS: ReadonlyArray<string> = ["respond"]

export interface TraceViolation {
  readonly type: ViolationType
  readonly severity: Severity
  readonly description: string
  readonly trace_field: string | null
}

export interface TraceWarning {
  readonly type:
    "near_boundary" | "escalation_timeout" | "invalid_expiry" | "invalid_condition" | "low_behavioral_similarity"
  readonly description: string
  readonly trace_field: string | null
}

export interface TraceVerificationResult {
  /** What the AP-Trace stores: verified iff no violation; each violation type once, in check order. */
  readonly verification: { readonly verified: boolean; readonly violations: ReadonlyArray<ViolationType> }
  readonly violations: ReadonlyArray<TraceViolation>
  readonly warnings: ReadonlyArray<TraceWarning>
  readonly checks_performed: ReadonlyArray<string>
}

export interface VerifyTraceOptions {
  /** Action names that are bounded whatever the card says (default `respond`). */
  readonly implicitActions?: ReadonlyArray<string>
  /** Check `trace.card_id` against the card (default true; a re-verification against a new card turns it off). */
  readonly checkCardReference?: boolean
  /** The trace's AAP drift similarity, when known: below 0.50 adds a warning. */
  readonly behavioralSimilarity?: number
}

// ---- glob ----

/**
 * Case-insensitive match of `name` against `pattern`, where `*` matches any run of characters.
 * Greedy two-pointer matching with backtracking to the last star: O(name × pattern), no regex.
 */
export const globMatches = (pattern: string, name: string): boolean => {
  const p = pattern.trim().toLowerCase()
  const s = name.trim().toLowerCase()
  let i = 0
  let j = 0
  let star = -1
  let resume = 0
  while (i < s.length) {
    if (j < p.length && p[j] !== "*" && p[j] === s[i]) {
      i++
      j++
    } else if (j < p.length && p[j] === "*") {
      star = j++
      resume = i
    } else if (star >= 0) {
      j = star + 1
      i = ++resume
    } else {
      return false
    }
  }
  while (j < p.length && p[j] === "*") j++
  return j === p.length
}

/** The first pattern that matches the name, if any. */
export const matchingPattern = (patterns: ReadonlyArray<string> | null | undefined, name: string): string | undefined =>
  patterns?.find((pattern) => globMatches(pattern, name))

// ---- trigger conditions ----

type Token =
  | { readonly kind: "op"; readonly value: string }
  | { readonly kind: "punct"; readonly value: "(" | ")" | "," }
  | { readonly kind: "string"; readonly value: string }
  | { readonly kind: "word"; readonly value: string }

const WORD = /[\p{L}\p{N}_.*:/@$-]/u
const NUMBER = /^-?\d+(?:\.\d+)?$/

const tokenize = (source: string): ReadonlyArray<Token> | undefined => {
  const tokens: Array<Token> = []
  let i = 0
  while (i < source.length) {
    const c = source[i]!
    if (/\s/.test(c)) {
      i++
    } else if (c === "(" || c === ")" || c === ",") {
      tokens.push({ kind: "punct", value: c })
      i++
    } else if (c === '"' || c === "'") {
      let value = ""
      i++
      while (i < source.length && source[i] !== c) {
        if (source[i] === "\\" && i + 1 < source.length) i++
        value += source[i]
        i++
      }
      if (i >= source.length) return undefined
      i++
      tokens.push({ kind: "string", value })
    } else {
      const two = source.slice(i, i + 2)
      if ([">=", "<=", "==", "!=", "&&", "||"].includes(two)) {
        tokens.push({ kind: "op", value: two })
        i += 2
      } else if (c === ">" || c === "<" || c === "!" || c === "=") {
        tokens.push({ kind: "op", value: c === "=" ? "==" : c })
        i++
      } else if (WORD.test(c)) {
        let j = i
        while (j < source.length && WORD.test(source[j]!)) j++
        tokens.push({ kind: "word", value: source.slice(i, j) })
        i = j
      } else {
        return undefined
      }
    }
  }
  return tokens
}

type Operand = { readonly kind: "field" | "literal"; readonly value: unknown; readonly text: string }

type Condition =
  | { readonly kind: "or" | "and"; readonly left: Condition; readonly right: Condition }
  | { readonly kind: "not"; readonly inner: Condition }
  | { readonly kind: "compare"; readonly op: string; readonly left: Operand; readonly right: Operand }
  | { readonly kind: "term"; readonly term: Operand }

const COMPARISONS = new Set([">", "<", ">=", "<=", "==", "!=", "contains", "matches"])

const keyword = (token: Token | undefined, ...words: ReadonlyArray<string>): boolean =>
  token !== undefined && (token.kind === "word" || token.kind === "op") && words.includes(token.value.toLowerCase())

/** Longer conditions are refused: the parser recurses on parentheses and must not exhaust the stack. */
export const MAX_CONDITION_LENGTH = 1024

const parseCondition = (source: string): Condition | undefined => {
  if (source.length > MAX_CONDITION_LENGTH) return undefined
  const tokens = tokenize(source)
  if (tokens === undefined || tokens.length === 0) return undefined
  let pos = 0
  const peek = () => tokens[pos]
  const punct = (value: string) => {
    const token = peek()
    if (token?.kind === "punct" && token.value === value) {
      pos++
      return true
    }
    return false
  }
  const operand = (side: "left" | "right"): Operand | undefined => {
    const token = tokens[pos++]
    if (token === undefined) return undefined
    if (token.kind === "string") return { kind: "literal", value: token.value, text: token.value }
    if (token.kind !== "word") return undefined
    const lower = token.value.toLowerCase()
    if (NUMBER.test(token.value)) return { kind: "literal", value: Number(token.value), text: token.value }
    if (lower === "true" || lower === "false") return { kind: "literal", value: lower === "true", text: lower }
    if (lower === "null") return { kind: "literal", value: null, text: lower }
    return side === "left"
      ? { kind: "field", value: token.value, text: token.value }
      : { kind: "literal", value: token.value, text: token.value }
  }
  const primary = (): Condition | undefined => {
    if (keyword(peek(), "not", "!")) {
      pos++
      const inner = primary()
      return inner === undefined ? undefined : { kind: "not", inner }
    }
    if (punct("(")) {
      const inner = or()
      return inner !== undefined && punct(")") ? inner : undefined
    }
    const next = tokens[pos + 1]
    if (keyword(peek(), "contains") && next?.kind === "punct" && next.value === "(") {
      pos += 2
      const left = operand("left")
      if (left === undefined || !punct(",")) return undefined
      const right = operand("right")
      return right !== undefined && punct(")") ? { kind: "compare", op: "contains", left, right } : undefined
    }
    const left = operand("left")
    if (left === undefined) return undefined
    const op = peek()
    if (op !== undefined && (op.kind === "op" || op.kind === "word") && COMPARISONS.has(op.value.toLowerCase())) {
      pos++
      const right = operand("right")
      return right === undefined ? undefined : { kind: "compare", op: op.value.toLowerCase(), left, right }
    }
    return { kind: "term", term: left }
  }
  const and = (): Condition | undefined => {
    let left = primary()
    while (left !== undefined && keyword(peek(), "and", "&&")) {
      pos++
      const right = primary()
      left = right === undefined ? undefined : { kind: "and", left, right }
    }
    return left
  }
  const or = (): Condition | undefined => {
    let left = and()
    while (left !== undefined && keyword(peek(), "or", "||")) {
      pos++
      const right = and()
      left = right === undefined ? undefined : { kind: "or", left, right }
    }
    return left
  }
  const condition = or()
  return condition !== undefined && pos === tokens.length ? condition : undefined
}

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const walk = (root: unknown, path: ReadonlyArray<string>): unknown => {
  let value = root
  for (const key of path) {
    if (!isRecord(value) || !Object.hasOwn(value, key)) return undefined
    value = value[key]
  }
  return value
}

const FIELD_ALIASES: Readonly<Record<string, string>> = {
  action_type: "action.type",
  action_name: "action.name",
  action_category: "action.category",
  tool: "action.name",
  tool_name: "action.name"
}
const TRACE_ROOTS = new Set([
  "trace_id",
  "agent_id",
  "card_id",
  "timestamp",
  "action",
  "decision",
  "escalation",
  "context"
])

const resolveField = (name: string, trace: APTraceDraft): unknown => {
  const alias = name.toLowerCase()
  const path = (Object.hasOwn(FIELD_ALIASES, alias) ? FIELD_ALIASES[alias]! : name).split(".")
  if (TRACE_ROOTS.has(path[0]!)) return walk(trace, path)
  const context = trace.context
  for (const root of [context, context?.environment, context?.metadata, trace.action.parameters, trace.action.target]) {
    const value = walk(root, path)
    if (value !== undefined) return value
  }
  return undefined
}

const truthy = (value: unknown): boolean =>
  Array.isArray(value) ? value.length > 0 : isRecord(value) ? Object.keys(value).length > 0 : Boolean(value)

const asNumber = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isFinite(value)
    ? value
    : typeof value === "string" && NUMBER.test(value.trim())
      ? Number(value.trim())
      : undefined

const looselyEqual = (a: unknown, b: unknown): boolean => {
  const x = asNumber(a)
  const y = asNumber(b)
  if (x !== undefined && y !== undefined) return x === y
  if (typeof a === "string" && typeof b === "string") return a.toLowerCase() === b.toLowerCase()
  return a === b
}

const compare = (op: string, left: unknown, right: unknown): boolean => {
  if (left === undefined) return false
  switch (op) {
    case "==":
      return looselyEqual(left, right)
    case "!=":
      return !looselyEqual(left, right)
    case "contains":
      return typeof left === "string"
        ? typeof right === "string" && left.toLowerCase().includes(right.toLowerCase())
        : Array.isArray(left) && left.some((item) => looselyEqual(item, right))
    case "matches":
      return typeof left === "string" && typeof right === "string" && globMatches(right, left)
    default: {
      const x = asNumber(left)
      const y = asNumber(right)
      if (x === undefined || y === undefined) return false
      return op === ">" ? x > y : op === "<" ? x < y : op === ">=" ? x >= y : x <= y
    }
  }
}

const operandValue = (operand: Operand, trace: APTraceDraft): unknown =>
  operand.kind === "field" ? resolveField(operand.text, trace) : operand.value

const evaluate = (condition: Condition, trace: APTraceDraft): boolean => {
  switch (condition.kind) {
    case "or":
      return evaluate(condition.left, trace) || evaluate(condition.right, trace)
    case "and":
      return evaluate(condition.left, trace) && evaluate(condition.right, trace)
    case "not":
      return !evaluate(condition.inner, trace)
    case "compare":
      return compare(condition.op, operandValue(condition.left, trace), operandValue(condition.right, trace))
    case "term": {
      const { term } = condition
      if (typeof term.value === "boolean") return term.value
      if (term.kind === "field") {
        const value = resolveField(term.text, trace)
        if (value !== undefined && truthy(value)) return true
      }
      return term.text !== "" && globMatches(term.text, trace.action.name)
    }
  }
}

/** Whether a trigger condition holds for the trace; `undefined` when the condition cannot be read. */
export const evaluateTriggerCondition = (condition: string, trace: APTraceDraft): boolean | undefined => {
  const parsed = parseCondition(condition)
  return parsed === undefined ? undefined : evaluate(parsed, trace)
}

// ---- card validity ----

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/
const HAS_OFFSET = /(?:[Zz]|[+-]\d{2}:?\d{2})$/

/** Milliseconds of a card's expiry, or `undefined` when it cannot be read. */
export const cardExpiryMs = (expiresAt: string): number | undefined => {
  const text = expiresAt.trim()
  if (DATE_ONLY.test(text)) {
    const start = Date.parse(`${text}T00:00:00Z`)
    return Number.isNaN(start) ? undefined : start + 86_400_000
  }
  let iso = text.replace(" ", "T")
  if (!HAS_OFFSET.test(iso)) iso += "Z"
  iso = iso.replace(/([+-]\d{2})(\d{2})$/, "$1:$2")
  const ms = Date.parse(iso)
  return Number.isNaN(ms) ? undefined : ms
}

// ---- verification ----

export const verifyTrace = (
  trace: APTraceDraft,
  card: AlignmentCard,
  options: VerifyTraceOptions = {}
): TraceVerificationResult => {
  const violations: Array<TraceViolation> = []
  const warnings: Array<TraceWarning> = []
  const checks: Array<string> = []
  const violation = (type: ViolationType, description: string, field: string | null) =>
    violations.push({ type, severity: VIOLATION_SEVERITY[type], description, trace_field: field })
  const warning = (type: TraceWarning["type"], description: string, field: string | null) =>
    warnings.push({ type, description, trace_field: field })

  if (options.checkCardReference ?? true) {
    checks.push("card_reference")
    const named = trace.card_id
    if (named !== undefined && named !== null && named !== card.card_id) {
      violation(
        "CARD_MISMATCH",
        `Trace references card '${named}' but is verified against '${card.card_id}'`,
        "card_id"
      )
    }
  }

  checks.push("card_expiration")
  const expiresAt = card.expires_at
  if (expiresAt !== undefined && expiresAt !== null) {
    const expiry = cardExpiryMs(expiresAt)
    const actedAt = Date.parse(trace.timestamp)
    if (expiry === undefined) warning("invalid_expiry", `Could not read expires_at: ${expiresAt}`, null)
    else if (!Number.isNaN(actedAt) && actedAt > expiry) {
      violation(
        "CARD_EXPIRED",
        `Alignment Card expired at ${expiresAt}, before the action at ${trace.timestamp}`,
        "timestamp"
      )
    }
  }

  const envelope = card.autonomy_envelope
  const name = trace.action.name
  checks.push("autonomy")
  const implicit = options.implicitActions ?? DEFAULT_IMPLICIT_ACTIONS
  if (
    trace.action.category.toLowerCase() === "bounded" &&
    name !== "" &&
    matchingPattern(envelope.bounded_actions, name) === undefined &&
    matchingPattern(implicit, name) === undefined
  ) {
    violation("UNBOUNDED_ACTION", `Action '${name}' is not in bounded_actions`, "action.name")
  }

  checks.push("forbidden")
  const forbidden = name === "" ? undefined : matchingPattern(envelope.forbidden_actions, name)
  if (forbidden !== undefined) {
    violation("FORBIDDEN_ACTION", `Action '${name}' is forbidden (matches '${forbidden}')`, "action.name")
  }

  checks.push("escalation")
  const escalated = trace.escalation?.required === true
  const actionType = trace.action.type.toLowerCase()
  for (const trigger of envelope.escalation_triggers) {
    const holds = evaluateTriggerCondition(trigger.condition, trace)
    if (holds === undefined) {
      warning("invalid_condition", `Escalation trigger '${trigger.condition}' cannot be evaluated`, null)
      continue
    }
    if (!holds || trigger.action === "log") continue
    const complied =
      trigger.action === "escalate" ? escalated || actionType === "escalate" : actionType === "deny" || escalated
    if (!complied) {
      violation(
        "MISSED_ESCALATION",
        `Trigger '${trigger.condition}' (${trigger.action}) matched but the trace did not ${trigger.action}`,
        trigger.action === "escalate" ? "escalation.required" : "action.type"
      )
    } else if (trace.escalation?.escalation_status === "timeout") {
      warning(
        "escalation_timeout",
        `Escalation for trigger '${trigger.condition}' timed out`,
        "escalation.escalation_status"
      )
    }
  }

  checks.push("values")
  const declared = new Set(card.values.declared)
  for (const value of trace.decision.values_applied) {
    if (!declared.has(value))
      violation("UNDECLARED_VALUE", `Value '${value}' is applied but not declared`, "decision.values_applied")
  }

  const confidence = trace.decision.confidence
  if (typeof confidence === "number" && confidence < NEAR_BOUNDARY_THRESHOLD) {
    warning(
      "near_boundary",
      `Decision confidence ${confidence} is below ${NEAR_BOUNDARY_THRESHOLD}`,
      "decision.confidence"
    )
  }
  for (const [i, alternative] of (trace.decision.alternatives_considered ?? []).entries()) {
    const score = alternative.score
    if (typeof score === "number" && score < NEAR_BOUNDARY_THRESHOLD) {
      warning(
        "near_boundary",
        `Alternative '${alternative.option_id}' scores ${score}, near the boundary`,
        `decision.alternatives_considered[${i}].score`
      )
    }
  }
  const similarity = options.behavioralSimilarity
  if (similarity !== undefined && similarity < BEHAVIORAL_SIMILARITY_THRESHOLD) {
    warning(
      "low_behavioral_similarity",
      `Behavioural similarity ${similarity} is below ${BEHAVIORAL_SIMILARITY_THRESHOLD}`,
      null
    )
  }

  return {
    verification: { verified: violations.length === 0, violations: [...new Set(violations.map((v) => v.type))] },
    violations,
    warnings,
    checks_performed: checks
  }
}
