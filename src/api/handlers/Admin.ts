/**
 * Administration: impersonation sessions (platform admins or the service-role key; read-only, one
 * hour; admin users cannot be impersonated; the token is shown once and stored as SHA-256) and the
 * service-role-only settings of accounts, promo codes and blog posts.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"
import { AccessControl } from "../../../adapters/auth/AccessControl.js"
import { Accounts } from "../../../adapters/auth/Accounts.js"
import { IMPERSONATION_TOKEN_PREFIX } from "../../../adapters/auth/CredentialAuthentication.js"
import { CurrentPrincipal, isServiceRoleKey, type Principal } from "../../../adapters/auth/Principal.js"
import { generateSecret, hashSecret } from "../../../adapters/auth/Secrets.js"
import { BadRequest, Forbidden, NotFound } from "../../../adapters/http/ApiErrors.js"
import { CatalogRepo } from "../../../adapters/store/identity/CatalogRepo.js"
import { CredentialRepo, type ImpersonationSession } from "../../../adapters/store/identity/CredentialRepo.js"
import { IdentityRepo } from "../../../adapters/store/identity/IdentityRepo.js"
import { CandorApi } from "../Api.js"
import { internal } from "./Access.js"

/** Impersonation sessions expire after one hour (docs/api.md, "Impersonation and administration"). */
export const IMPERSONATION_TTL_MS = 3_600_000

const SERVICE_ACTOR = "service-role"

/**
 * A platform admin (a user token of a user flagged admin) or the service-role key itself (not a
 * console operator session: administration is reserved to the key); returns who acts.
 */
const platformAdmin = Effect.gen(function* () {
  const principal = yield* CurrentPrincipal
  if (isServiceRoleKey(principal)) return SERVICE_ACTOR
  if (principal.kind === "user" && principal.impersonation === undefined) {
    const user = yield* (yield* IdentityRepo).getUser(principal.userId)
    if (user?.is_admin === true) return principal.userId
  }
  return yield* Effect.fail(new Forbidden({ error: "this needs a platform admin or the service-role key" }))
})

const serviceRole = Effect.flatMap(CurrentPrincipal, (principal) =>
  Effect.flatMap(AccessControl, (access) => access.serviceRole(principal))
)

const view = (session: ImpersonationSession, now: number) => ({
  ...session,
  active: session.ended_at === null && Date.parse(session.expires_at) > now,
  read_only: true as const
})

/** The session's own token may read or end it; otherwise a platform admin. */
const sessionAccess = (sessionId: string) =>
  Effect.gen(function* () {
    const principal: Principal = yield* CurrentPrincipal
    if (principal.kind === "user" && principal.impersonation?.session_id === sessionId) return
    yield* platformAdmin
  })

export const AdminLive = HttpApiBuilder.group(CandorApi, "admin", (handlers) =>
  handlers
    .handle("impersonate", ({ payload }) =>
      Effect.gen(function* () {
        const adminId = yield* platformAdmin
        const target = yield* (yield* IdentityRepo).getUser(payload.user_id)
        if (target === undefined)
          return yield* Effect.fail(new NotFound({ error: `user ${payload.user_id} not found` }))
        if (target.is_admin) return yield* Effect.fail(new Forbidden({ error: "admin users cannot be impersonated" }))
        const token = generateSecret(IMPERSONATION_TOKEN_PREFIX)
        const session = yield* (yield* CredentialRepo).createSession({
          session_id: `imps_${randomUUID()}`,
          admin_user_id: adminId,
          target_user_id: target.user_id,
          reason: payload.reason ?? null,
          expires_at: new Date(Date.now() + IMPERSONATION_TTL_MS).toISOString(),
          token_hash: hashSecret(token)
        })
        yield* Effect.logInfo("impersonation started").pipe(
          Effect.annotateLogs({ session_id: session.session_id, admin: adminId, target: target.user_id })
        )
        return { ...view(session, Date.now()), token }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("getImpersonation", ({ path }) =>
      Effect.gen(function* () {
        yield* sessionAccess(path.session_id)
        const session = yield* (yield* CredentialRepo).getSession(path.session_id)
        if (session === undefined)
          return yield* Effect.fail(new NotFound({ error: `session ${path.session_id} not found` }))
        return view(session, Date.now())
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("endImpersonation", ({ path }) =>
      Effect.gen(function* () {
        yield* sessionAccess(path.session_id)
        const session = yield* (yield* CredentialRepo).endSession(path.session_id)
        if (session === undefined)
          return yield* Effect.fail(new NotFound({ error: `session ${path.session_id} not found` }))
        return view(session, Date.now())
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("updateUser", ({ path, payload }) =>
      Effect.gen(function* () {
        yield* serviceRole
        if (payload.plan_id !== undefined && (yield* (yield* CatalogRepo).plan(payload.plan_id)) === undefined) {
          return yield* Effect.fail(new BadRequest({ error: `plan_id: no plan ${payload.plan_id}` }))
        }
        const user = yield* (yield* IdentityRepo).updateUser(path.user_id, payload)
        yield* (yield* Accounts).invalidate(path.user_id)
        return user
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("setOrgPlan", ({ path, payload }) =>
      Effect.gen(function* () {
        yield* serviceRole
        if ((yield* (yield* CatalogRepo).plan(payload.plan_id)) === undefined) {
          return yield* Effect.fail(new BadRequest({ error: `plan_id: no plan ${payload.plan_id}` }))
        }
        const repo = yield* IdentityRepo
        if ((yield* repo.getOrg(path.org_id)) === undefined) {
          return yield* Effect.fail(new NotFound({ error: `organization ${path.org_id} not found` }))
        }
        yield* repo.setOrgPlan(path.org_id, payload.plan_id)
        yield* (yield* Accounts).invalidate(path.org_id)
        return { updated: true }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("putPromo", ({ path, payload }) =>
      Effect.gen(function* () {
        yield* serviceRole
        yield* (yield* CatalogRepo).putPromo({ code: path.code.toUpperCase(), ...payload })
        return { updated: true }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("putBlogPost", ({ path, payload }) =>
      Effect.gen(function* () {
        yield* serviceRole
        const catalog = yield* CatalogRepo
        if ((yield* catalog.agentRecord(payload.agent_id)) === undefined) {
          return yield* Effect.fail(new NotFound({ error: `agent ${payload.agent_id} is not a claimed agent` }))
        }
        yield* catalog.putPost({
          post_id: path.post_id,
          agent_id: payload.agent_id,
          title: payload.title,
          slug: payload.slug,
          summary: payload.summary,
          body: payload.body,
          published_at: payload.published_at ?? new Date().toISOString()
        })
        return { updated: true }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
)
