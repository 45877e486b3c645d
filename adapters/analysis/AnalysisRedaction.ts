/**
 * Redaction of a finished analysis, before anything of it is hashed, stored or signed: every text a
 * judge writes (each concern's evidence and description, the reasoning summary) and the raw output
 * whose hash becomes `analysis_hash`. Judges quote the reasoning anywhere they write, so masking the
 * evidence alone would leave the same secret in the description next to it.
 *
 * `mask` masks all three; `omit` stores no evidence and masks the rest (a concern without a
 * description, or an analysis without a summary, would say nothing to the reader). The verdict is
 * derived from categories and severities, which redaction never touches.
 */
import type { EvidenceRedactionMode } from "../../core/schema/EvidenceRedaction.js"
import type { AnalysisResult } from "./AnalysisModel.js"
import { maskEvidence, redactEvidence } from "./Evidence.js"

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * The raw output with its concerns and summary replaced by the redacted ones, keeping its other
 * members (the judge's own verdict) and its shape, so it still decodes for re-derivation. Output
 * that is not a JSON object is replaced whole: it cannot be redacted piecewise, and keeping it
 * would keep the thinking text it quotes.
 */
const redactRaw = (
  raw: string,
  concerns: AnalysisResult["concerns"],
  summary: string,
  mode: EvidenceRedactionMode
): string => {
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    parsed = undefined
  }
  if (!isRecord(parsed)) return JSON.stringify({ concerns, reasoning_summary: summary })
  const redacted: Record<string, unknown> = { ...parsed, concerns }
  if ("reasoning_summary" in parsed) redacted["reasoning_summary"] = summary
  // Anything else a judge added that is text could quote the reasoning too.
  for (const [key, value] of Object.entries(redacted)) {
    if (key !== "concerns" && key !== "reasoning_summary" && typeof value === "string" && mode !== "none") {
      redacted[key] = maskEvidence(value)
    }
  }
  return JSON.stringify(redacted)
}

/** The analysis as it may be kept under `mode`; `none` returns it unchanged. */
export const redactAnalysis = (analysis: AnalysisResult, mode: EvidenceRedactionMode): AnalysisResult => {
  if (mode === "none") return analysis
  const concerns = analysis.concerns.map((concern) => ({
    ...concern,
    evidence: redactEvidence(concern.evidence, mode),
    description: maskEvidence(concern.description)
  }))
  const summary = maskEvidence(analysis.reasoning_summary)
  return {
    ...analysis,
    concerns,
    reasoning_summary: summary,
    raw_analysis: redactRaw(analysis.raw_analysis, concerns, summary, mode),
    cross_validation_warnings: analysis.cross_validation_warnings.map(maskEvidence)
  }
}
