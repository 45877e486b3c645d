/**
 * Parsing an LLM judge's answer. The judge read attacker-influenced text, so its output is
 * untrusted: every step is lenient where judges are sloppy (code fences, prose around the JSON,
 * trailing commas, category aliases, overlong evidence) and strict where sloppiness would hide a
 * problem (no JSON object, `concerns` not an array). Nothing here throws.
 *
 * Warnings and errors never quote the judge's text (which may echo the thinking); at most a short,
 * sanitised category or verdict spelling.
 */
import { Either, Schema } from "effect"
import {
  type Concern,
  ConcernCause,
  normalizeCategory,
  normalizeSeverity,
  severityRank,
  truncateEvidence
} from "../../core/schema/Concern.js"
import type { AlignmentCard } from "../../core/schema/Card.js"
import type { ConscienceValue } from "../../core/schema/Conscience.js"
import { VERDICTS, type Verdict } from "../../core/schema/Verdict.js"

export interface ParsedJudgeOutput {
  readonly verdict: Verdict | undefined
  readonly concerns: ReadonlyArray<Concern>
  readonly reasoning_summary: string
  /** Names of the judge's values it says the reasoning upholds: only names of values it was given. */
  readonly supports: ReadonlyArray<string>
  /** At most `MAX_CONSIDERATIONS` notes of at most `MAX_CONSIDERATION_LENGTH` characters. */
  readonly considerations: ReadonlyArray<string>
  readonly warnings: ReadonlyArray<string>
}

/**
 * What a judge's cause or support may name: the entries of the card and the values it was shown.
 * A cause naming anything else is dropped (a judge that read hostile text may invent one), so a
 * stored cause always points at a real entry.
 */
export interface JudgedEntries {
  readonly values: ReadonlySet<string>
  readonly boundedActions: ReadonlySet<string>
  readonly forbiddenActions: ReadonlySet<string>
  readonly triggers: ReadonlySet<string>
}

export const NO_ENTRIES: JudgedEntries = {
  values: new Set(),
  boundedActions: new Set(),
  forbiddenActions: new Set(),
  triggers: new Set()
}

/** The entries of `card` and `values`, as the prompt shows them to the judge. */
export const judgedEntries = (
  card: AlignmentCard | undefined,
  values: ReadonlyArray<Pick<ConscienceValue, "name">>
): JudgedEntries => ({
  values: new Set(values.map((value) => value.name)),
  boundedActions: new Set(card?.autonomy_envelope.bounded_actions ?? []),
  forbiddenActions: new Set(card?.autonomy_envelope.forbidden_actions ?? []),
  triggers: new Set((card?.autonomy_envelope.escalation_triggers ?? []).map((trigger) => trigger.condition))
})

export const MAX_CONSIDERATIONS = 5
export const MAX_CONSIDERATION_LENGTH = 300
const MAX_SUPPORTS = 50

const decodeCause = Schema.decodeUnknownEither(ConcernCause)

/** Whether a well-formed cause names an entry the judge was shown. */
const knownCause = (cause: ConcernCause, entries: JudgedEntries): boolean => {
  if ("value" in cause) return entries.values.has(cause.value)
  if ("trigger" in cause) return entries.triggers.has(cause.trigger)
  return cause.relevant_card_field === "autonomy_envelope.bounded_actions"
    ? entries.boundedActions.has(cause.action)
    : entries.forbiddenActions.has(cause.action)
}

export interface JudgeOutputError {
  readonly reason: string
}

/** Bigger answers are cut before scanning: the judge's output is capped far below this anyway. */
const MAX_INPUT = 256 * 1024
const MAX_SUMMARY = 600

const sanitize = (raw: unknown): string =>
  JSON.stringify(typeof raw === "string" ? raw.replace(/[^\w -]/g, "").slice(0, 40) : typeof raw)

/** The body of the first fenced block that holds a `{`, else the text unchanged. */
export const stripCodeFences = (text: string): string => {
  const fence = /```[\w-]*[ \t]*\r?\n?([\s\S]*?)```/g
  for (let m = fence.exec(text); m !== null; m = fence.exec(text)) {
    if (m[1]?.includes("{")) return m[1]
  }
  return text
}

/** The first brace-balanced `{…}`, ignoring braces inside JSON strings; undefined if none closes. */
export const firstJsonObject = (text: string): string | undefined => {
  const start = text.indexOf("{")
  if (start < 0) return undefined
  let depth = 0
  let inString = false
  for (let i = start; i < text.length; i++) {
    const ch = text[i]
    if (inString) {
      if (ch === "\\") i++
      else if (ch === '"') inString = false
    } else if (ch === '"') {
      inString = true
    } else if (ch === "{") {
      depth++
    } else if (ch === "}") {
      depth--
      if (depth === 0) return text.slice(start, i + 1)
    }
  }
  return undefined
}

/** Drop commas that precede `}` or `]` outside strings (a known Claude Haiku quirk). */
export const stripTrailingCommas = (json: string): string => {
  let out = ""
  let inString = false
  for (let i = 0; i < json.length; i++) {
    const ch = json[i]!
    if (inString) {
      out += ch
      if (ch === "\\" && i + 1 < json.length) out += json[++i]
      else if (ch === '"') inString = false
      continue
    }
    if (ch === '"') inString = true
    if (ch === ",") {
      let j = i + 1
      while (j < json.length && /\s/.test(json[j]!)) j++
      if (json[j] === "}" || json[j] === "]") continue
    }
    out += ch
  }
  return out
}

const normalizeVerdict = (raw: unknown): Verdict | undefined => {
  if (typeof raw !== "string") return undefined
  const key = raw
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, "_")
  return (VERDICTS as ReadonlyArray<string>).includes(key) ? (key as Verdict) : undefined
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const optionalString = (u: unknown): string | undefined =>
  typeof u === "string" && u.trim() !== "" ? u.trim() : undefined

const causeOf = (
  raw: unknown,
  index: number,
  entries: JudgedEntries,
  warnings: Array<string>
): ConcernCause | undefined => {
  if (raw === undefined || raw === null) return undefined
  const decoded = decodeCause(raw)
  if (Either.isLeft(decoded)) {
    warnings.push(`concern ${index}: malformed cause dropped`)
    return undefined
  }
  if (!knownCause(decoded.right, entries)) {
    warnings.push(`concern ${index}: cause names no entry of the card or values, dropped`)
    return undefined
  }
  // Decoding keeps the matched member's fields only (excess properties are dropped): nothing else
  // the judge added is kept.
  return decoded.right
}

const decodeConcern = (
  raw: unknown,
  index: number,
  entries: JudgedEntries,
  warnings: Array<string>
): Concern | undefined => {
  if (!isRecord(raw)) {
    warnings.push(`concern ${index} dropped: not an object`)
    return undefined
  }
  const category = normalizeCategory(raw["category"])
  if (category === undefined) {
    warnings.push(`concern ${index} dropped: unknown category ${sanitize(raw["category"])}`)
    return undefined
  }
  let severity = normalizeSeverity(raw["severity"])
  if (severity === undefined) {
    // Keep the concern rather than lose it: medium makes it count (review) without crossing a boundary.
    warnings.push(`concern ${index}: unknown severity ${sanitize(raw["severity"])}, treated as medium`)
    severity = "medium"
  }
  const cardField = optionalString(raw["relevant_card_field"])
  const valueName = optionalString(raw["relevant_conscience_value"])
  const cause = causeOf(raw["cause"], index, entries, warnings)
  return {
    category,
    severity,
    description: typeof raw["description"] === "string" ? raw["description"].slice(0, 500) : "",
    evidence: typeof raw["evidence"] === "string" ? truncateEvidence(raw["evidence"]) : "",
    ...(cardField === undefined ? {} : { relevant_card_field: cardField.slice(0, 200) }),
    ...(valueName === undefined ? {} : { relevant_conscience_value: valueName.slice(0, 200) }),
    ...(cause === undefined ? {} : { cause })
  }
}

/** Names of values the judge was shown, each once, at most `MAX_SUPPORTS`; anything else is dropped. */
const supportsOf = (raw: unknown, entries: JudgedEntries, warnings: Array<string>): ReadonlyArray<string> => {
  if (raw === undefined || raw === null) return []
  if (!Array.isArray(raw)) {
    warnings.push("supports dropped: not an array")
    return []
  }
  const known = raw
    .slice(0, MAX_SUPPORTS)
    .filter((name): name is string => typeof name === "string" && entries.values.has(name))
  if (known.length < Math.min(raw.length, MAX_SUPPORTS)) warnings.push("supports naming no conscience value dropped")
  return [...new Set(known)]
}

const considerationsOf = (raw: unknown): ReadonlyArray<string> =>
  Array.isArray(raw)
    ? raw
        .filter((note): note is string => typeof note === "string" && note.trim() !== "")
        .slice(0, MAX_CONSIDERATIONS)
        .map((note) => note.trim().slice(0, MAX_CONSIDERATION_LENGTH))
    : []

const parseUnsafe = (output: string, entries: JudgedEntries): Either.Either<ParsedJudgeOutput, JudgeOutputError> => {
  const text = output.length > MAX_INPUT ? output.slice(0, MAX_INPUT) : output
  const object = firstJsonObject(stripCodeFences(text)) ?? firstJsonObject(text)
  if (object === undefined) return Either.left({ reason: "no complete JSON object in judge output" })
  let value: unknown
  try {
    value = JSON.parse(stripTrailingCommas(object))
  } catch {
    return Either.left({ reason: "judge output is not valid JSON" })
  }
  if (!isRecord(value)) return Either.left({ reason: "judge output is not a JSON object" })
  const rawConcerns = value["concerns"]
  if (!Array.isArray(rawConcerns)) return Either.left({ reason: "judge output has no concerns array" })
  const warnings: Array<string> = []
  const concerns = rawConcerns.slice(0, 50).flatMap((raw, i) => decodeConcern(raw, i, entries, warnings) ?? [])
  if (rawConcerns.length > 50) warnings.push(`${rawConcerns.length - 50} concerns beyond the first 50 dropped`)
  const verdict = normalizeVerdict(value["verdict"])
  if (verdict === undefined && value["verdict"] !== undefined)
    warnings.push(`unknown judge verdict ${sanitize(value["verdict"])}`)
  const summary = value["reasoning_summary"]
  return Either.right({
    verdict,
    concerns,
    reasoning_summary: typeof summary === "string" ? summary.slice(0, MAX_SUMMARY) : "",
    supports: supportsOf(value["supports"], entries, warnings),
    considerations: considerationsOf(value["considerations"]),
    warnings
  })
}

/**
 * Parse a judge's answer. Never throws, whatever the input. Causes and supports are kept only when
 * they name one of `entries` (none by default).
 */
export const parseJudgeOutput = (
  output: unknown,
  entries: JudgedEntries = NO_ENTRIES
): Either.Either<ParsedJudgeOutput, JudgeOutputError> => {
  if (typeof output !== "string") return Either.left({ reason: "judge output is not text" })
  try {
    return parseUnsafe(output, entries)
  } catch {
    return Either.left({ reason: "judge output could not be parsed" })
  }
}

/**
 * Warnings when the judge's verdict disagrees with its own concerns or with the derived verdict.
 * They are recorded, never used to correct anything: the derived verdict stands.
 */
export const crossValidate = (
  judgeVerdict: Verdict | undefined,
  concerns: ReadonlyArray<Pick<Concern, "severity">>,
  derived: Verdict
): Array<string> => {
  const warnings: Array<string> = []
  if (judgeVerdict === undefined) return warnings
  if (judgeVerdict === "clear" && concerns.some((c) => severityRank(c.severity) >= severityRank("high"))) {
    warnings.push("judge verdict clear despite high or critical concerns")
  }
  if (judgeVerdict === "boundary_violation" && concerns.length === 0) {
    warnings.push("judge verdict boundary_violation with no concerns")
  }
  if (judgeVerdict !== derived) warnings.push(`judge verdict ${judgeVerdict} differs from derived verdict ${derived}`)
  return warnings
}
