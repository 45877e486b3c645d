/**
 * Containment: the states of an agent (active, paused, killed), the one transition function every
 * change goes through (the API's pause, resume, kill, reactivate and auto-containment alike), and
 * auto-containment: an agent is paused after N consecutive `boundary_violation` checkpoints, N being
 * the agent's `auto_containment_threshold` (unset: never).
 *
 * The streak counts an agent's checkpoints in chain order across all its sessions; any other
 * verdict (`review_needed` included) ends it, as in Mnemom's implementation. The actor skips the decision
 * while the agent is already contained, and starts a fresh streak when an admin resumes it, so a
 * resumed agent gets N more chances rather than being paused again by its first violation.
 */
import * as Either from "effect/Either"
import type { AgentStatus } from "./schema/Agent.js"
import type { ContainmentAction, ContainmentError, ContainmentScope, ContainmentState } from "./schema/Containment.js"
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

/** An agent's status from its stored containment (none: active). */
export const containmentStatus = (containment: ContainmentState | null | undefined): AgentStatus =>
  containment?.status ?? "active"

export const sameContainment = (a: ContainmentState | null, b: ContainmentState | null): boolean =>
  a === null || b === null
    ? a === b
    : a.status === b.status &&
      a.reason === b.reason &&
      a.contained_at === b.contained_at &&
      a.contained_by === b.contained_by

/** Who asked for a change, why and when. */
export interface ContainmentRequest {
  readonly actor: string
  readonly reason: string | null
  /** RFC 3339. */
  readonly at: string
}

/**
 * The containment after `action`, or why it cannot be taken from the current state (an `{error}`
 * that names the state):
 *
 *   active → paused (pause, auto_pause) · paused → active (resume) · active | paused → killed (kill)
 *   · killed → active (reactivate)
 *
 * Anything else is refused, never a no-op: an Admin's pause does not overwrite an Owner's kill, and
 * auto-containment never re-pauses or un-kills an agent. A key's containment (scope `key`) follows
 * the same states; its errors say "key" for "agent".
 */
export const transition = (
  current: ContainmentState | null | undefined,
  action: ContainmentAction,
  request: ContainmentRequest,
  scope: ContainmentScope = "agent"
): Either.Either<ContainmentState | null, string> => {
  const status = containmentStatus(current)
  // The errors name what the change was about: the agent, or (scope key) its provider key.
  const refuse = (error: string) => Either.left(scope === "agent" ? error : error.replace("agent", "key"))
  const contained = (to: ContainmentState["status"]): ContainmentState => ({
    status: to,
    reason: request.reason,
    contained_at: request.at,
    contained_by: request.actor
  })
  switch (action) {
    case "pause":
    case "auto_pause":
      if (status === "active") return Either.right(contained("paused"))
      return refuse(status === "paused" ? "agent is already paused" : "cannot pause: agent is killed")
    case "resume":
      if (status === "paused") return Either.right(null)
      return refuse(
        status === "active" ? "cannot resume: agent is active" : "cannot resume: agent is killed (reactivate it)"
      )
    case "kill":
      if (status !== "killed") return Either.right(contained("killed"))
      return refuse("agent is already killed")
    case "reactivate":
      if (status === "killed") return Either.right(null)
      return refuse(
        status === "active" ? "cannot reactivate: agent is active" : "cannot reactivate: agent is paused (resume it)"
      )
  }
}

/** The reason recorded for an automatic pause. */
export const autoContainmentReason = (streak: ViolationStreak): string =>
  `Auto-contained: ${streak.count} consecutive boundary violation${streak.count === 1 ? "" : "s"}`

/** The paused state of an automatic pause decided at `now`, by `system`. */
export const autoContainment = (streak: ViolationStreak, now: Date): ContainmentState => ({
  status: "paused",
  reason: autoContainmentReason(streak),
  contained_at: now.toISOString(),
  contained_by: "system"
})

/** A containment and what it covers. */
export interface ScopedContainment {
  readonly scope: ContainmentScope
  readonly containment: ContainmentState
}

/**
 * The containment an agent is refused under: its own or its key's, whichever holds; both, the more
 * severe (killed over paused), the agent's own at equal status. Undefined: the agent may send.
 */
export const containmentInForce = (
  agent: ContainmentState | null | undefined,
  key: ContainmentState | null | undefined
): ScopedContainment | undefined => {
  if (agent === undefined || agent === null)
    return key === undefined || key === null ? undefined : { scope: "key", containment: key }
  if (key === undefined || key === null || agent.status === "killed" || key.status === "paused") {
    return { scope: "agent", containment: agent }
  }
  return { scope: "key", containment: key }
}

/**
 * The gateway's 403 body for a request of a contained agent. `error` keeps the reason a person gave;
 * `containment_error` is what clients act on (its `scope` says whether the agent or its key is contained).
 */
export const containmentErrorBody = (
  agentId: string,
  containment: ContainmentState,
  scope: ContainmentScope = "agent"
): ContainmentError => {
  const reason = containment.status === "paused" ? "agent_paused" : "agent_killed"
  const subject = scope === "agent" ? "agent" : "agent's provider key"
  return {
    error: `${subject} is ${containment.status}${containment.reason === null ? "" : `: ${containment.reason}`}`,
    type: "containment_error",
    reason,
    containment_error: {
      type: "containment_error",
      reason,
      agent_id: agentId,
      scope,
      contained_at: containment.contained_at,
      contained_by: containment.contained_by
    }
  }
}
