/**
 * A containment change: the one write path of the API's pause, resume, kill and reactivate and of
 * auto-containment (streams/Decisions.ts), so both are recorded, logged and announced alike.
 *
 * One SQL transaction locks the agent's row, decides with core/Containment.ts's `transition` on the
 * settings it read (compare-and-set: two admins acting at once are ordered, and the second is judged
 * on the first one's result), and writes together: the new settings, the containment log row, the
 * governance log entry and its catalogue event (`agent.paused`, `agent.resumed` or `agent.killed`,
 * in the outbox). The caller then tells the gateways (`publishContainment`) before it answers: the
 * store is the truth, the gateways' copy follows it, and pushing what the store holds is always safe
 * to repeat.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { randomUUID } from "node:crypto"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { AgentState } from "../adapters/bus/AgentState.js"
import { GovernanceLog } from "../adapters/store/GovernanceLog.js"
import { type ContainmentLogEntry, type EnforcementDraft, Store, StoreError } from "../adapters/store/Store.js"
import { transaction } from "../adapters/store/Transaction.js"
import { containmentStatus, sameContainment, transition } from "../core/Containment.js"
import { agentGovernanceLog } from "../core/Governance.js"
import type { ContainmentAction, ContainmentState } from "../core/schema/Containment.js"
import { containmentEvent } from "../core/EventData.js"
import { newEnvelope } from "../core/Events.js"
import { eventDraft } from "./Events.js"

export interface ContainmentChange {
  readonly agentId: string
  readonly action: ContainmentAction
  /** `actorOf(principal)`, or `system`. */
  readonly actor: string
  readonly reason: string | null
  /** Kept with the log row (an automatic pause: the checkpoint that reached the threshold). */
  readonly metadata?: Readonly<Record<string, unknown>>
  /**
   * Auto-containment: the enforcement record that makes a decision apply at most once, so a decision
   * handled twice does not pause again an agent an admin resumed in between.
   */
  readonly enforcement?: Omit<EnforcementDraft, "agent_id">
}

export type ContainmentOutcome =
  | { readonly _tag: "Changed"; readonly entry: ContainmentLogEntry; readonly containment: ContainmentState | null }
  /** The transition is not allowed from the stored state; `error` names it. Nothing was written. */
  | { readonly _tag: "Refused"; readonly error: string; readonly containment: ContainmentState | null }
  /** The decision was applied before (its enforcement record exists). Nothing was written. */
  | { readonly _tag: "Duplicate"; readonly containment: ContainmentState | null }

/** The governance record's view of a containment: its status, and why, when and by whom when contained. */
const governanceState = (containment: ContainmentState | null) =>
  containment === null ? { status: "active" } : { ...containment }

export const changeContainment = (
  change: ContainmentChange
): Effect.Effect<ContainmentOutcome, StoreError, Store | GovernanceLog | SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const store = yield* Store
    const governance = yield* GovernanceLog
    const sql = yield* SqlClient.SqlClient
    const now = new Date(yield* Clock.currentTimeMillis)
    const at = now.toISOString()
    const { agentId, action, actor, reason } = change
    return yield* transaction(
      sql,
      Effect.gen(function* () {
        const { settings, org_id } = yield* store.lockAgentSettings(agentId)
        const previous = settings.containment
        const next = transition(previous, action, { actor, reason, at })
        if (Either.isLeft(next)) {
          return { _tag: "Refused", error: next.left, containment: previous } satisfies ContainmentOutcome
        }
        if (change.enforcement !== undefined) {
          const { recorded } = yield* store.recordEnforcement({ ...change.enforcement, agent_id: agentId })
          if (!recorded) return { _tag: "Duplicate", containment: previous } satisfies ContainmentOutcome
        }
        yield* store.putAgentSettings(agentId, { containment: next.right })
        const entry: ContainmentLogEntry = {
          id: `ctl-${randomUUID()}`,
          agent_id: agentId,
          action,
          actor,
          reason,
          previous_status: containmentStatus(previous),
          new_status: containmentStatus(next.right),
          metadata: change.metadata ?? {},
          created_at: at
        }
        yield* store.appendContainmentLog(entry)
        yield* governance.append(agentGovernanceLog(agentId), {
          action: `containment.${action}`,
          actor,
          reason,
          previous_state: governanceState(previous),
          new_state: governanceState(next.right)
        })
        yield* store.enqueueOutbox([eventDraft(newEnvelope(containmentEvent(entry, org_id, now)))])
        return { _tag: "Changed", entry, containment: next.right } satisfies ContainmentOutcome
      })
    ).pipe(
      Effect.catchTag("SqlError", (cause) => Effect.fail(new StoreError({ operation: "changeContainment", cause })))
    )
  })

/**
 * Tells every gateway `containment` (undefined: active), then reads the store again and, if another
 * change committed meanwhile, tells them that one: two changes committed close together may reach the
 * gateways in either order, and the last one to finish then always leaves what the store holds (each
 * caller's last push is of a state read after its own push). Safe to repeat.
 */
export const publishContainment = (agentId: string, containment: ContainmentState | null) =>
  Effect.gen(function* () {
    const state = yield* AgentState
    yield* state.update(agentId, { containment: containment ?? undefined })
    const stored = (yield* (yield* Store).agentSettings(agentId)).containment
    if (!sameContainment(stored, containment)) {
      yield* state.update(agentId, { containment: stored ?? undefined })
    }
  })
