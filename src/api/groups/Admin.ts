/**
 * Administration (docs/api.md, "Impersonation and administration"): read-only
 * impersonation sessions of one hour, started by a platform admin or the
 * service-role key; admins cannot be impersonated. And the service-role-only account settings
 * (plans, admin flag, promo codes, blog posts) a deployment needs.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { BadRequest, Forbidden, InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import { AgentId, DateTimeString, Identifier } from "../../../core/schema/Ids.js"

export const StartImpersonation = Schema.Struct({
  user_id: Identifier,
  reason: Schema.optionalWith(Schema.String.pipe(Schema.maxLength(500)), { exact: true })
}).annotations({ identifier: "StartImpersonation" })

export const ImpersonationSession = Schema.Struct({
  session_id: Identifier,
  admin_user_id: Identifier,
  target_user_id: Identifier,
  reason: Schema.NullOr(Schema.String),
  created_at: DateTimeString,
  expires_at: DateTimeString,
  ended_at: Schema.NullOr(DateTimeString),
  active: Schema.Boolean,
  read_only: Schema.Literal(true)
}).annotations({ identifier: "ImpersonationSession" })

export const StartedImpersonation = Schema.Struct({
  ...ImpersonationSession.fields,
  token: Schema.String.annotations({ description: "Send as `Authorization: Bearer <token>`; shown once" })
}).annotations({ identifier: "StartedImpersonation" })

const SessionPath = Schema.Struct({ session_id: Identifier })

export const UpdateUser = Schema.Struct({
  plan_id: Schema.optionalWith(Identifier, { exact: true }),
  is_admin: Schema.optionalWith(Schema.Boolean, { exact: true })
}).annotations({ identifier: "UpdateUser" })

export const UserAccount = Schema.Struct({
  user_id: Identifier,
  email: Schema.NullOr(Schema.String),
  plan_id: Identifier,
  is_admin: Schema.Boolean,
  created_at: DateTimeString
}).annotations({ identifier: "UserAccount" })

export const SetPlan = Schema.Struct({ plan_id: Identifier }).annotations({ identifier: "SetPlan" })

export const PromoCode = Schema.Struct({
  name: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
  discount_percent: Schema.Int.pipe(Schema.between(0, 100)),
  discount_amount_cents: Schema.NonNegativeInt
}).annotations({ identifier: "PromoCode" })

export const BlogPostInput = Schema.Struct({
  agent_id: AgentId,
  title: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(300)),
  slug: Schema.String.pipe(Schema.pattern(/^[a-z0-9][a-z0-9-]{1,98}[a-z0-9]$/)),
  summary: Schema.optionalWith(Schema.String.pipe(Schema.maxLength(2000)), { default: () => "" }),
  body: Schema.optionalWith(Schema.String.pipe(Schema.maxLength(200_000)), { default: () => "" }),
  published_at: Schema.optionalWith(DateTimeString, { exact: true })
}).annotations({ identifier: "BlogPostInput" })

const Updated = Schema.Struct({ updated: Schema.Boolean })

export class AdminApi extends HttpApiGroup.make("admin")
  .add(
    HttpApiEndpoint.post("impersonate", "/admin/impersonate")
      .setPayload(StartImpersonation)
      .addSuccess(StartedImpersonation, { status: 201 })
  )
  .add(
    HttpApiEndpoint.get("getImpersonation", "/admin/impersonation/:session_id")
      .setPath(SessionPath)
      .addSuccess(ImpersonationSession)
  )
  .add(
    HttpApiEndpoint.post("endImpersonation", "/admin/impersonation/:session_id/end")
      .setPath(SessionPath)
      .addSuccess(ImpersonationSession)
  )
  .add(
    HttpApiEndpoint.put("updateUser", "/admin/users/:user_id")
      .setPath(Schema.Struct({ user_id: Identifier }))
      .setPayload(UpdateUser)
      .addSuccess(UserAccount)
  )
  .add(
    HttpApiEndpoint.put("setOrgPlan", "/admin/orgs/:org_id/plan")
      .setPath(Schema.Struct({ org_id: Identifier }))
      .setPayload(SetPlan)
      .addSuccess(Updated)
  )
  .add(
    HttpApiEndpoint.put("putPromo", "/admin/promos/:code")
      .setPath(Schema.Struct({ code: Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9_-]{2,64}$/)) }))
      .setPayload(PromoCode)
      .addSuccess(Updated)
  )
  .add(
    HttpApiEndpoint.put("putBlogPost", "/admin/blog/posts/:post_id")
      .setPath(Schema.Struct({ post_id: Identifier }))
      .setPayload(BlogPostInput)
      .addSuccess(Updated)
  )
  .addError(BadRequest)
  .addError(Forbidden)
  .addError(NotFound)
  .addError(InternalError)
  .middleware(Authentication) {}
