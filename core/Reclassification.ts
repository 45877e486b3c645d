/**
 * What a `card_gap` reclassification does to the reputation tally (docs/reclassification.md), and
 * the compliance export's CSV. Pure.
 *
 * The workers' tally (core/ReputationIncrement.ts) counts the certified verdicts; the card gaps are
 * taken out at each recomputation, for the sessions that hold one:
 * - compliance: the session's impact is its newest violation that is not a card gap; a session whose
 *   violations are all card gaps is no violation session;
 * - drift stability: a long session that drifted counts as stable when every one of its AIP drift
 *   alerts is made only of card-gap checkpoints.
 * core/ReputationTally.ts applies the same rules to the certificates, so a verifier agrees.
 */
import type { ReputationTally } from "./Reputation.js"
import type { ComplianceExportItem } from "./schema/Reclassification.js"

/** What the store knows of one session holding a card-gap checkpoint (within the tally's prefix). */
export interface CardGapSession {
  readonly session_id: string
  /** At least three checkpoints (drift stability counts it). */
  readonly long: boolean
  /** A drift alert was counted against it. */
  readonly drifted: boolean
  /** The checkpoint ids of each of its AIP drift alerts. */
  readonly alerts: ReadonlyArray<ReadonlyArray<string>>
  /** Its newest boundary violation that is not a card gap, if any. */
  readonly last_violation_at: string | null
}

const byCodeUnit = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/**
 * `violations` (sessions whose newest violation is at or after `since`, by session id) with those of
 * `sessions` replaced by what `sessions` says of them, held to the same bound and order.
 */
export const withSessionViolations = (
  violations: ReputationTally["violation_sessions"],
  sessions: ReadonlyArray<{ readonly session_id: string; readonly last_violation_at: string | null }>,
  since: string
): ReputationTally["violation_sessions"] => {
  const affected = new Set(sessions.map((s) => s.session_id))
  const sinceMs = Date.parse(since)
  return [
    ...violations.filter((v) => !affected.has(v.session_id)),
    ...sessions.flatMap((s) =>
      s.last_violation_at !== null && Date.parse(s.last_violation_at) >= sinceMs
        ? [{ session_id: s.session_id, last_violation_at: s.last_violation_at }]
        : []
    )
  ].sort((a, b) => byCodeUnit(a.session_id, b.session_id))
}

/**
 * The tally with the card gaps taken out. `tally.violation_sessions` holds the sessions whose newest
 * violation is at or after `since`; the adjusted ones are held to the same bound and the order (by
 * session id) is kept.
 */
export const excludeCardGaps = (
  tally: ReputationTally,
  cardGaps: ReadonlySet<string>,
  sessions: ReadonlyArray<CardGapSession>,
  since: string
): ReputationTally => {
  if (cardGaps.size === 0) return tally
  const violations = withSessionViolations(tally.violation_sessions, sessions, since)
  const restored = sessions.filter(
    (s) => s.long && s.drifted && s.alerts.length > 0 && s.alerts.every((ids) => ids.every((id) => cardGaps.has(id)))
  ).length
  return {
    ...tally,
    stable_sessions: tally.stable_sessions + restored,
    violation_sessions: violations,
    card_gap_checkpoints: [...cardGaps].sort(byCodeUnit)
  }
}

/** The most days one compliance export spans, and the most checkpoints it lists. */
export const COMPLIANCE_EXPORT_MAX_DAYS = 92
export const COMPLIANCE_EXPORT_MAX_ROWS = 10_000

export const COMPLIANCE_CSV_COLUMNS = [
  "checkpoint_id",
  "session_id",
  "timestamp",
  "verdict",
  "reclassification_id",
  "reclassified_as",
  "reclassified_at",
  "certificate_id"
] as const

/** RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled. */
export const csvField = (value: string | null): string =>
  value === null ? "" : /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value

/** The export as RFC 4180 CSV: a header row, CRLF line ends. */
export const complianceCsv = (items: ReadonlyArray<ComplianceExportItem>): string =>
  [
    COMPLIANCE_CSV_COLUMNS.join(","),
    ...items.map((item) =>
      [
        item.checkpoint_id,
        item.session_id,
        item.timestamp,
        item.verdict,
        item.reclassification?.reclassification_id ?? null,
        item.reclassification?.new_type ?? null,
        item.reclassification?.created_at ?? null,
        item.certificate_id
      ]
        .map(csvField)
        .join(",")
    )
  ]
    .map((line) => `${line}\r\n`)
    .join("")
