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
import { Identifier } from "../../../core/schema/Ids.js"
import { BlogPostInput } from "../../../core/schema/Blog.js"
import {
  StartImpersonation,
  ImpersonationSession,
  StartedImpersonation,
  UpdateUser,
  UserAccount,
  SetPlan,
  PromoCode
} from "../../../core/schema/Admin.js"

const SessionPath = Schema.Struct({ session_id: Identifier })

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
