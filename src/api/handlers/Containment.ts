/**
 * Containment routes. Who may act is `AccessControl`'s rule for the action (pause and resume:
 * Admin and up; kill and reactivate: Owner; the threshold: Admin and up; reading: any member; nothing
 * but reading during impersonation or with a member-role key). On the organization path the agent
 * must also be claimed into that organization and the caller a member of it (else 404).
 *
 * A change goes through streams/Containment.ts (one transaction: settings, containment log,
 * governance log, webhooks), then reaches the gateways before the answer: once a pause is answered
 * 200, every gateway refuses the agent. A refused transition (400) also tells the gateways what the
 * store holds, so a pause retried after a 503 (stored, gateways not told) answers 400 "already
 * paused" and the gateways are told all the same.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import { AccessControl, type AgentAction } from "../../../adapters/auth/AccessControl.js"
import { actorOf, CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { AgentState } from "../../../adapters/bus/AgentState.js"
import { BadRequest, Forbidden, NotFound } from "../../../adapters/http/ApiErrors.js"
import { IdentityRepo } from "../../../adapters/store/identity/IdentityRepo.js"
import { GovernanceLog } from "../../../adapters/store/GovernanceLog.js"
import { Store, StoreError } from "../../../adapters/store/Store.js"
import { transaction } from "../../../adapters/store/Transaction.js"
import { containmentStatus } from "../../../core/Containment.js"
import { agentGovernanceLog } from "../../../core/Governance.js"
import type { ContainmentAction } from "../../../core/schema/Containment.js"
import { changeContainment, publishContainment } from "../../../streams/Containment.js"
import { CandorApi } from "../Api.js"
import { gatewaysUnreachable, internal, orgRole } from "./Access.js"

/** The newest log entries `GET …/containment` lists. */
export const CONTAINMENT_LOG_LIMIT = 100

interface Target {
  readonly agent_id: string
  /** Set on the organization path. */
  readonly org_id?: string
}

/** The caller may take `action` on the agent (and, on the organization path, the agent is that organization's). */
const authorize = (target: Target, action: AgentAction) =>
  Effect.gen(function* () {
    const principal = yield* CurrentPrincipal
    // Containment is out of an impersonation session's reach altogether, reads included.
    if (principal.kind === "user" && principal.impersonation !== undefined) {
      return yield* new Forbidden({ error: "impersonation sessions may not use the containment routes" })
    }
    if (target.org_id !== undefined) {
      yield* orgRole(target.org_id)
      const claim = yield* (yield* IdentityRepo).claimOf(target.agent_id)
      if (claim?.org_id !== target.org_id) {
        return yield* new NotFound({ error: `agent ${target.agent_id} not found in organization ${target.org_id}` })
      }
    }
    yield* (yield* AccessControl).agent(principal, target.agent_id, action)
    return actorOf(principal)
  })

const contain = (target: Target, action: Exclude<ContainmentAction, "auto_pause">, reason: string | null) =>
  Effect.gen(function* () {
    const actor = yield* authorize(target, action)
    const outcome = yield* changeContainment({ agentId: target.agent_id, action, actor, reason })
    yield* publishContainment(target.agent_id, outcome.containment)
    if (outcome._tag !== "Changed") {
      const error = outcome._tag === "Refused" ? outcome.error : "this change was already applied"
      return yield* new BadRequest({ error })
    }
    return outcome.containment
  })

const contained = (target: Target, action: "pause" | "kill", payload: { readonly reason?: string | null }) =>
  contain(target, action, payload.reason ?? null).pipe(
    Effect.flatMap((containment) =>
      containment === null
        ? Effect.dieMessage(`${action} left the agent active`)
        : Effect.succeed({
            agent_id: target.agent_id,
            containment_status: containment.status,
            contained_at: containment.contained_at,
            contained_by: containment.contained_by,
            containment_reason: containment.reason
          })
    ),
    Effect.catchTag("StoreError", internal),
    Effect.catchTag("BusError", gatewaysUnreachable)
  )

const activated = (target: Target, action: "resume" | "reactivate") =>
  contain(target, action, null).pipe(
    Effect.as({ agent_id: target.agent_id, containment_status: "active" as const }),
    Effect.catchTag("StoreError", internal),
    Effect.catchTag("BusError", gatewaysUnreachable)
  )

const read = (target: Target) =>
  Effect.gen(function* () {
    yield* authorize(target, "read")
    const store = yield* Store
    const [settings, log] = yield* Effect.all(
      [store.agentSettings(target.agent_id), store.containmentLog(target.agent_id, CONTAINMENT_LOG_LIMIT)],
      { concurrency: "unbounded" }
    )
    const containment = settings.containment
    return {
      agent_id: target.agent_id,
      containment_status: containmentStatus(containment),
      contained_at: containment?.contained_at ?? null,
      contained_by: containment?.contained_by ?? null,
      containment_reason: containment?.reason ?? null,
      auto_containment_threshold: settings.auto_containment_threshold,
      log: log.map((entry) => ({
        action: entry.action,
        actor: entry.actor,
        reason: entry.reason,
        previous_status: entry.previous_status,
        new_status: entry.new_status,
        created_at: entry.created_at
      }))
    }
  }).pipe(Effect.catchTag("StoreError", internal))

/**
 * The threshold is stored with a governance entry in one transaction. The gateways do not use it;
 * the actors read it from the store (their context is reloaded within its TTL).
 */
const setPolicy = (target: Target, threshold: number | null) =>
  Effect.gen(function* () {
    const actor = yield* authorize(target, "write")
    const store = yield* Store
    const governance = yield* GovernanceLog
    const sql = yield* SqlClient.SqlClient
    yield* transaction(
      sql,
      Effect.gen(function* () {
        const { settings } = yield* store.lockAgentSettings(target.agent_id)
        yield* store.putAgentSettings(target.agent_id, { auto_containment_threshold: threshold })
        yield* governance.append(agentGovernanceLog(target.agent_id), {
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
    yield* (yield* AgentState).update(target.agent_id, { autoContainmentThreshold: threshold ?? undefined })
    return { agent_id: target.agent_id, auto_containment_threshold: threshold }
  }).pipe(Effect.catchTag("StoreError", internal), Effect.catchTag("BusError", gatewaysUnreachable))

export const ContainmentLive = HttpApiBuilder.group(CandorApi, "containment", (handlers) =>
  handlers
    .handle("agentPause", ({ path, payload }) => contained(path, "pause", payload))
    .handle("agentResume", ({ path }) => activated(path, "resume"))
    .handle("agentKill", ({ path, payload }) => contained(path, "kill", payload))
    .handle("agentReactivate", ({ path }) => activated(path, "reactivate"))
    .handle("agentContainment", ({ path }) => read(path))
    .handle("agentContainmentPolicy", ({ path, payload }) => setPolicy(path, payload.auto_containment_threshold))
    .handle("orgPause", ({ path, payload }) => contained(path, "pause", payload))
    .handle("orgResume", ({ path }) => activated(path, "resume"))
    .handle("orgKill", ({ path, payload }) => contained(path, "kill", payload))
    .handle("orgReactivate", ({ path }) => activated(path, "reactivate"))
    .handle("orgContainment", ({ path }) => read(path))
    .handle("orgContainmentPolicy", ({ path, payload }) => setPolicy(path, payload.auto_containment_threshold))
)
