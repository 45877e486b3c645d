/**
 * Evidence handling shared by both judges: excerpts cut around a match, redaction, and the token
 * estimate the protocol uses. Evidence is the only thinking text that may outlive an analysis, so
 * everything that writes a concern's `evidence` goes through `finishEvidence`.
 */
import { MAX_EVIDENCE_LENGTH, truncateEvidence } from "../../core/schema/Concern.js"

/** `none` keeps excerpts, `mask` blanks digits, emails and key-looking tokens, `omit` stores "". */
export type EvidenceRedaction = "none" | "mask" | "omit"

export const REDACTED = "[redacted]"

/** AIP's estimate: one token per four UTF-16 units. */
export const estimateTokens = (text: string): number => Math.ceil(text.length / 4)

/** Below this many estimated tokens the protocol answers with a synthetic clear (AIP constant). */
export const DEFAULT_MIN_EVIDENCE_TOKENS = 100

const WHITESPACE = /\s/

/**
 * At most `max` characters of `text` around `[start, end)`, widened evenly on both sides and cut on
 * whitespace so no word is sliced (unless the match itself is longer than `max`). Whitespace runs
 * are folded to one space: the excerpt is for a human reader, and folding only shortens it.
 */
export const excerptAround = (text: string, start: number, end: number, max: number = MAX_EVIDENCE_LENGTH): string => {
  if (end - start >= max) return truncateEvidence(fold(text.slice(start, end)), max)
  const room = max - (end - start)
  let from = Math.max(0, start - Math.floor(room / 2))
  let to = Math.min(text.length, end + (room - (start - from)))
  from = Math.max(0, Math.min(from, to - max))
  if (from > 0 && !WHITESPACE.test(text[from - 1] ?? " ")) {
    while (from < start && !WHITESPACE.test(text[from] ?? " ")) from++
  }
  if (to < text.length && !WHITESPACE.test(text[to] ?? " ")) {
    while (to > end && !WHITESPACE.test(text[to - 1] ?? " ")) to--
  }
  return truncateEvidence(fold(text.slice(from, to)), max)
}

const fold = (s: string): string => s.replace(/\s+/g, " ").trim()

// Order matters: emails and keys first, so their digits are not masked piecemeal.
const EMAIL = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g
/** Prefixed secrets (sk-…, ghp_…, AKIA…, xox…-), bearer tokens, and long mixed alphanumeric runs. */
const KEY_LIKE =
  /\b(?:sk|pk|rk|ghp|gho|ghs|github_pat|xox[abpr]|AKIA|ASIA|AIza)[-_]?[A-Za-z0-9_-]{8,}|\bBearer\s+[A-Za-z0-9._~+/=-]{8,}|\b(?=[A-Za-z0-9_+/=-]*\d)(?=[A-Za-z0-9_+/=-]*[A-Za-z])[A-Za-z0-9_+/=-]{20,}/g
/** Digit runs, including phone and card numbers written with separators. */
const DIGITS = /\d(?:[\d\s().-]{0,30}\d)?/g

export const maskEvidence = (evidence: string): string =>
  evidence.replace(EMAIL, REDACTED).replace(KEY_LIKE, REDACTED).replace(DIGITS, REDACTED)

/** Apply the configured redaction, then re-cut to 200 (masking can lengthen the text). */
export const redactEvidence = (evidence: string, mode: EvidenceRedaction): string => {
  switch (mode) {
    case "none":
      return truncateEvidence(evidence)
    case "mask":
      return truncateEvidence(maskEvidence(evidence))
    case "omit":
      return ""
  }
}

/** Apply redaction to every concern of a list; concerns are otherwise unchanged. */
export const redactConcerns = <C extends { readonly evidence: string }>(
  concerns: ReadonlyArray<C>,
  mode: EvidenceRedaction
): Array<C> => concerns.map((concern) => ({ ...concern, evidence: redactEvidence(concern.evidence, mode) }))
