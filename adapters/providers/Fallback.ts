/**
 * Fallback reasoning inference (confidence 0.3): when a provider exposes no reasoning, the visible
 * answer's sentences that read like deliberation ("Let me…", "I should…", "However…") stand in
 * for it. The starters are the AIP reference implementation's list (mnemom/aip), kept identical
 * so the same text yields the same evidence. The gateway applies it to every extraction
 * (`withInferredThinking`); the adapters themselves report only what the provider sent.
 */
import { CONFIDENCE } from "./Extraction.js"
import type { ExtractedThinking, Extraction } from "./Provider.js"

const STARTERS =
  /^(?:I need to|Let me|I should|My approach|First, I['’]ll|I['’]m going to|Step 1|Consider|On one hand|However|But|Alternatively|I think|I['’]ll)\b/

/** Sentence ends (after . ! ?) and line breaks; good enough for deliberation-style prose. */
const SENTENCE_BREAK = /(?<=[.!?])\s+|\n+/

/** Only the first part of a very long answer is scanned: the regex must not cost more than the call. */
const MAX_SCANNED_CHARS = 256 * 1024

export const inferThinking = (outputText: string): ExtractedThinking | undefined => {
  const sentences = outputText
    .slice(0, MAX_SCANNED_CHARS)
    .split(SENTENCE_BREAK)
    .map((s) => s.trim().replace(/^(?:[-*•]|\d+[.)])\s+/, "")) // list markers do not hide a starter
    .filter((s) => STARTERS.test(s))
  return sentences.length === 0
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
