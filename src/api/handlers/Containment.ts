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
 * A change goes through the Containment service (services/Containment.ts: one transaction for
 * settings or the key's row, containment log, governance log, webhooks), which tells the gateways
 * before the answer: once a pause is answered 200, every gateway refuses the agent (scope `key`: every
 * agent of the key). A refused transition (400) also tells the gateways what the store holds, so a
 * pause retried after a 503 (stored, gateways not told) answers 400 "already paused" and the gateways
 * are told all the same.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { AccessControl, type AgentAction } from "../../../adapters/auth/AccessControl.js"
import { actorOf, CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { Forbidden, NotFound } from "../../../adapters/http/ApiErrors.js"
import type { ContainmentAction, ContainmentScope } from "../../../core/schema/Containment.js"
import { Containment } from "../../../services/Containment.js"
import { CandorApi } from "../Api.js"
import { gatewaysUnreachable, orgRole } from "./Access.js"

interface Target {
  readonly agent_id: string
  /** Set on the organization path. */
  readonly org_id?: string
}

const sharedKey = (action: AgentAction) =>
  new Forbidden({ error: `scope "key": the key is shared with agents you may not ${action}` })

export const ContainmentLive = HttpApiBuilder.group(CandorApi, "containment", (handlers) =>
  Effect.map(Containment, (containment) => {
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
          const claim = yield* containment.claimOf(target.agent_id)
          if (claim?.org_id !== target.org_id) {
            return yield* new NotFound({
              error: `agent ${target.agent_id} not found in organization ${target.org_id}`
            })
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
        const { agents, keyHash } = yield* containment.keyOf(target.agent_id)
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
        return keyHash
      })

    const contain = (
      target: Target,
      action: Exclude<ContainmentAction, "auto_pause">,
      reason: string | null,
      scope: ContainmentScope
    ) =>
      Effect.gen(function* () {
        const actor = yield* authorize(target, action)
        const keyHash = scope === "key" ? yield* keyOf(target, action) : undefined
        return yield* containment.change({
          agentId: target.agent_id,
          action,
          actor,
          reason,
          ...(keyHash === undefined ? {} : { keyHash })
        })
      })

    const contained = (
      target: Target,
      action: "pause" | "kill",
      payload: { readonly reason?: string | null; readonly scope?: ContainmentScope }
    ) => {
      const scope = payload.scope ?? "agent"
      return contain(target, action, payload.reason ?? null, scope).pipe(
        Effect.flatMap((state) =>
          state === null
            ? Effect.dieMessage(`${action} left the agent active`)
            : Effect.succeed({
                agent_id: target.agent_id,
                containment_scope: scope,
                containment_status: state.status,
                contained_at: state.contained_at,
                contained_by: state.contained_by,
                containment_reason: state.reason
              })
        ),
        Effect.catchTag("BusError", gatewaysUnreachable)
      )
    }

    const activated = (
      target: Target,
      action: "resume" | "reactivate",
      payload: { readonly scope?: ContainmentScope }
    ) => {
      const scope = payload.scope ?? "agent"
      return contain(target, action, null, scope).pipe(
        Effect.as({ agent_id: target.agent_id, containment_scope: scope, containment_status: "active" as const }),
        Effect.catchTag("BusError", gatewaysUnreachable)
      )
    }

    const read = (target: Target) => Effect.zipRight(authorize(target, "read"), containment.read(target.agent_id))

    const setPolicy = (target: Target, threshold: number | null) =>
      authorize(target, "write").pipe(
        Effect.flatMap((actor) => containment.setThreshold(target.agent_id, threshold, actor)),
        Effect.catchTag("BusError", gatewaysUnreachable)
      )

    return handlers
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
  })
)
