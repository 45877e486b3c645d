/**
 * Containment routes. Who may act is `AccessControl`'s rule for the action (pause and resume:
 * Admin and up; kill and reactivate: Owner; the threshold: Admin and up; reading: any member; nothing
 * but reading during impersonation or with a member-role key). On the organization path the agent
 * must also be claimed into that organization and the caller a member of it (else 404).
 *
 * A change has a scope: `agent` (the default), the agent's own containment; or `key`, its provider
 * key's, which holds every agent derived from the key, `x-candor-agent` names not seen yet included.
 * Candor knows an agent's key hash once the agent is claimed (the claimer proved possession of the
 * key), so scope `key` needs a claimed agent (else 400); and since every agent of the key is touched,
 * the caller must be allowed the action on each agent claimed with the key (else 403): one tenant
 * never contains, or frees, another's agents.
 *
 * A change goes through services/Containment.ts (one transaction: settings or the key's row,
 * containment log, governance log, webhooks), then reaches the gateways before the answer: once a
 * pause is answered 200, every gateway refuses the agent (scope `key`: every agent of the key). A refused transition (400) also tells the gateways what the
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
import * as KeyContainmentRepo from "../../../adapters/store/KeyContainmentRepo.js"
import { containmentInForce, containmentStatus } from "../../../core/Containment.js"
import { agentGovernanceLog } from "../../../core/Governance.js"
import type { ContainmentAction, ContainmentScope, ContainmentState } from "../../../core/schema/Containment.js"
import { changeContainment, publishContainment, publishKeyContainment } from "../../../services/Containment.js"
import { CandorApi } from "../Api.js"
import { gatewaysUnreachable, internal, orgRole } from "./Access.js"

/** The newest log entries `GET …/containment` lists. */
export const CONTAINMENT_LOG_LIMIT = 100

/** Agents claimed with one key that a key-wide change checks the caller's rights on, at most. */
export const KEY_AGENTS_LIMIT = 1000

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

/**
 * The agent's provider key hash, for a change of scope `key`, once the caller may take `action` on
 * every agent claimed with that key (not only the one addressed).
 */
const keyOf = (target: Target, action: AgentAction) =>
  Effect.gen(function* () {
    const claim = yield* (yield* IdentityRepo).claimOf(target.agent_id)
    if (claim === undefined) {
      return yield* new BadRequest({
        error: 'scope "key": Candor knows an agent\'s provider key once the agent is claimed; claim it first'
      })
    }
    const agents = yield* (yield* KeyContainmentRepo.make).claimedAgents(claim.agent_hash, KEY_AGENTS_LIMIT + 1)
    if (agents.length > KEY_AGENTS_LIMIT) {
      return yield* new BadRequest({
        error: `scope "key": more than ${KEY_AGENTS_LIMIT} agents are claimed with this key`
      })
    }
    const principal = yield* CurrentPrincipal
    const access = yield* AccessControl
    for (const agentId of agents) {
      if (agentId === target.agent_id) continue
      yield* access.agent(principal, agentId, action).pipe(
        Effect.catchTags({
          NotFound: () => Effect.fail(sharedKey(action)),
          Forbidden: () => Effect.fail(sharedKey(action))
        })
      )
    }
    return claim.agent_hash
  })

const sharedKey = (action: AgentAction) =>
  new Forbidden({ error: `scope "key": the key is shared with agents you may not ${action}` })

const contain = (
  target: Target,
  action: Exclude<ContainmentAction, "auto_pause">,
  reason: string | null,
  scope: ContainmentScope
) =>
  Effect.gen(function* () {
    const actor = yield* authorize(target, action)
    const keyHash = scope === "key" ? yield* keyOf(target, action) : undefined
    const outcome = yield* changeContainment({
      agentId: target.agent_id,
      action,
      actor,
      reason,
      ...(keyHash === undefined ? {} : { keyHash })
    })
    if (keyHash === undefined) yield* publishContainment(target.agent_id, outcome.containment)
    else yield* publishKeyContainment(keyHash, outcome.containment)
    if (outcome._tag !== "Changed") {
      const error = outcome._tag === "Refused" ? outcome.error : "this change was already applied"
      return yield* new BadRequest({ error })
    }
    return outcome.containment
  })

const contained = (
  target: Target,
  action: "pause" | "kill",
  payload: { readonly reason?: string | null; readonly scope?: ContainmentScope }
) => {
  const scope = payload.scope ?? "agent"
  return contain(target, action, payload.reason ?? null, scope).pipe(
    Effect.flatMap((containment) =>
      containment === null
        ? Effect.dieMessage(`${action} left the agent active`)
        : Effect.succeed({
            agent_id: target.agent_id,
            containment_scope: scope,
            containment_status: containment.status,
            contained_at: containment.contained_at,
            contained_by: containment.contained_by,
            containment_reason: containment.reason
          })
    ),
    Effect.catchTag("StoreError", internal),
    Effect.catchTag("BusError", gatewaysUnreachable)
  )
}

const activated = (target: Target, action: "resume" | "reactivate", payload: { readonly scope?: ContainmentScope }) => {
  const scope = payload.scope ?? "agent"
  return contain(target, action, null, scope).pipe(
    Effect.as({ agent_id: target.agent_id, containment_scope: scope, containment_status: "active" as const }),
    Effect.catchTag("StoreError", internal),
    Effect.catchTag("BusError", gatewaysUnreachable)
  )
}

/** One scope's containment as `GET …/containment` shows it. */
const view = (containment: ContainmentState | null) => ({
  status: containmentStatus(containment),
  contained_at: containment?.contained_at ?? null,
  contained_by: containment?.contained_by ?? null,
  reason: containment?.reason ?? null
})

const read = (target: Target) =>
  Effect.gen(function* () {
    yield* authorize(target, "read")
    const store = yield* Store
    const [settings, log, claim] = yield* Effect.all(
      [
        store.agentSettings(target.agent_id),
        store.containmentLog(target.agent_id, CONTAINMENT_LOG_LIMIT),
        Effect.flatMap(IdentityRepo, (repo) => repo.claimOf(target.agent_id))
      ],
      { concurrency: "unbounded" }
    )
    const key = claim === undefined ? null : yield* (yield* KeyContainmentRepo.make).get(claim.agent_hash)
    const inForce = containmentInForce(settings.containment, key)
    const containment = inForce?.containment
    return {
      agent_id: target.agent_id,
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
    .handle("agentResume", ({ path, payload }) => activated(path, "resume", payload))
    .handle("agentKill", ({ path, payload }) => contained(path, "kill", payload))
    .handle("agentReactivate", ({ path, payload }) => activated(path, "reactivate", payload))
    .handle("agentContainment", ({ path }) => read(path))
    .handle("agentContainmentPolicy", ({ path, payload }) => setPolicy(path, payload.auto_containment_threshold))
    .handle("orgPause", ({ path, payload }) => contained(path, "pause", payload))
    .handle("orgResume", ({ path, payload }) => activated(path, "resume", payload))
    .handle("orgKill", ({ path, payload }) => contained(path, "kill", payload))
    .handle("orgReactivate", ({ path, payload }) => activated(path, "reactivate", payload))
    .handle("orgContainment", ({ path }) => read(path))
    .handle("orgContainmentPolicy", ({ path, payload }) => setPolicy(path, payload.auto_containment_threshold))
)
