/**
 * Platform administration: who is a platform admin, impersonation sessions (read-only, one hour;
 * admin users cannot be impersonated; the token is shown once and stored as SHA-256), and the
 * service-role key's account settings (a user's plan and admin flag, an organization's plan), which
 * apply at once in this process (`Accounts.invalidate`).
 *
 * Who may act (a platform admin or the service-role key starts a session; the session's own token or
 * a platform admin reads or ends it; account settings are the service-role key's) is the caller's to
 * check; the admin it names is the one recorded.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"
import { Accounts } from "../adapters/auth/Accounts.js"
import { IMPERSONATION_TOKEN_PREFIX } from "../adapters/auth/CredentialAuthentication.js"
import { generateSecret, hashSecret } from "../adapters/auth/Secrets.js"
import { BadRequest, Forbidden, NotFound } from "../adapters/http/ApiErrors.js"
import { CatalogRepo } from "../adapters/store/identity/CatalogRepo.js"
import { CredentialRepo, type ImpersonationSession } from "../adapters/store/identity/CredentialRepo.js"
import { IdentityRepo } from "../adapters/store/identity/IdentityRepo.js"

/** Impersonation sessions expire after one hour (docs/api.md, "Impersonation and administration"). */
export const IMPERSONATION_TTL_MS = 3_600_000

const view = (session: ImpersonationSession, now: number) => ({
  ...session,
  active: session.ended_at === null && Date.parse(session.expires_at) > now,
  read_only: true as const
})

const sessionNotFound = (sessionId: string) => new NotFound({ error: `session ${sessionId} not found` })

const noPlan = (planId: string) => new BadRequest({ error: `plan_id: no plan ${planId}` })

/** What the service-role key may set of a user. */
export interface UserSettings {
  readonly plan_id?: string | undefined
  readonly is_admin?: boolean | undefined
}

export const make = Effect.gen(function* () {
  const identities = yield* IdentityRepo
  const credentials = yield* CredentialRepo
  const catalog = yield* CatalogRepo
  const accounts = yield* Accounts

  /** Whether the user is flagged a platform admin. */
  const isPlatformAdmin = (userId: string) => Effect.map(identities.getUser(userId), (user) => user?.is_admin === true)

  /** Starts `adminId`'s read-only session as the user; the answer holds its token, shown this once. */
  const impersonate = (adminId: string, targetUserId: string, reason: string | null) =>
    Effect.gen(function* () {
      const target = yield* identities.getUser(targetUserId)
      if (target === undefined) return yield* Effect.fail(new NotFound({ error: `user ${targetUserId} not found` }))
      if (target.is_admin) return yield* Effect.fail(new Forbidden({ error: "admin users cannot be impersonated" }))
      const token = generateSecret(IMPERSONATION_TOKEN_PREFIX)
      const session = yield* credentials.createSession({
        session_id: `imps_${randomUUID()}`,
        admin_user_id: adminId,
        target_user_id: target.user_id,
        reason,
        expires_at: new Date(Date.now() + IMPERSONATION_TTL_MS).toISOString(),
        token_hash: hashSecret(token)
      })
      yield* Effect.logInfo("impersonation started").pipe(
        Effect.annotateLogs({ session_id: session.session_id, admin: adminId, target: target.user_id })
      )
      return { ...view(session, Date.now()), token }
    })

  const session = (sessionId: string) =>
    Effect.flatMap(credentials.getSession(sessionId), (session) =>
      session === undefined ? Effect.fail(sessionNotFound(sessionId)) : Effect.succeed(view(session, Date.now()))
    )

  const endSession = (sessionId: string) =>
    Effect.flatMap(credentials.endSession(sessionId), (session) =>
      session === undefined ? Effect.fail(sessionNotFound(sessionId)) : Effect.succeed(view(session, Date.now()))
    )

  /** Sets what `settings` names of the user (created if needed); a plan must exist. */
  const updateUser = (userId: string, settings: UserSettings) =>
    Effect.gen(function* () {
      if (settings.plan_id !== undefined && (yield* catalog.plan(settings.plan_id)) === undefined) {
        return yield* Effect.fail(noPlan(settings.plan_id))
      }
      const user = yield* identities.updateUser(userId, settings)
      yield* accounts.invalidate(userId)
      return user
    })

  /** Puts the organization on the plan. */
  const setOrgPlan = (orgId: string, planId: string) =>
    Effect.gen(function* () {
      if ((yield* catalog.plan(planId)) === undefined) return yield* Effect.fail(noPlan(planId))
      if ((yield* identities.getOrg(orgId)) === undefined) {
        return yield* Effect.fail(new NotFound({ error: `organization ${orgId} not found` }))
      }
      yield* identities.setOrgPlan(orgId, planId)
      yield* accounts.invalidate(orgId)
      return { updated: true }
    })

  return { isPlatformAdmin, impersonate, session, endSession, updateUser, setOrgPlan }
})

export class Administration extends Context.Tag("candor/services/Administration")<
  Administration,
  Effect.Effect.Success<typeof make>
>() {}

export const layer = Layer.effect(Administration, make)
