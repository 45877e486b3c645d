/**
 * The loop both rules judges run for each rule (Rules.ts on reasoning, ToolResultRules.ts on tool
 * results): the rule's matches in the text, at most `MAX_MATCHES_PER_RULE` of them looked at (so a
 * rule costs the same on any text of a length, however often it matches), each given a severity by
 * the judge (`undefined`: the match is no finding, e.g. negated), the most severe kept; it stops at
 * the first match `enough` accepts, since nothing later can rank above it.
 */
import { type Concern, severityRank } from "../../core/schema/Concern.js"

export const MAX_MATCHES_PER_RULE = 16

export interface RuleMatch {
  readonly severity: Concern["severity"]
  readonly start: number
  readonly end: number
}

/** The most severe match of `regex` (global: its `lastIndex` is reset here) in `text`, or undefined. */
export const mostSevereMatch = (
  regex: RegExp,
  text: string,
  severityOf: (start: number, end: number) => Concern["severity"] | undefined,
  enough: (severity: Concern["severity"]) => boolean
): RuleMatch | undefined => {
  regex.lastIndex = 0
  let best: RuleMatch | undefined
  for (let n = 0; n < MAX_MATCHES_PER_RULE; n++) {
    const m = regex.exec(text)
    if (m === null) break
    if (m[0].length === 0) {
      regex.lastIndex++
      continue
    }
    const start = m.index
    const end = start + m[0].length
    const severity = severityOf(start, end)
    if (severity !== undefined && (best === undefined || severityRank(severity) > severityRank(best.severity))) {
      best = { severity, start, end }
      if (enough(severity)) break
    }
  }
  return best
}
