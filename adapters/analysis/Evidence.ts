/**
 * Evidence handling shared by both judges: excerpts cut around a match, redaction, and the token
 * estimate the protocol uses. Evidence is the only thinking text that may outlive an analysis, so
 * everything that writes a concern's `evidence` goes through `finishEvidence`.
 */
import { MAX_EVIDENCE_LENGTH, truncateEvidence } from "../../core/schema/Concern.js"
import type { EvidenceRedactionMode } from "../../core/schema/EvidenceRedaction.js"

/** `none` keeps excerpts, `mask` blanks digits, emails and key-looking tokens, `omit` stores "". */
export type EvidenceRedaction = EvidenceRedactionMode

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

// Every pattern below runs in linear time on hostile text: its quantifiers are bounded, or an
// unbounded run can only start where the run itself starts (a lookbehind refuses a start inside
// it), so no position is rescanned more than a bounded number of times. Order matters: e-mails and
// keys first, so their digits are not masked piecemeal.

/** Local part and labels bounded as RFC 5321 bounds them, so a start costs at most a few hundred steps. */
const EMAIL = /[\w.+%-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}/g
/** Keys with a known prefix: OpenAI/Anthropic (sk-, sk-ant-, sk-proj-), Stripe, GitHub, Slack, AWS, Google. */
const PREFIXED_KEY =
  /\b(?:sk|pk|rk|ghp|gho|ghs|ghu|ghr|github_pat|xox[abprs]|AKIA|ASIA|AIza)[-_]?[A-Za-z0-9_-]{8,}|\bBearer\s{1,8}[A-Za-z0-9._~+/=-]{8,}/g
const TOKEN_CHARS = "A-Za-z0-9_+/=-"
/** Three dot-separated base64url segments (a JWT's header.payload.signature), each starting a run. */
const JWT_LIKE = /(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g
/** Long runs of token characters: hex or base64 secrets (40+ whatever they hold, 20+ when letters and digits mix). */
const LONG_SECRET = new RegExp(
  `(?<![${TOKEN_CHARS}])(?:[${TOKEN_CHARS}]{40,}|(?=[${TOKEN_CHARS}]*\\d)(?=[${TOKEN_CHARS}]*[A-Za-z])[${TOKEN_CHARS}]{20,})`,
  "g"
)
/** Digit runs, including phone and card numbers written with separators (bounded gap: linear). */
const DIGITS = /\d(?:[\d\s().-]{0,30}\d)?/g

/**
 * Replaces e-mail addresses, keys and tokens, long hex/base64 secrets, card numbers and digit runs
 * with `[redacted]`. For any judge-written text, not only evidence: judges quote the reasoning.
 */
export const maskEvidence = (evidence: string): string =>
  evidence
    .replace(EMAIL, REDACTED)
    .replace(PREFIXED_KEY, REDACTED)
    .replace(JWT_LIKE, REDACTED)
    .replace(LONG_SECRET, REDACTED)
    .replace(DIGITS, REDACTED)

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
