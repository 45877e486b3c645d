/**
 * Administration: impersonation sessions (platform admins or the service-role key) and the
 * service-role-only settings of accounts (services/Administration.ts), promo codes
 * (services/Billing.ts) and blog posts (services/Blog.ts).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { AccessControl } from "../../../adapters/auth/AccessControl.js"
import { CurrentPrincipal, isServiceRoleKey, type Principal } from "../../../adapters/auth/Principal.js"
import { Forbidden } from "../../../adapters/http/ApiErrors.js"
import { Administration } from "../../../services/Administration.js"
import { Billing } from "../../../services/Billing.js"
import { Blog } from "../../../services/Blog.js"
import { CandorApi } from "../Api.js"

const SERVICE_ACTOR = "service-role"

const serviceRole = Effect.flatMap(CurrentPrincipal, (principal) =>
  Effect.flatMap(AccessControl, (access) => access.serviceRole(principal))
)

export const AdminLive = HttpApiBuilder.group(CandorApi, "admin", (handlers) =>
  Effect.gen(function* () {
    const administration = yield* Administration
    const billing = yield* Billing
    const blog = yield* Blog

    /**
     * A platform admin (a user token of a user flagged admin) or the service-role key itself (not a
     * console operator session: administration is reserved to the key); returns who acts.
     */
    const platformAdmin = Effect.gen(function* () {
      const principal = yield* CurrentPrincipal
      if (isServiceRoleKey(principal)) return SERVICE_ACTOR
      if (principal.kind === "user" && principal.impersonation === undefined) {
        if (yield* administration.isPlatformAdmin(principal.userId)) return principal.userId
      }
      return yield* Effect.fail(new Forbidden({ error: "this needs a platform admin or the service-role key" }))
    })

    /** The session's own token may read or end it; otherwise a platform admin. */
    const sessionAccess = (sessionId: string) =>
      Effect.gen(function* () {
        const principal: Principal = yield* CurrentPrincipal
        if (principal.kind === "user" && principal.impersonation?.session_id === sessionId) return
        yield* platformAdmin
      })

    return handlers
      .handle("impersonate", ({ payload }) =>
        Effect.flatMap(platformAdmin, (adminId) =>
          administration.impersonate(adminId, payload.user_id, payload.reason ?? null)
        )
      )
      .handle("getImpersonation", ({ path }) =>
        Effect.zipRight(sessionAccess(path.session_id), administration.session(path.session_id))
      )
      .handle("endImpersonation", ({ path }) =>
        Effect.zipRight(sessionAccess(path.session_id), administration.endSession(path.session_id))
      )
      .handle("updateUser", ({ path, payload }) =>
        Effect.zipRight(serviceRole, administration.updateUser(path.user_id, payload))
      )
      .handle("setOrgPlan", ({ path, payload }) =>
        Effect.zipRight(serviceRole, administration.setOrgPlan(path.org_id, payload.plan_id))
      )
      .handle("putPromo", ({ path, payload }) => Effect.zipRight(serviceRole, billing.putPromo(path.code, payload)))
      .handle("putBlogPost", ({ path, payload }) => Effect.zipRight(serviceRole, blog.putPost(path.post_id, payload)))
  })
)
