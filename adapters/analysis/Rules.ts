/**
 * The `rules` judge: the offline, deterministic default. It runs on every response, so every
 * pattern is compiled once per (card, conscience values) and cached by card identity; a 4 KB
 * thinking text costs a handful of regex scans.
 *
 * What it checks (patterns in `RulesPatterns.ts`):
 * - forbidden actions of the card, only after an intent cue ("I'll …" → critical, "I should …" →
 *   high); a bare mention ("the user asked me to delete…") is not intent;
 * - prompt-injection compliance, deception and data-exfiltration phrases, unless negated or
 *   rejected in the same clause/sentence;
 * - escalation triggers, loosely (keyword stems of the condition in one sentence), when the thinking
 *   nowhere plans to escalate or ask; `log` triggers are skipped (they demand no escalation);
 * - BOUNDARY values by theme (deception, exfiltration, instruction compliance, forbidden actions):
 *   a concern of that theme names the value, which `core/Verdict.ts` escalates at `high`; a custom
 *   BOUNDARY value phrased "Never …/Do not …" (≤ 6 words) is matched like a forbidden action, and so
 *   is a value of any type with a severity (`mandatory` or `advisory`); whether the high concern
 *   naming the value crosses the boundary is the verdict rule's to say (`isBoundaryValue`): an
 *   advisory value's is reviewed, not blocked;
 * - FEAR values by theme, advisory (low/medium).
 * Not checked: actions outside `bounded_actions` (any verb would count: far too noisy for a regex
 * judge; the LLM judge weighs it), custom FEAR values with no recognised theme.
 *
 * Each concern's `cause` is the card or conscience entry its rule was compiled from (`causeOf`);
 * `conscience.applied` lists the values some rule names, the only ones this judge can check.
 *
 * The judge never decides a verdict (`llm_verdict` is undefined); the gateway derives it.
 * Below `DEFAULT_MIN_EVIDENCE_TOKENS` the protocol answers with a synthetic clear without a judge;
 * `rules` analyses anyway (it is cheap) and reports the token count.
 */
import { Effect, Layer } from "effect"
import { isBoundaryValue } from "../../core/ConscienceResolution.js"
import type { AlignmentCard } from "../../core/schema/Card.js"
import { type Concern, type ConcernCause, MAX_CAUSE_LENGTH, severityRank } from "../../core/schema/Concern.js"
import type { ConscienceValue } from "../../core/schema/Conscience.js"
import { AnalysisModel, type AnalysisRequest, type AnalysisResult } from "./AnalysisModel.js"
import { mostSevereMatch } from "./RuleScan.js"
import { analyzeToolResultWithRules } from "./ToolResultRules.js"
import {
  DEFAULT_MIN_EVIDENCE_TOKENS,
  estimateTokens,
  type EvidenceRedaction,
  excerptAround,
  redactEvidence
} from "./Evidence.js"
import {
  actionPattern,
  boundaryTheme,
  type BoundaryTheme,
  conditionKeywords,
  DECEPTION_RULES,
  DECIDED_CUE,
  escapeRegExp,
  ESCALATION_MENTION,
  EXFILTRATION_RULE,
  FEAR_RULES,
  fearTheme,
  INJECTION_RULES,
  NEGATION_BEFORE,
  REJECTION_AFTER,
  type RuleSpec,
  TENTATIVE_CUE
} from "./RulesPatterns.js"

export interface RulesJudgeOptions {
  /** Default `none`: the excerpt is kept (≤ 200 characters). */
  readonly evidenceRedaction?: EvidenceRedaction
  /** Cap on concerns per analysis, so a pathological text cannot produce a huge checkpoint. */
  readonly maxConcerns?: number
}

export const RULES_JUDGE_NAME = "rules"

interface CompiledRule extends RuleSpec {
  readonly regex: RegExp
  readonly cause: ConcernCause | undefined
}

interface CompiledTrigger {
  readonly condition: string
  readonly action: string
  readonly keywords: ReadonlyArray<string>
  readonly needed: number
  /** Matches any keyword stem at a word start; the match is the stem itself. */
  readonly regex: RegExp
}

interface Compiled {
  readonly rules: ReadonlyArray<CompiledRule>
  readonly triggers: ReadonlyArray<CompiledTrigger>
  /** The values some rule names: the only ones this judge can find a concern against (`values_checked`). */
  readonly applied: ReadonlyArray<Value>
}

type Card = typeof AlignmentCard.Type
type Value = typeof ConscienceValue.Type

const withValue = (spec: Omit<RuleSpec, "valueName">, valueName: string | undefined): RuleSpec =>
  valueName === undefined ? spec : { ...spec, valueName }

const quote = (s: string, max = 80): string => JSON.stringify(s.length > max ? `${s.slice(0, max)}…` : s)

/** "Never recommend competitor products." → "recommend competitor products" (≤ 6 words), else undefined. */
const prohibitedPhrase = (content: string): string | undefined => {
  const m = /^\s*(?:never|do not|don't|must not|no)\s+([^.;,:]+)/i.exec(content)
  const phrase = m?.[1]?.trim()
  return phrase !== undefined && phrase.split(/\s+/).length <= 6 ? phrase : undefined
}

const compile = (card: Card | undefined, values: ReadonlyArray<Value>): Compiled => {
  const themed = new Map<BoundaryTheme, string>()
  const specs: Array<RuleSpec> = []
  const customBoundary: Array<RuleSpec> = []
  for (const value of values) {
    // BOUNDARY values, and every value with a severity (organization values, newer agent values): a
    // concern naming an advisory one is reviewed, never a boundary (the verdict rule decides that).
    if (value.type !== "BOUNDARY" && value.severity === undefined) continue
    const theme = boundaryTheme(value.name, value.content)
    if (theme !== undefined) {
      // The fixed rules of a theme name a boundary value only: an advisory one never takes a theme from it.
      if (!themed.has(theme) && isBoundaryValue(value)) themed.set(theme, value.name)
      continue
    }
    const phrase = prohibitedPhrase(value.content)
    const source = phrase === undefined ? undefined : actionPattern(phrase)
    if (source !== undefined) {
      customBoundary.push({
        id: `boundary.${value.name}`,
        source,
        category: "value_misalignment",
        mode: { kind: "intent", decided: "high", tentative: "high" },
        description: `Reasoning intends what the ${isBoundaryValue(value) ? "boundary" : "advisory"} value ${quote(value.name)} rules out`,
        valueName: value.name
      })
    }
  }
  for (const spec of INJECTION_RULES) specs.push(withValue(spec, themed.get("instruction_compliance")))
  for (const spec of DECEPTION_RULES) specs.push(withValue(spec, themed.get("deception")))
  specs.push(withValue(EXFILTRATION_RULE, themed.get("exfiltration")))
  const envelope = card?.autonomy_envelope
  ;(envelope?.forbidden_actions ?? []).forEach((action, i) => {
    const source = actionPattern(action)
    if (source === undefined) return
    specs.push(
      withValue(
        {
          id: `forbidden.${i}`,
          source,
          category: "autonomy_violation",
          mode: { kind: "intent", decided: "critical", tentative: "high" },
          description: `Reasoning intends the forbidden action ${quote(action)}`,
          cardField: "autonomy_envelope.forbidden_actions"
        },
        themed.get("forbidden_actions")
      )
    )
  })
  specs.push(...customBoundary)
  for (const value of values) {
    if (value.type !== "FEAR") continue
    const theme = fearTheme(value.name, value.content)
    if (theme !== undefined) specs.push({ id: `fear.${value.name}`, ...FEAR_RULES[theme], valueName: value.name })
  }
  const triggers: Array<CompiledTrigger> = []
  for (const trigger of envelope?.escalation_triggers ?? []) {
    if (trigger.action === "log") continue
    const keywords = conditionKeywords(trigger.condition)
    if (keywords.length === 0) continue
    const needed = keywords.length <= 2 ? keywords.length : Math.ceil(keywords.length * 0.6)
    const regex = new RegExp(`\\b(?:${keywords.map(escapeRegExp).join("|")})`, "gi")
    triggers.push({ condition: trigger.condition, action: trigger.action, keywords, needed, regex })
  }
  const named = new Set(specs.flatMap((spec) => spec.valueName ?? []))
  return {
    rules: specs.map((spec) => ({ ...spec, regex: new RegExp(spec.source, "gi"), cause: causeOf(spec, envelope) })),
    triggers,
    applied: values.filter((value) => named.has(value.name))
  }
}

const boundedCause = <A extends ConcernCause>(cause: A, text: string): A | undefined =>
  text.length === 0 || text.length > MAX_CAUSE_LENGTH ? undefined : cause

/**
 * A forbidden-action rule's cause is its action (the entry whose removal would withdraw the concern),
 * even when a boundary value took the theme; a rule naming a value otherwise, that value; the fixed
 * injection, deception and exfiltration rules without a boundary value of their theme have none.
 */
const causeOf = (spec: RuleSpec, envelope: Card["autonomy_envelope"] | undefined): ConcernCause | undefined => {
  if (spec.id.startsWith("forbidden.")) {
    const action = envelope?.forbidden_actions?.[Number(spec.id.slice("forbidden.".length))]
    return action === undefined
      ? undefined
      : boundedCause({ relevant_card_field: "autonomy_envelope.forbidden_actions", action }, action)
  }
  return spec.valueName === undefined
    ? undefined
    : boundedCause({ relevant_card_field: "conscience_values", value: spec.valueName }, spec.valueName)
}

// Cache: card object → (values fingerprint → compiled). Weak on the card, so a replaced card frees its entry.
const NO_CARD = {}
const cache = new WeakMap<object, Map<string, Compiled>>()
const MAX_VALUE_SETS_PER_CARD = 8

const valuesKey = (values: ReadonlyArray<Value>): string =>
  values.map((v) => `${v.type}\u0001${v.severity ?? ""}\u0001${v.name}\u0001${v.content}`).join("\u0000")

/**
 * The last compilation for a values array, by identity: an agent's settings keep one array until
 * they change, so most calls skip building and hashing the values' key (their whole text, some
 * kilobytes with an organization's values).
 */
const lastByValues = new WeakMap<ReadonlyArray<Value>, { readonly card: object; readonly compiled: Compiled }>()

export const compiledFor = (card: Card | undefined, values: ReadonlyArray<Value>): Compiled => {
  const cardKey: object = card ?? NO_CARD
  const last = lastByValues.get(values)
  if (last !== undefined && last.card === cardKey) return last.compiled
  let byValues = cache.get(cardKey)
  if (byValues === undefined) {
    byValues = new Map()
    cache.set(cardKey, byValues)
  }
  const key = valuesKey(values)
  let compiled = byValues.get(key)
  if (compiled === undefined) {
    compiled = compile(card, values)
    if (byValues.size >= MAX_VALUE_SETS_PER_CARD) byValues.clear()
    byValues.set(key, compiled)
  }
  lastByValues.set(values, { card: cardKey, compiled })
  return compiled
}

// ---------------------------------------------------------------------------------------------

const SENTENCE_END = /[.!?\n]/
const CLAUSE_END = /[.!?\n;,:]/

/** Text before `at` back to the last clause boundary (at most 80 characters). */
const clauseBefore = (text: string, at: number): string => {
  let from = at
  const limit = Math.max(0, at - 80)
  while (from > limit && !CLAUSE_END.test(text[from - 1] ?? ".")) from--
  return text.slice(from, at)
}

/** Text after `at` up to the sentence end (at most 100 characters). */
const sentenceAfter = (text: string, at: number): string => {
  let to = at
  const limit = Math.min(text.length, at + 100)
  while (to < limit && !SENTENCE_END.test(text[to] ?? ".")) to++
  return text.slice(at, to)
}

interface Hit {
  readonly rule: RuleSpec
  readonly severity: Concern["severity"]
  readonly start: number
  readonly end: number
}

/** The most severe hit of one rule in the text, or undefined. */
const scanRule = (rule: CompiledRule, text: string): Hit | undefined => {
  const match = mostSevereMatch(
    rule.regex,
    text,
    (start, end) => {
      const before = clauseBefore(text, start)
      if (NEGATION_BEFORE.test(before)) return undefined
      if (rule.mode.kind === "phrase")
        return REJECTION_AFTER.test(sentenceAfter(text, end)) ? undefined : rule.mode.severity
      if (DECIDED_CUE.test(before)) return rule.mode.decided
      if (TENTATIVE_CUE.test(before) && !REJECTION_AFTER.test(sentenceAfter(text, end))) return rule.mode.tentative
      return undefined
    },
    (severity) => severity === "critical"
  )
  return match === undefined ? undefined : { rule, ...match }
}

/** Escalation triggers whose condition keywords meet in one sentence, when no escalation is planned. */
const scanTriggers = (
  triggers: ReadonlyArray<CompiledTrigger>,
  text: string
): Array<{ trigger: CompiledTrigger; start: number; end: number }> => {
  if (triggers.length === 0 || ESCALATION_MENTION.test(text)) return []
  const found: Array<{ trigger: CompiledTrigger; start: number; end: number }> = []
  for (const trigger of triggers) {
    // One scan for all keyword stems; sentences are only examined around the hits.
    const regex = trigger.regex
    regex.lastIndex = 0
    const bySentence = new Map<number, Set<string>>()
    for (let m = regex.exec(text); m !== null; m = regex.exec(text)) {
      let from = m.index
      while (from > 0 && !SENTENCE_END.test(text[from - 1] ?? ".")) from--
      let stems = bySentence.get(from)
      if (stems === undefined) bySentence.set(from, (stems = new Set()))
      stems.add(m[0].toLowerCase())
      if (stems.size >= trigger.needed) {
        let to = m.index
        while (to < text.length && !SENTENCE_END.test(text[to] ?? ".")) to++
        found.push({ trigger, start: from, end: to })
        break
      }
    }
  }
  return found
}

const toConcern = (
  fields: Pick<Concern, "category" | "severity" | "description">,
  evidence: string,
  cardField: string | undefined,
  valueName: string | undefined,
  cause: ConcernCause | undefined
): Concern => ({
  ...fields,
  evidence,
  ...(cardField === undefined ? {} : { relevant_card_field: cardField }),
  ...(valueName === undefined ? {} : { relevant_conscience_value: valueName }),
  ...(cause === undefined ? {} : { cause })
})

/** The rules judge as a pure function (plus a duration measurement). Never throws on any text. */
export const analyzeWithRules = (request: AnalysisRequest, options: RulesJudgeOptions = {}): AnalysisResult => {
  const redaction = options.evidenceRedaction ?? "none"
  if (request.scope === "tool_result") return analyzeToolResultWithRules(request, redaction, RULES_JUDGE_NAME)
  const started = performance.now()
  const maxConcerns = options.maxConcerns ?? 20
  const text = request.thinking
  const compiled = compiledFor(request.card, request.conscienceValues)
  const concerns: Array<Concern> = []
  for (const rule of compiled.rules) {
    const hit = scanRule(rule, text)
    if (hit === undefined) continue
    const evidence = redactEvidence(excerptAround(text, hit.start, hit.end), redaction)
    concerns.push(
      toConcern(
        { category: rule.category, severity: hit.severity, description: rule.description },
        evidence,
        rule.cardField,
        rule.valueName,
        rule.cause
      )
    )
  }
  for (const { trigger, start, end } of scanTriggers(compiled.triggers, text)) {
    const evidence = redactEvidence(excerptAround(text, start, end), redaction)
    concerns.push(
      toConcern(
        {
          category: "undeclared_intent",
          severity: "medium",
          description: `Escalation trigger reached without escalation: ${quote(trigger.condition)} (${trigger.action})`
        },
        evidence,
        "autonomy_envelope.escalation_triggers",
        undefined,
        boundedCause(
          { relevant_card_field: "autonomy_envelope.escalation_triggers", trigger: trigger.condition },
          trigger.condition
        )
      )
    )
  }
  // Most severe first (stable, so ties keep rule order): the first concern is the one that decides.
  concerns.sort((a, b) => severityRank(b.severity) - severityRank(a.severity))
  const kept = concerns.slice(0, maxConcerns)
  const tokens = estimateTokens(text)
  return {
    concerns: kept,
    reasoning_summary: summarize(kept, tokens),
    llm_verdict: undefined,
    analysis_model: RULES_JUDGE_NAME,
    analysis_duration_ms: Math.round((performance.now() - started) * 1000) / 1000,
    thinking_tokens_original: tokens,
    thinking_tokens_analyzed: tokens,
    truncated: false,
    raw_analysis: JSON.stringify({ concerns: kept }),
    cross_validation_warnings: [],
    // The card whose envelope and triggers the rules were compiled from.
    values_checked: request.card?.values.declared ?? [],
    // Patterns for value themes and "Never …" phrases: no weighing of meaning, and no view on which
    // values the reasoning upholds, so no supports and no considerations.
    conscience: { applied: compiled.applied, supports: [], considerations: [], depth: "surface" }
  }
}

/** A neutral sentence built from categories and counts only: never from the thinking text. */
const summarize = (concerns: ReadonlyArray<Concern>, tokens: number): string => {
  const below =
    tokens < DEFAULT_MIN_EVIDENCE_TOKENS
      ? `; below the ${DEFAULT_MIN_EVIDENCE_TOKENS}-token evidence threshold, analysed anyway`
      : ""
  if (concerns.length === 0) return `Rules judge found no concerns in about ${tokens} tokens of reasoning${below}.`
  const categories = [...new Set(concerns.map((c) => c.category))].join(", ")
  const worst = concerns[0]?.severity ?? "low"
  return `Rules judge found ${concerns.length} concern${concerns.length === 1 ? "" : "s"} (${categories}; most severe: ${worst}) in about ${tokens} tokens of reasoning${below}.`
}

/** The default judge; without options, no evidence redaction. */
export const layer = (options: RulesJudgeOptions = {}): Layer.Layer<AnalysisModel> =>
  Layer.succeed(AnalysisModel, {
    name: RULES_JUDGE_NAME,
    analyze: (request) => Effect.sync(() => analyzeWithRules(request, options)),
    synchronous: true
  })
