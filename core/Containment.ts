/**
 * Auto-containment: an agent is paused after N consecutive `boundary_violation` checkpoints, N
 * being the agent's `auto_containment_threshold` (unset: never).
 *
 * The streak counts an agent's checkpoints in chain order across all its sessions; any other
 * verdict (`review_needed` included) ends it, as in the reference. The actor skips the decision
 * while the agent is already contained, and starts a fresh streak when an admin resumes it, so a
 * resumed agent gets N more chances rather than being paused again by its first violation.
 */
import type { Verdict } from "./schema/Verdict.js"

export interface ViolationStreak {
  /** Consecutive boundary violations ending at the agent's newest checkpoint. */
  readonly count: number
  readonly first_checkpoint_id: string | null
  readonly last_checkpoint_id: string | null
  /** RFC 3339 timestamp of the streak's first checkpoint. */
  readonly since: string | null
}

export const emptyViolationStreak: ViolationStreak = {
  count: 0,
  first_checkpoint_id: null,
  last_checkpoint_id: null,
  since: null
}

/** The part of a checkpoint the streak reads. */
export interface StreakCheckpoint {
  readonly checkpoint_id: string
  readonly verdict: Verdict
  readonly timestamp: string
}

export const advanceViolationStreak = (streak: ViolationStreak, checkpoint: StreakCheckpoint): ViolationStreak => {
  if (checkpoint.verdict !== "boundary_violation") return emptyViolationStreak
  return streak.count === 0
    ? {
        count: 1,
        first_checkpoint_id: checkpoint.checkpoint_id,
        last_checkpoint_id: checkpoint.checkpoint_id,
        since: checkpoint.timestamp
      }
    : { ...streak, count: streak.count + 1, last_checkpoint_id: checkpoint.checkpoint_id }
}

/** The streak after these checkpoints, oldest first (an actor rebuilding from its newest stored checkpoints). */
export const violationStreakOf = (checkpoints: Iterable<StreakCheckpoint>): ViolationStreak => {
  let streak = emptyViolationStreak
  for (const checkpoint of checkpoints) streak = advanceViolationStreak(streak, checkpoint)
  return streak
}

/** Contain when a threshold is set (a positive integer) and the streak has reached it. */
export const shouldContain = (streak: ViolationStreak, threshold: number | null | undefined): boolean =>
  threshold !== undefined &&
  threshold !== null &&
  Number.isInteger(threshold) &&
  threshold > 0 &&
  streak.count >= threshold

/** What the gateway enforces and `containment_error` reports (the shape of `AgentState.Containment`). */
export interface ContainmentRecord {
  readonly status: "paused"
  readonly reason: string
  /** RFC 3339. */
  readonly since: string
}

/** The record of an automatic pause decided at `now`. */
export const autoContainment = (streak: ViolationStreak, now: Date): ContainmentRecord => ({
  status: "paused",
  reason:
    `auto-containment: ${streak.count} consecutive boundary violation${streak.count === 1 ? "" : "s"}` +
    (streak.last_checkpoint_id !== null ? ` (last: ${streak.last_checkpoint_id})` : ""),
  since: now.toISOString()
})
