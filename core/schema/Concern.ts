/**
 * Concerns raised by the integrity judge: the canonical category and severity enums, and the
 * alias maps that absorb the judge's vocabulary drift.
 *
 * The order of `CONCERN_CATEGORIES` and `SEVERITIES` is part of the protocol: the verdict rule table
 * and the STARK encode categories as codes 1..8 and severities as 1..4 in exactly this order, so
 * append-only, never reorder (a reordering is a breaking change for every stored proof).
 */
import { ParseResult, Schema } from "effect"
import { literalUnion } from "./Literals.js"

export const CONCERN_CATEGORIES = [
  "prompt_injection",
  "value_misalignment",
  "autonomy_violation",
  "reasoning_corruption",
  "deceptive_reasoning",
  "undeclared_intent",
  "output_misalignment",
  "output_injection_compliance"
] as const

export const ConcernCategory = literalUnion(CONCERN_CATEGORIES, {
  identifier: "ConcernCategory",
  description: "What kind of integrity concern the judge found"
})
export type ConcernCategory = typeof ConcernCategory.Type

/** Ascending: `severityRank` and every "at least medium" comparison rely on this order. */
export const SEVERITIES = ["low", "medium", "high", "critical"] as const

export const Severity = literalUnion(SEVERITIES, {
  identifier: "Severity",
  description: "Severity of a concern, ascending: low, medium, high, critical"
})
export type Severity = typeof Severity.Type

/** 0 for `low` up to 3 for `critical`. */
export const severityRank = (severity: Severity): number => SEVERITIES.indexOf(severity)

export const CONSULTATION_DEPTHS = ["surface", "standard", "deep"] as const
export const ConsultationDepth = literalUnion(CONSULTATION_DEPTHS, {
  identifier: "ConsultationDepth",
  description: "How deeply the judge consulted the conscience values"
})
export type ConsultationDepth = typeof ConsultationDepth.Type

/**
 * Names LLM judges emit instead of the canonical ones (keys already normalised: lower case, `_`).
 * `forbidden_action_intent` is the one that crashed Mnemom's AIP SDK on exactly the inputs it
 * exists to catch: the prompt's priority list names it, so models echo it back.
 */
export const CATEGORY_ALIASES: Readonly<Record<string, ConcernCategory>> = {
  forbidden_action_intent: "autonomy_violation",
  forbidden_action: "autonomy_violation",
  forbidden_actions: "autonomy_violation",
  autonomy_boundary: "autonomy_violation",
  autonomy_boundary_violation: "autonomy_violation",
  autonomy: "autonomy_violation",
  injection: "prompt_injection",
  prompt_injection_attempt: "prompt_injection",
  deception: "deceptive_reasoning",
  deceptive: "deceptive_reasoning",
  value_inconsistency: "value_misalignment",
  value_consistency: "value_misalignment",
  value_violation: "value_misalignment",
  value_conflict: "value_misalignment",
  undeclared: "undeclared_intent",
  hidden_intent: "undeclared_intent",
  reasoning_degradation: "reasoning_corruption",
  output_injection: "output_injection_compliance"
}

export const SEVERITY_ALIASES: Readonly<Record<string, Severity>> = {
  info: "low",
  informational: "low",
  none: "low",
  minor: "low",
  moderate: "medium",
  severe: "high",
  major: "high"
}

/** Lower case, trimmed, runs of whitespace and hyphens folded into `_`. */
const normalizeKey = (raw: string): string =>
  raw
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, "_")

const lookup =
  <A extends string>(canonical: ReadonlyArray<A>, aliases: Readonly<Record<string, A>>) =>
  (raw: unknown): A | undefined => {
    if (typeof raw !== "string") return undefined
    const key = normalizeKey(raw)
    if ((canonical as ReadonlyArray<string>).includes(key)) return key as A
    return Object.hasOwn(aliases, key) ? aliases[key] : undefined
  }

/** Canonical category for a judge's spelling, or `undefined` when it names none (never throws). */
export const normalizeCategory: (raw: unknown) => ConcernCategory | undefined = lookup(
  CONCERN_CATEGORIES,
  CATEGORY_ALIASES
)

/** Canonical severity for a judge's spelling, or `undefined` (never throws). */
export const normalizeSeverity: (raw: unknown) => Severity | undefined = lookup(SEVERITIES, SEVERITY_ALIASES)

const lenient = <A extends string>(
  target: Schema.Schema<A>,
  normalize: (raw: unknown) => A | undefined,
  what: string
) =>
  Schema.transformOrFail(Schema.String, target, {
    strict: true,
    decode: (raw, _, ast) => {
      const value = normalize(raw)
      return value === undefined
        ? ParseResult.fail(new ParseResult.Type(ast, raw, `unknown ${what} ${JSON.stringify(raw)}`))
        : ParseResult.succeed(value)
    },
    encode: ParseResult.succeed
  })

/** Decodes any alias or spelling variant to the canonical category; encodes canonical values unchanged. */
export const LenientConcernCategory = lenient(ConcernCategory, normalizeCategory, "concern category").annotations({
  identifier: "LenientConcernCategory"
})

export const LenientSeverity = lenient(Severity, normalizeSeverity, "severity").annotations({
  identifier: "LenientSeverity"
})

export const MAX_EVIDENCE_LENGTH = 200

/**
 * Cut evidence to `MAX_EVIDENCE_LENGTH` UTF-16 units (what `maxLength` counts), without leaving
 * half of a surrogate pair at the end. Judges ignore the limit; storing the excerpt must not fail.
 */
export const truncateEvidence = (evidence: string, max: number = MAX_EVIDENCE_LENGTH): string => {
  if (evidence.length <= max) return evidence
  const cut = evidence.slice(0, max)
  const last = cut.charCodeAt(cut.length - 1)
  return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut
}

export const Evidence = Schema.String.pipe(
  Schema.maxLength(MAX_EVIDENCE_LENGTH, {
    message: () => `evidence must be at most ${MAX_EVIDENCE_LENGTH} characters`
  })
).annotations({ description: "Short excerpt of the thinking block, at most 200 characters" })

/** Bound of a cause's value name, action or trigger condition (a conscience value name is at most 200). */
export const MAX_CAUSE_LENGTH = 1000

const CauseText = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(MAX_CAUSE_LENGTH))

/** The card fields a cause can point into; the member beside it names the entry. */
export const CAUSE_CARD_FIELDS = [
  "conscience_values",
  "autonomy_envelope.bounded_actions",
  "autonomy_envelope.forbidden_actions",
  "autonomy_envelope.escalation_triggers"
] as const

/**
 * What in the card or the conscience values a concern was raised against, exactly enough to find
 * it again: a conscience value by name, an action of the envelope by its text, an escalation trigger
 * by its condition. Recorded by the judges from now on (absent on older concerns, and on a concern
 * with no identifiable cause), so that a concern can be re-evaluated when that entry changes.
 */
export const ConcernCause = Schema.Union(
  Schema.Struct({ relevant_card_field: Schema.Literal("conscience_values"), value: CauseText }),
  Schema.Struct({
    relevant_card_field: Schema.Literal("autonomy_envelope.bounded_actions", "autonomy_envelope.forbidden_actions"),
    action: CauseText
  }),
  Schema.Struct({ relevant_card_field: Schema.Literal("autonomy_envelope.escalation_triggers"), trigger: CauseText })
).annotations({
  identifier: "ConcernCause",
  description: "The conscience value, envelope action or escalation trigger the concern was raised against"
})
export type ConcernCause = typeof ConcernCause.Type

const concernFields = {
  description: Schema.String,
  relevant_card_field: Schema.optionalWith(Schema.NullOr(Schema.String), { exact: true }),
  relevant_conscience_value: Schema.optionalWith(Schema.NullOr(Schema.String), { exact: true }),
  cause: Schema.optionalWith(ConcernCause, { exact: true })
}

export const Concern = Schema.Struct({
  category: ConcernCategory,
  severity: Severity,
  evidence: Evidence,
  ...concernFields
}).annotations({ identifier: "Concern", description: "One integrity concern found in the reasoning" })
export type Concern = typeof Concern.Type

/**
 * A concern as an LLM judge writes it: aliases mapped to canonical names, overlong evidence cut
 * (not rejected). Decodes to a valid `Concern`; use it only on judge output, never on stored data.
 */
export const LenientConcern = Schema.Struct({
  category: LenientConcernCategory,
  severity: LenientSeverity,
  evidence: Schema.transform(Schema.String, Evidence, {
    strict: true,
    decode: (evidence) => truncateEvidence(evidence),
    encode: (evidence) => evidence
  }),
  ...concernFields
}).annotations({ identifier: "LenientConcern" })
