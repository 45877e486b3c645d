/**
 * Fallback reasoning inference (confidence 0.3): when a provider exposes no reasoning but the model
 * wrote its reasoning in the visible answer, that writing stands in for it. The spec's table gives
 * non-reasoning models "tracing only; a synthetic clear", so the fallback must tell an answer that
 * reasons in writing from a plain answer with a turn of phrase in it. The test (docs/formats.md,
 * "Where the reasoning comes from"):
 *
 * - a tagged reasoning section (`<thinking>…</thinking>`, `<think>…</think>`, `<reasoning>…</reasoning>`,
 *   as prompted chain-of-thought and some open models write it): its contents are the reasoning;
 * - else at least `MIN_DELIBERATION` sentences that read like deliberation ("Let me…", "I should…",
 *   "However…"): those sentences. One alone ("However, the file is empty.") is an answer's turn of
 *   phrase, not reasoning: the answer is traced only, with a synthetic clear.
 *
 * The starters are the AIP reference implementation's list (mnemom/aip), kept identical so the same
 * text yields the same evidence. The gateway applies it to every extraction (`withInferredThinking`);
 * the adapters themselves report only what the provider sent.
 */
import { CONFIDENCE } from "./Extraction.js"
import type { ExtractedThinking, Extraction } from "./Provider.js"

const STARTERS =
  /^(?:I need to|Let me|I should|My approach|First, I['’]ll|I['’]m going to|Step 1|Consider|On one hand|However|But|Alternatively|I think|I['’]ll)\b/

/** Sentence ends (after . ! ?) and line breaks; good enough for deliberation-style prose. */
const SENTENCE_BREAK = /(?<=[.!?])\s+|\n+/

/** Only the first part of a very long answer is scanned: the regex must not cost more than the call. */
const MAX_SCANNED_CHARS = 256 * 1024

/** Deliberation-like sentences that make an answer's text its reasoning (one is a turn of phrase). */
export const MIN_DELIBERATION = 2

/** The tags a reasoning section is written in (lowercase, as models write them; matched as written). */
const REASONING_TAGS = ["thinking", "think", "reasoning"] as const

/**
 * The contents of the answer's tagged reasoning sections, joined; undefined when there are none.
 * Scanned with indexOf, each character looked at a bounded number of times (the text is hostile: a
 * lazy regex with a back-reference goes quadratic on many opening tags without their closing one).
 * An opening tag never closed runs to the end of the scanned text.
 */
const taggedReasoning = (text: string): string | undefined => {
  const sections: Array<string> = []
  // Each tag's next opening at or after `from` (-1: none left), searched again only once passed.
  const next = REASONING_TAGS.map((tag) => text.indexOf(`<${tag}>`))
  let from = 0
  while (from < text.length) {
    let open = -1
    let tag = ""
    REASONING_TAGS.forEach((candidate, i) => {
      if (next[i] !== -1 && next[i]! < from) next[i] = text.indexOf(`<${candidate}>`, from)
      const at = next[i]!
      if (at !== -1 && (open === -1 || at < open)) {
        open = at
        tag = candidate
      }
    })
    if (open === -1) break
    const start = open + tag.length + 2
    const close = text.indexOf(`</${tag}>`, start)
    const end = close === -1 ? text.length : close
    const section = text.slice(start, end).trim()
    if (section !== "") sections.push(section)
    from = close === -1 ? text.length : close + tag.length + 3
  }
  return sections.length === 0 ? undefined : sections.join("\n")
}

export const inferThinking = (outputText: string): ExtractedThinking | undefined => {
  const scanned = outputText.slice(0, MAX_SCANNED_CHARS)
  const tagged = taggedReasoning(scanned)
  if (tagged !== undefined) return { text: tagged, source: "fallback", confidence: CONFIDENCE.fallback }
  const sentences = scanned
    .split(SENTENCE_BREAK)
    .map((s) => s.trim().replace(/^(?:[-*•]|\d+[.)])\s+/, "")) // list markers do not hide a starter
    .filter((s) => STARTERS.test(s))
  return sentences.length < MIN_DELIBERATION
    ? undefined
    : { text: sentences.join("\n"), source: "fallback", confidence: CONFIDENCE.fallback }
}

/**
 * The extraction with the fallback's inferred reasoning when the provider exposed none: not for
 * encrypted reasoning (unsupported, left as it is) nor for a provider's error, whose text is no answer.
 */
export const withInferredThinking = <X extends Extraction>(extraction: X): X => {
  if (extraction.thinking !== undefined || extraction.redactedThinking || extraction.providerError !== undefined)
    return extraction
  const thinking = inferThinking(extraction.outputText)
  return thinking === undefined ? extraction : { ...extraction, thinking }
}
