/**
 * Checks shared by the identity handlers (organizations, keys, admin): who the caller is, their
 * role in an organization. A store failure is not caught here nor in a handler: HttpApi answers the
 * `StoreError` itself, once for every route (adapters/http/StoreFailure.ts).
 */
import * as Effect from "effect/Effect"
import { AccessControl } from "../../../adapters/auth/AccessControl.js"
import { atLeast } from "../../../adapters/auth/IdentityAccessControl.js"
import { CurrentPrincipal, type Principal, type Role } from "../../../adapters/auth/Principal.js"
import type { BusError } from "../../../adapters/bus/BusError.js"
import { Forbidden, NotFound, ServiceUnavailable } from "../../../adapters/http/ApiErrors.js"

/**
 * The gateways' shared state (NATS KV) could not be written, past its retries. The change is stored;
 * 503 tells the client to send it again (every such write is idempotent), which tells the gateways.
 */
export const gatewaysUnreachable = (error: BusError) =>
  Effect.zipRight(
    Effect.logWarning("agent state not shared with the gateways").pipe(Effect.annotateLogs({ error: error.message })),
    Effect.fail(
      new ServiceUnavailable({
        error: "saved, but the gateways cannot be told right now (NATS unreachable): send it again shortly"
      })
    )
  )

/** A user token (or a user's personal API key): organization keys act for their organization only. */
export const personalUser = (principal: Principal): Effect.Effect<string, Forbidden> =>
  principal.kind === "user" || (principal.kind === "api_key" && principal.orgId === undefined)
    ? Effect.succeed(principal.userId)
    : Effect.fail(new Forbidden({ error: "this operation needs a user token or a personal API key" }))

/** The caller's role in the organization; 404 when not a member (organizations do not leak). */
export const orgRole = (orgId: string) =>
  Effect.gen(function* () {
    const principal = yield* CurrentPrincipal
    const role = yield* (yield* AccessControl).orgRole(principal, orgId)
    if (role === undefined) return yield* Effect.fail(new NotFound({ error: `organization ${orgId} not found` }))
    return role
  })

/** The caller has at least `needed` in the organization (and may write, for writes). */
export const requireOrgRole = (orgId: string, needed: Role, write: boolean) =>
  Effect.gen(function* () {
    const role = yield* orgRole(orgId)
    if (write) yield* (yield* AccessControl).write(yield* CurrentPrincipal)
    if (!atLeast(role, needed)) {
      return yield* Effect.fail(
        new Forbidden({ error: `this needs the ${needed} role in the organization; you are ${role}` })
      )
    }
    return role
  })

/** Writes need a principal that may write at all (not impersonating, not a member-role key). */
export const requireWrite = Effect.flatMap(CurrentPrincipal, (principal) =>
  Effect.flatMap(AccessControl, (access) => access.write(principal))
)
