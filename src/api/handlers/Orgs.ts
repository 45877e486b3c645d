/**
 * Organizations, members and invites' routes. The creator is Owner; Admins manage members and
 * invites; only the Owner deletes the organization, changes its billing or transfers ownership (then
 * stays as Admin); anyone may leave. The writes are the Organizations service's
 * (services/Organizations.ts).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { Forbidden } from "../../../adapters/http/ApiErrors.js"
import type { Org } from "../../../adapters/store/identity/IdentityRepo.js"
import type { OrgRole } from "../../../core/schema/Organization.js"
import { Organizations } from "../../../services/Organizations.js"
import { CandorApi } from "../Api.js"
import { gatewaysUnreachable, orgRole, personalUser, requireOrgRole, requireWrite } from "./Access.js"

const organization = (org: Org, role: OrgRole) => ({
  org_id: org.org_id,
  name: org.name,
  slug: org.slug,
  billing_account_id: org.billing_account_id,
  owner_user_id: org.owner_user_id,
  billing_email: org.billing_email,
  company_name: org.company_name,
  member_count: org.member_count,
  role,
  created_at: org.created_at,
  updated_at: org.updated_at
})

export const OrgsLive = HttpApiBuilder.group(CandorApi, "orgs", (handlers) =>
  Effect.map(Organizations, (orgs) =>
    handlers
      .handle("createOrg", ({ payload }) =>
        Effect.gen(function* () {
          yield* requireWrite
          const userId = yield* personalUser(yield* CurrentPrincipal)
          return organization(yield* orgs.create(payload, userId), "owner")
        })
      )
      .handle("listOrgs", () =>
        Effect.gen(function* () {
          const principal = yield* CurrentPrincipal
          if (principal.kind === "api_key" && principal.orgId !== undefined) {
            const org = yield* orgs.find(principal.orgId)
            return { orgs: org === undefined ? [] : [organization(org, principal.role ?? "member")] }
          }
          const userId = yield* personalUser(principal)
          return { orgs: (yield* orgs.ofUser(userId)).map((org) => organization(org, org.role)) }
        })
      )
      .handle("getOrg", ({ path }) =>
        Effect.gen(function* () {
          const role = yield* orgRole(path.org_id)
          return organization(yield* orgs.get(path.org_id), role)
        })
      )
      .handle("updateOrg", ({ path, payload }) =>
        Effect.gen(function* () {
          // Billing is the Owner's (the spec's roles: Admins view billing, the Owner changes it).
          const role = yield* requireOrgRole(path.org_id, "owner", true)
          return organization(yield* orgs.updateBilling(path.org_id, payload), role)
        })
      )
      .handle("deleteOrg", ({ path }) =>
        Effect.gen(function* () {
          yield* requireOrgRole(path.org_id, "owner", true)
          yield* orgs.remove(path.org_id)
          return { deleted: true }
        }).pipe(Effect.catchTag("BusError", gatewaysUnreachable))
      )
      .handle("listMembers", ({ path }) =>
        Effect.gen(function* () {
          yield* orgRole(path.org_id)
          return { org_id: path.org_id, members: yield* orgs.members(path.org_id) }
        })
      )
      .handle("setMemberRole", ({ path, payload }) =>
        Effect.zipRight(
          requireOrgRole(path.org_id, "admin", true),
          orgs.setMemberRole(path.org_id, path.user_id, payload.role)
        )
      )
      .handle("removeMember", ({ path }) =>
        Effect.gen(function* () {
          const principal = yield* CurrentPrincipal
          const self = principal.kind !== "service" && principal.userId === path.user_id
          // Anyone may leave; removing others needs Admin.
          yield* self ? Effect.zipRight(orgRole(path.org_id), requireWrite) : requireOrgRole(path.org_id, "admin", true)
          return { deleted: yield* orgs.removeMember(path.org_id, path.user_id) }
        })
      )
      .handle("transferOwnership", ({ path, payload }) =>
        Effect.gen(function* () {
          yield* requireOrgRole(path.org_id, "owner", true)
          yield* orgs.transferOwnership(path.org_id, payload.user_id)
          const principal = yield* CurrentPrincipal
          const role = principal.kind === "service" ? "owner" : yield* orgRole(path.org_id)
          return organization(yield* orgs.get(path.org_id), role)
        })
      )
      .handle("createInvite", ({ path, payload }) =>
        Effect.gen(function* () {
          yield* requireOrgRole(path.org_id, "admin", true)
          const principal = yield* CurrentPrincipal
          const invitedBy = principal.kind === "service" ? "service" : principal.userId
          return yield* orgs.invite(path.org_id, payload.email, payload.role, invitedBy)
        })
      )
      .handle("listInvites", ({ path }) =>
        Effect.gen(function* () {
          yield* requireOrgRole(path.org_id, "admin", false)
          return { invites: yield* orgs.invites(path.org_id) }
        })
      )
      .handle("revokeInvite", ({ path }) =>
        Effect.gen(function* () {
          yield* requireOrgRole(path.org_id, "admin", true)
          yield* orgs.revokeInvite(path.org_id, path.invite_id)
          return { deleted: true }
        })
      )
      .handle("acceptInvite", ({ payload }) =>
        Effect.gen(function* () {
          yield* requireWrite
          const principal = yield* CurrentPrincipal
          if (principal.kind !== "user") {
            return yield* Effect.fail(new Forbidden({ error: "invites are accepted with a user token" }))
          }
          const orgId = yield* orgs.acceptInvite(payload.token, principal)
          return organization(yield* orgs.get(orgId), yield* orgRole(orgId))
        })
      )
  )
)
