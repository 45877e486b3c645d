/**
 * Moving an agent's reputation tally (core/Reputation.ts `ReputationTally`) from one log prefix to a
 * longer one, from the checkpoints in between only: what the workers do after each commit instead
 * of reading the whole log again. Pure, so the exactness of the increments is testable without a
 * database: any split of a log into batches ends at the counts of the whole log taken at once.
 *
 * A session's contribution depends only on its own totals (checkpoints, newest violation, whether a
 * drift alert was raised in it), so each batch is summed per session and the session's before and
 * after decide how `long_sessions` and `stable_sessions` move.
 */
import { DRIFT_MIN_SESSION_CHECKPOINTS } from "./Reputation.js"

/** The counters kept per agent: `tree_size` is the prefix (first certificates) they cover. */
export interface TallyCounts {
  readonly tree_size: number
  readonly certified: number
  readonly analysed: number
  readonly analysed_clear: number
  readonly long_sessions: number
  readonly stable_sessions: number
}

export const EMPTY_TALLY: TallyCounts = {
  tree_size: 0,
  certified: 0,
  analysed: 0,
  analysed_clear: 0,
  long_sessions: 0,
  stable_sessions: 0
}

/** What is kept of one session of the agent. */
export interface SessionState {
  readonly checkpoints: number
  /** ISO 8601 time of the newest boundary violation in the session; null: none. */
  readonly last_violation_at: string | null
  /** An AIP drift alert was raised in the session. */
  readonly drifted: boolean
}

/** One session's share of a batch of checkpoints (the log positions between two prefixes). */
export interface SessionBatch {
  readonly session_id: string
  readonly checkpoints: number
  readonly analysed: number
  readonly analysed_clear: number
  readonly last_violation_at: string | null
  /** An AIP drift alert exists for the session (alerts are committed with the checkpoints that raise them). */
  readonly drifted: boolean
}

const isLong = (s: SessionState | undefined): boolean =>
  s !== undefined && s.checkpoints >= DRIFT_MIN_SESSION_CHECKPOINTS
const isStable = (s: SessionState | undefined): boolean => isLong(s) && !s!.drifted

const newest = (a: string | null, b: string | null): string | null =>
  a === null ? b : b === null ? a : Date.parse(b) > Date.parse(a) ? b : a

/**
 * The counts after `batch` (the sessions of the checkpoints at positions `counts.tree_size` to
 * `treeSize − 1`), and the new state of every session the batch touched. `before` holds the stored
 * state of those sessions (absent: never seen).
 */
export const advanceTally = (
  counts: TallyCounts,
  before: ReadonlyMap<string, SessionState>,
  batch: ReadonlyArray<SessionBatch>,
  treeSize: number
): { readonly counts: TallyCounts; readonly sessions: ReadonlyMap<string, SessionState> } => {
  let { analysed, analysed_clear, certified, long_sessions, stable_sessions } = counts
  const sessions = new Map<string, SessionState>()
  for (const part of batch) {
    const was = sessions.get(part.session_id) ?? before.get(part.session_id)
    const now: SessionState = {
      checkpoints: (was?.checkpoints ?? 0) + part.checkpoints,
      last_violation_at: newest(was?.last_violation_at ?? null, part.last_violation_at),
      drifted: (was?.drifted ?? false) || part.drifted
    }
    certified += part.checkpoints
    analysed += part.analysed
    analysed_clear += part.analysed_clear
    long_sessions += Number(isLong(now)) - Number(isLong(was))
    stable_sessions += Number(isStable(now)) - Number(isStable(was))
    sessions.set(part.session_id, now)
  }
  return {
    counts: { tree_size: treeSize, certified, analysed, analysed_clear, long_sessions, stable_sessions },
    sessions
  }
}

/** Monday 00:00 UTC of the ISO week holding `at`: the key of the week's snapshot. */
export const isoWeekStart = (at: Date): Date => {
  const day = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()))
  const sinceMonday = (day.getUTCDay() + 6) % 7
  return new Date(day.getTime() - sinceMonday * 86_400_000)
}

/** Points a score may drift from the last notified one before reputation.score_changed fires. */
export const SCORE_CHANGE_THRESHOLD = 10
