/**
 * Private means private on the routes that answer without credentials (SECURITY.md, "Unauthenticated
 * routes"; docs/reputation.md, "visibility"): a private agent, its checkpoints and a team holding it
 * are answered exactly as an unknown id (the caller's own `NotFound`, whose text is the one an unknown
 * id gets), unless the request carries a credential that may read the agent: its owner, a member of
 * its organization (any role), the service-role key.
 *
 * Credentials are looked at only when the agent is private, so a public route costs a public or
 * unlisted agent nothing more. A credential that does not authenticate, or may not read the agent,
 * gets the same 404 as no credential: neither 401 nor 403 may tell a private id from an unknown one.
 * What is private is the PublicAccess service's to read (services/PublicAccess.ts).
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { AccessControl } from "../../../adapters/auth/AccessControl.js"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import type { Principal } from "../../../adapters/auth/Principal.js"
import type { InternalError, NotFound, ServiceUnavailable } from "../../../adapters/http/ApiErrors.js"
import type { Visibility } from "../../../core/schema/Reputation.js"
import { PublicAccess } from "../../../services/PublicAccess.js"

const CREDENTIAL_HEADERS = ["authorization", "x-api-key", "x-service-api-key"] as const

/**
 * The request's principal when it carries a credential that authenticates, else undefined. The
 * Authentication middleware's Bearer scheme reads every credential header itself
 * (adapters/auth/CredentialAuthentication.ts), so it is the one asked, whatever the header.
 */
const viewer = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  if (!CREDENTIAL_HEADERS.some((header) => request.headers[header] !== undefined)) return undefined
  const authentication = yield* Authentication
  return yield* authentication.bearer(Redacted.make("")).pipe(
    Effect.catchTags({
      Unauthorized: () => Effect.succeed(undefined),
      Forbidden: () => Effect.succeed(undefined),
      TooManyRequests: () => Effect.succeed(undefined)
    }),
    // The scheme's requirements besides the request (route context, scope) are unused by it.
    Effect.scoped
  ) as Effect.Effect<Principal | undefined, InternalError | ServiceUnavailable>
})

/** Whether the request's credential may read the agent (Member and up, its owner, the service-role key). */
export const viewerMayRead = (agentId: string) =>
  Effect.gen(function* () {
    const principal = yield* viewer
    if (principal === undefined) return false
    const access = yield* (yield* AccessControl)
      .agent(principal, agentId, "read")
      .pipe(
        Effect.as(true),
        Effect.catchTags({ NotFound: () => Effect.succeed(false), Forbidden: () => Effect.succeed(false) })
      )
    return access
  })

/**
 * Whether the agent may be shown to the request: false only for a private agent the request's
 * credential (if any) may not read. `visibility` when the caller has read it already.
 */
export const agentShown = (agentId: string, visibility?: Visibility | undefined) =>
  Effect.gen(function* () {
    const known = visibility ?? (yield* (yield* PublicAccess).visibility(agentId))
    return known !== "private" || (yield* viewerMayRead(agentId))
  })

/**
 * Fails with `unknown` when the agent is private and the request may not read it; succeeds
 * otherwise (unknown agents included: the route answers them as it always did).
 */
export const hidePrivate = <E extends NotFound>(agentId: string, unknown: E) =>
  Effect.flatMap(agentShown(agentId), (shown) => (shown ? Effect.void : Effect.fail(unknown)))

/**
 * Whether the team may be shown to the request: a team holding a private agent is shown only to a
 * credential of its organization (its Owner, Admins and Members) or the service-role key. An unknown
 * team is "shown" (the route answers it as unknown anyway).
 */
export const teamShown = (teamId: string) =>
  Effect.gen(function* () {
    const orgId = yield* (yield* PublicAccess).privateTeamOrg(teamId)
    if (orgId === undefined) return true
    const principal = yield* viewer
    if (principal === undefined) return false
    if (principal.kind === "service") return true
    return (yield* (yield* AccessControl).orgRole(principal, orgId)) !== undefined
  })
