/**
 * `AccessControl` on the identity tables: the rules of AccessControl.ts, in one place.
 *
 * The caller's role on an agent:
 * - a personal agent (claimed without an organization): Owner for its claimer, invisible to others;
 * - an organization's agent: the member's role in that organization;
 * - an organization API key: its role, on its organization's agents only; a user API key: its user;
 * - the service-role key: everything.
 *
 * Actions by role: `read` any role; `write`, `pause`, `resume` Admin and up; `kill`, `reactivate`
 * Owner only. During impersonation only `read` is allowed.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Forbidden, NotFound } from "../http/ApiErrors.js"
import { IdentityRepo } from "../store/identity/IdentityRepo.js"
import type { StoreError } from "../store/Store.js"
import { AccessControl, type AgentAction } from "./AccessControl.js"
import { isServiceRoleKey, type Principal, type Role } from "./Principal.js"

const RANK: Record<Role, number> = { owner: 3, admin: 2, member: 1 }

/** The least role an action needs. */
const NEEDS: Record<AgentAction, Role> = {
  read: "member",
  write: "admin",
  pause: "admin",
  resume: "admin",
  kill: "owner",
  reactivate: "owner"
}

export const atLeast = (role: Role | undefined, needed: Role): boolean =>
  role !== undefined && RANK[role] >= RANK[needed]

const agentNotFound = (agentId: string) => new NotFound({ error: `agent ${agentId} not found` })

export const make = Effect.gen(function* () {
  const repo = yield* IdentityRepo

  /** The principal's role on the agent, or undefined when it may not see it. */
  const roleOnAgent = (principal: Principal, agentId: string): Effect.Effect<Role | undefined, StoreError> => {
    if (principal.kind === "service") return Effect.succeed("owner")
    return repo.agentAccess(agentId, principal.userId).pipe(
      Effect.map((access) => {
        if (access === undefined) return undefined
        const { claim, orgRole } = access
        if (principal.kind === "api_key" && principal.orgId !== undefined) {
          return claim.org_id === principal.orgId ? principal.role : undefined
        }
        if (claim.org_id === null) return claim.user_id === principal.userId ? "owner" : undefined
        return orgRole
      })
    )
  }

  const readOnly = (principal: Principal): string | undefined => {
    if (principal.kind === "user" && principal.impersonation !== undefined)
      return "impersonation sessions are read-only"
    if (principal.kind === "api_key" && principal.orgId !== undefined && !atLeast(principal.role, "admin")) {
      return "this API key was created under the member role, which is read-only"
    }
    return undefined
  }

  return AccessControl.of({
    agent: (principal, agentId, action) =>
      Effect.gen(function* () {
        const role = yield* roleOnAgent(principal, agentId)
        if (role === undefined) return yield* Effect.fail(agentNotFound(agentId))
        if (action === "read") return
        const refused = readOnly(principal)
        if (refused !== undefined) return yield* Effect.fail(new Forbidden({ error: refused }))
        if (!atLeast(role, NEEDS[action])) {
          return yield* Effect.fail(
            new Forbidden({ error: `${action} on agent ${agentId} needs the ${NEEDS[action]} role; you are ${role}` })
          )
        }
      }),

    visibleAgents: (principal) => {
      if (principal.kind === "service") return repo.allAgents
      if (principal.kind === "api_key" && principal.orgId !== undefined) return repo.agentsOfOrg(principal.orgId)
      return repo.agentsVisibleToUser(principal.userId)
    },

    orgRole: (principal, orgId) => {
      if (principal.kind === "service") return Effect.succeed("owner" as const)
      if (principal.kind === "api_key" && principal.orgId !== undefined) {
        return Effect.succeed(principal.orgId === orgId ? principal.role : undefined)
      }
      return repo.memberRole(orgId, principal.userId)
    },

    write: (principal) => {
      const refused = readOnly(principal)
      return refused === undefined ? Effect.void : Effect.fail(new Forbidden({ error: refused }))
    },

    serviceRole: (principal) =>
      isServiceRoleKey(principal)
        ? Effect.void
        : Effect.fail(
            new Forbidden({
              error:
                principal.kind === "service"
                  ? "this operation needs the service-role key itself: a console operator session does not carry the routes reserved to it"
                  : "this operation needs the service-role key"
            })
          )
  })
})

export const layer: Layer.Layer<AccessControl, never, IdentityRepo> = Layer.effect(AccessControl, make)
