/**
 * A containment change: the one write path of the API's pause, resume, kill and reactivate and of
 * auto-containment (streams/Decisions.ts), so both are recorded, logged and announced alike. A change
 * has a scope: `agent`, the agent's own containment (its settings); or `key`, its provider key's
 * (adapters/store/KeyContainmentRepo.ts), which holds every agent derived from the key. Each scope
 * has its own state and transitions; the log row, governance entry and event of a key-wide change are
 * the addressed agent's, and name the scope.
 *
 * One SQL transaction locks the agent's row (and, for scope `key`, the key's), decides with
 * core/Containment.ts's `transition` on the state it read (compare-and-set: two admins acting at once are ordered, and the second is judged
 * on the first one's result), and writes together: the new settings, the containment log row, the
 * governance log entry, the enforcement record (core/schema/EnforcementRecord.ts) and its catalogue event (`agent.paused`, `agent.resumed` or `agent.killed`,
 * in the outbox). The caller then tells the gateways (`publishContainment`, `publishKeyContainment`) before it answers: the
 * store is the truth, the gateways' copy follows it, and pushing what the store holds is always safe
 * to repeat.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as SqlClient from "@effect/sql/SqlClient"
import { randomUUID } from "node:crypto"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { AgentState } from "../adapters/bus/AgentState.js"
import { GovernanceLog } from "../adapters/store/GovernanceLog.js"
import { IdentityRepo } from "../adapters/store/identity/IdentityRepo.js"
import * as KeyContainmentRepo from "../adapters/store/KeyContainmentRepo.js"
import { type ContainmentLogEntry, type EnforcementDraft, Store, StoreError } from "../adapters/store/Store.js"
import { transaction } from "../adapters/store/Transaction.js"
import { containmentInForce, containmentStatus, sameContainment, transition } from "../core/Containment.js"
import { agentGovernanceLog } from "../core/Governance.js"
import type { ContainmentAction, ContainmentScope, ContainmentState } from "../core/schema/Containment.js"
import { containmentEvent } from "../core/EventData.js"
import { ENFORCEMENT_RECORD_ID_PREFIX } from "../core/schema/EnforcementRecord.js"
import { newEnvelope } from "../core/Events.js"
import { eventDraft } from "../adapters/store/EventOutbox.js"

export interface ContainmentChange {
  readonly agentId: string
  readonly action: ContainmentAction
  /** `actorOf(principal)`, or `system`. */
  readonly actor: string
  readonly reason: string | null
  /**
   * Scope `key`: the hash of the agent's provider key, whose containment changes (every agent of the
   * key); absent: the agent's own containment (scope `agent`).
   */
  readonly keyHash?: string
  /** Kept with the log row (an automatic pause: the checkpoint that reached the threshold). */
  readonly metadata?: Readonly<Record<string, unknown>>
  /**
   * Auto-containment: what triggered it, kept with its enforcement record, which makes a decision
   * apply at most once (one record per checkpoint and kind), so a decision handled twice does not
   * pause again an agent an admin resumed in between.
   */
  readonly trigger?: {
    readonly checkpoint_id: string | null
    readonly session_id: string | null
    readonly body: unknown
  }
}

/** The enforcement record's kind of each containment action (core/schema/EnforcementRecord.ts). */
const KIND_OF_ACTION: Readonly<Record<ContainmentAction, string>> = {
  pause: "paused",
  auto_pause: "paused",
  resume: "resumed",
  kill: "killed",
  reactivate: "reactivated"
}

/** The change's enforcement record: every containment change is one (issue 26). */
const enforcementOf = (change: ContainmentChange, scope: ContainmentScope, at: string): EnforcementDraft => {
  const { checkpoint_id, session_id } = change.trigger ?? { checkpoint_id: null, session_id: null }
  return {
    record: {
      record_id: `${ENFORCEMENT_RECORD_ID_PREFIX}${randomUUID()}`,
      agent_id: change.agentId,
      kind: KIND_OF_ACTION[change.action],
      rule: change.action === "auto_pause" ? "auto_containment" : scope === "key" ? "key_containment" : "containment",
      // A person may give no reason: the record still says what was done.
      reason: change.reason === null || change.reason === "" ? `containment.${change.action}` : change.reason,
      ...(checkpoint_id === null ? {} : { checkpoint_id }),
      ...(session_id === null ? {} : { session_id }),
      actor: change.actor,
      created_at: at
    },
    body: change.trigger?.body ?? { scope }
  }
}

export type ContainmentOutcome =
  | { readonly _tag: "Changed"; readonly entry: ContainmentLogEntry; readonly containment: ContainmentState | null }
  /** The transition is not allowed from the stored state; `error` names it. Nothing was written. */
  | { readonly _tag: "Refused"; readonly error: string; readonly containment: ContainmentState | null }
  /** The decision was applied before (its enforcement record exists). Nothing was written. */
  | { readonly _tag: "Duplicate"; readonly containment: ContainmentState | null }

/** The governance record's view of a containment: its scope and status, and why, when and by whom when contained. */
const governanceState = (scope: ContainmentScope, containment: ContainmentState | null) =>
  containment === null ? { scope, status: "active" } : { scope, ...containment }

export const changeContainment = (
  change: ContainmentChange
): Effect.Effect<
  ContainmentOutcome,
  StoreError,
  Store | GovernanceLog | SqlClient.SqlClient | KeyContainmentRepo.KeyContainmentRepo
> =>
  Effect.gen(function* () {
    const store = yield* Store
    const governance = yield* GovernanceLog
    const sql = yield* SqlClient.SqlClient
    const now = new Date(yield* Clock.currentTimeMillis)
    const at = now.toISOString()
    const keys = yield* KeyContainmentRepo.KeyContainmentRepo
    const { action, actor, agentId, keyHash, reason } = change
    const scope: ContainmentScope = keyHash === undefined ? "agent" : "key"
    return yield* transaction(
      sql,
      Effect.gen(function* () {
        const { settings, org_id } = yield* store.lockAgentSettings(agentId)
        const previous = keyHash === undefined ? settings.containment : yield* keys.lock(keyHash)
        const next = transition(previous, action, { actor, reason, at }, scope)
        if (Either.isLeft(next)) {
          return { _tag: "Refused", error: next.left, containment: previous } satisfies ContainmentOutcome
        }
        // Recorded first: an automatic pause recorded before (its checkpoint and kind) changes nothing.
        const { recorded } = yield* store.recordEnforcement(enforcementOf(change, scope, at))
        if (!recorded) return { _tag: "Duplicate", containment: previous } satisfies ContainmentOutcome
        if (keyHash === undefined) yield* store.putAgentSettings(agentId, { containment: next.right })
        else yield* keys.put(keyHash, next.right, at)
        const entry: ContainmentLogEntry = {
          id: `ctl-${randomUUID()}`,
          agent_id: agentId,
          action,
          actor,
          reason,
          previous_status: containmentStatus(previous),
          new_status: containmentStatus(next.right),
          scope,
          metadata: change.metadata ?? {},
          created_at: at
        }
        yield* store.appendContainmentLog(entry)
        yield* governance.append(agentGovernanceLog(agentId), {
          action: `containment.${action}`,
          actor,
          reason,
          previous_state: governanceState(scope, previous),
          new_state: governanceState(scope, next.right)
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

/**
 * Tells every gateway the key's containment (scope `key`; null: active), then reads the store again
 * and, if another change committed meanwhile, tells them that one (as `publishContainment` does).
 */
export const publishKeyContainment = (keyHash: string, containment: ContainmentState | null) =>
  Effect.gen(function* () {
    const state = yield* AgentState
    yield* state.updateKey(keyHash, { containment: containment ?? undefined })
    const stored = yield* (yield* KeyContainmentRepo.KeyContainmentRepo).get(keyHash)
    if (!sameContainment(stored, containment)) {
      yield* state.updateKey(keyHash, { containment: stored ?? undefined })
    }
  })

/** The newest log entries `read` lists. */
export const CONTAINMENT_LOG_LIMIT = 100

/** Agents claimed with one key that a key-wide change lists (for the caller to check its rights on), at most. */
export const KEY_AGENTS_LIMIT = 1000

/**
 * A change the containment rules refuse: a transition from the state the store holds (already
 * paused, …), a change already applied, a key-wide change on an agent whose key Candor does not know.
 */
export class ContainmentRefused extends Schema.TaggedError<ContainmentRefused>()(
  "ContainmentRefused",
  { error: Schema.String },
  HttpApiSchema.annotations({ status: 400 })
) {}

/** One scope's containment as `read` shows it. */
const view = (containment: ContainmentState | null) => ({
  status: containmentStatus(containment),
  contained_at: containment?.contained_at ?? null,
  contained_by: containment?.contained_by ?? null,
  reason: containment?.reason ?? null
})

/**
 * The containment service: the API's changes, reads and threshold. A change is `changeContainment`,
 * then the gateways are told before it answers: once a pause has succeeded, every gateway refuses the
 * agent (scope `key`: every agent of the key). A refused transition also tells the gateways what the
 * store holds, so a pause retried after a `BusError` (stored, gateways not told) is refused "already
 * paused" and the gateways are told all the same. Who may act is the caller's to check.
 */
export const make = Effect.gen(function* () {
  const store = yield* Store
  const identity = yield* IdentityRepo
  const governance = yield* GovernanceLog
  const sql = yield* SqlClient.SqlClient
  const state = yield* AgentState
  const keys = yield* KeyContainmentRepo.KeyContainmentRepo
  const context = yield* Effect.context<Store | GovernanceLog | SqlClient.SqlClient | AgentState>()

  /** The agent's claim (its organization and provider key hash), when it is claimed. */
  const claimOf = (agentId: string) => identity.claimOf(agentId)

  /**
   * For a change of scope `key`: the agent's provider key hash and every agent claimed with it (the
   * caller must be allowed the change on each).
   */
  const keyOf = (agentId: string) =>
    Effect.gen(function* () {
      const claim = yield* identity.claimOf(agentId)
      if (claim === undefined) {
        return yield* new ContainmentRefused({
          error: 'scope "key": Candor knows an agent\'s provider key once the agent is claimed; claim it first'
        })
      }
      const agents = yield* keys.claimedAgents(claim.agent_hash, KEY_AGENTS_LIMIT + 1)
      if (agents.length > KEY_AGENTS_LIMIT) {
        return yield* new ContainmentRefused({
          error: `scope "key": more than ${KEY_AGENTS_LIMIT} agents are claimed with this key`
        })
      }
      return { keyHash: claim.agent_hash, agents }
    })

  /** The change, stored, then told to the gateways; the containment in force of its scope after it. */
  const change = (request: Omit<ContainmentChange, "metadata" | "trigger">) =>
    Effect.gen(function* () {
      const outcome = yield* changeContainment(request)
      if (request.keyHash === undefined) yield* publishContainment(request.agentId, outcome.containment)
      else yield* publishKeyContainment(request.keyHash, outcome.containment)
      if (outcome._tag !== "Changed") {
        const error = outcome._tag === "Refused" ? outcome.error : "this change was already applied"
        return yield* new ContainmentRefused({ error })
      }
      return outcome.containment
    }).pipe(Effect.provide(context))

  /** The agent's containment: in force, of each scope, its threshold and its newest log entries. */
  const read = (agentId: string) =>
    Effect.gen(function* () {
      const [settings, log, claim] = yield* Effect.all(
        [store.agentSettings(agentId), store.containmentLog(agentId, CONTAINMENT_LOG_LIMIT), identity.claimOf(agentId)],
        { concurrency: "unbounded" }
      )
      const key = claim === undefined ? null : yield* keys.get(claim.agent_hash)
      const inForce = containmentInForce(settings.containment, key)
      const containment = inForce?.containment
      return {
        agent_id: agentId,
        containment_status: containmentStatus(containment),
        containment_scope: inForce?.scope ?? null,
        contained_at: containment?.contained_at ?? null,
        contained_by: containment?.contained_by ?? null,
        containment_reason: containment?.reason ?? null,
        agent_containment: view(settings.containment),
        key_containment: claim === undefined ? null : view(key),
        auto_containment_threshold: settings.auto_containment_threshold,
        log: log.map((entry) => ({
          action: entry.action,
          actor: entry.actor,
          reason: entry.reason,
          previous_status: entry.previous_status,
          new_status: entry.new_status,
          scope: entry.scope,
          created_at: entry.created_at
        }))
      }
    })

  /**
   * The threshold is stored with a governance entry in one transaction. The gateways do not use it;
   * the actors read it from the store (their context is reloaded within its TTL).
   */
  const setThreshold = (agentId: string, threshold: number | null, actor: string) =>
    Effect.gen(function* () {
      yield* transaction(
        sql,
        Effect.gen(function* () {
          const { settings } = yield* store.lockAgentSettings(agentId)
          yield* store.putAgentSettings(agentId, { auto_containment_threshold: threshold })
          yield* governance.append(agentGovernanceLog(agentId), {
            action: "containment.policy",
            actor,
            previous_state: { auto_containment_threshold: settings.auto_containment_threshold },
            new_state: { auto_containment_threshold: threshold }
          })
        })
      ).pipe(
        Effect.catchTag("SqlError", (cause) => Effect.fail(new StoreError({ operation: "containment policy", cause })))
      )
      // The workers reload the agent's context on this change: the next checkpoint counts against it.
      yield* state.update(agentId, { autoContainmentThreshold: threshold ?? undefined })
      return { agent_id: agentId, auto_containment_threshold: threshold }
    })

  return { claimOf, keyOf, change, read, setThreshold }
})

export class Containment extends Context.Tag("candor/services/Containment")<
  Containment,
  Effect.Effect.Success<typeof make>
>() {}

export const layer = Layer.effect(Containment, make)
