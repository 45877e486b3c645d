/**
 * Organizations, members and invites. The creator is Owner; Admins manage members and invites;
 * only the Owner deletes the organization or transfers ownership (then stays as Admin). Invite
 * tokens are shown once and stored as SHA-256. Removing or demoting a member revokes the
 * organization keys they created above their new role, in the same transaction.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"
import { CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { generateSecret, hashSecret } from "../../../adapters/auth/Secrets.js"
import { BadRequest, Forbidden, NotFound } from "../../../adapters/http/ApiErrors.js"
import { CredentialRepo } from "../../../adapters/store/identity/CredentialRepo.js"
import { IdentityRepo, type Org } from "../../../adapters/store/identity/IdentityRepo.js"
import { StoreError } from "../../../adapters/store/Store.js"
import { transaction } from "../../../adapters/store/Transaction.js"
import type { OrgRole } from "../../../core/schema/Organization.js"
import { CandorApi } from "../Api.js"
import { gatewaysUnreachable, internal, orgRole, personalUser, requireOrgRole, requireWrite } from "./Access.js"
import { pushAgentPolicy } from "../../../services/PolicyPropagation.js"
import { pushResolvedConscience } from "../../../services/ConscienceState.js"

/** How long an invite can be accepted. */
const INVITE_TTL_MS = 7 * 24 * 3_600_000

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

const loadOrg = (orgId: string) =>
  Effect.flatMap(IdentityRepo, (repo) => repo.getOrg(orgId)).pipe(
    Effect.flatMap((org) =>
      org === undefined ? Effect.fail(new NotFound({ error: `organization ${orgId} not found` })) : Effect.succeed(org)
    )
  )

/** Revokes what a member's new role (none: gone) no longer covers of the keys they created. */
const revokeKeysAbove = (orgId: string, userId: string, role: OrgRole | undefined) =>
  Effect.flatMap(CredentialRepo, (credentials) => credentials.revokeKeysAbove(orgId, userId, role))

/** A membership change and the revocation of the keys it ends, together or not at all. */
const inTransaction = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    transaction(sql, effect).pipe(
      Effect.catchTag("SqlError", (cause) => Effect.fail(new StoreError({ operation: "membership", cause })))
    )
  )

const memberNotFound = (userId: string) =>
  new NotFound({ error: `user ${userId} is not a member of this organization` })

export const OrgsLive = HttpApiBuilder.group(CandorApi, "orgs", (handlers) =>
  handlers
    .handle("createOrg", ({ payload }) =>
      Effect.gen(function* () {
        yield* requireWrite
        const userId = yield* personalUser(yield* CurrentPrincipal)
        const org = yield* (yield* IdentityRepo).createOrg({
          org_id: `org_${randomUUID()}`,
          billing_account_id: `ba_${randomUUID()}`,
          name: payload.name,
          slug: payload.slug,
          owner_user_id: userId
        })
        return organization(org, "owner")
      }).pipe(
        Effect.catchTags({
          SlugTaken: ({ slug }) => Effect.fail(new BadRequest({ error: `slug ${slug} is already taken` })),
          StoreError: internal
        })
      )
    )
    .handle("listOrgs", () =>
      Effect.gen(function* () {
        const principal = yield* CurrentPrincipal
        const repo = yield* IdentityRepo
        if (principal.kind === "api_key" && principal.orgId !== undefined) {
          const org = yield* repo.getOrg(principal.orgId)
          return { orgs: org === undefined ? [] : [organization(org, principal.role ?? "member")] }
        }
        const userId = yield* personalUser(principal)
        return { orgs: (yield* repo.orgsOf(userId)).map((org) => organization(org, org.role)) }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("getOrg", ({ path }) =>
      Effect.gen(function* () {
        const role = yield* orgRole(path.org_id)
        return organization(yield* loadOrg(path.org_id), role)
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("updateOrg", ({ path, payload }) =>
      Effect.gen(function* () {
        // Billing is the Owner's (the spec's roles: Admins view billing, the Owner changes it).
        const role = yield* requireOrgRole(path.org_id, "owner", true)
        const org = yield* (yield* IdentityRepo).updateOrgBilling(path.org_id, payload)
        if (org === undefined) return yield* new NotFound({ error: `organization ${path.org_id} not found` })
        return organization(org, role)
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("deleteOrg", ({ path }) =>
      Effect.gen(function* () {
        yield* requireOrgRole(path.org_id, "owner", true)
        const repo = yield* IdentityRepo
        const agents = yield* repo.agentsOfOrg(path.org_id)
        yield* repo.deleteOrg(path.org_id)
        // Its agents are personal now: no longer under the organization's tool policy nor its conscience values.
        yield* Effect.forEach(agents, pushAgentPolicy, { concurrency: 8, discard: true })
        yield* pushResolvedConscience(agents)
        return { deleted: true }
      }).pipe(Effect.catchTag("StoreError", internal), Effect.catchTag("BusError", gatewaysUnreachable))
    )
    .handle("listMembers", ({ path }) =>
      Effect.gen(function* () {
        yield* orgRole(path.org_id)
        return { org_id: path.org_id, members: yield* (yield* IdentityRepo).members(path.org_id) }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("setMemberRole", ({ path, payload }) =>
      Effect.gen(function* () {
        yield* requireOrgRole(path.org_id, "admin", true)
        const repo = yield* IdentityRepo
        if (payload.role === "owner") {
          return yield* Effect.fail(
            new BadRequest({ error: "role: use POST /v1/orgs/{org_id}/transfer-ownership to make an owner" })
          )
        }
        const current = yield* repo.memberRole(path.org_id, path.user_id)
        if (current === undefined) return yield* Effect.fail(memberNotFound(path.user_id))
        if (current === "owner") {
          return yield* Effect.fail(new Forbidden({ error: "the owner's role changes only by transferring ownership" }))
        }
        // A demoted member's keys above the new role stop for good (docs/api.md, "API keys").
        yield* inTransaction(
          Effect.zipRight(
            repo.putMember(path.org_id, path.user_id, payload.role),
            revokeKeysAbove(path.org_id, path.user_id, payload.role)
          )
        )
        const member = (yield* repo.members(path.org_id)).find((m) => m.user_id === path.user_id)
        if (member === undefined) return yield* Effect.fail(memberNotFound(path.user_id))
        return member
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("removeMember", ({ path }) =>
      Effect.gen(function* () {
        const principal = yield* CurrentPrincipal
        const self = principal.kind !== "service" && principal.userId === path.user_id
        // Anyone may leave; removing others needs Admin.
        yield* self ? Effect.zipRight(orgRole(path.org_id), requireWrite) : requireOrgRole(path.org_id, "admin", true)
        const repo = yield* IdentityRepo
        const current = yield* repo.memberRole(path.org_id, path.user_id)
        if (current === undefined) return yield* Effect.fail(memberNotFound(path.user_id))
        if (current === "owner") {
          return yield* Effect.fail(new BadRequest({ error: "the owner cannot be removed; transfer ownership first" }))
        }
        // A member who leaves or is removed takes the organization keys they created with them.
        const deleted = yield* inTransaction(
          Effect.zipLeft(
            repo.removeMember(path.org_id, path.user_id),
            revokeKeysAbove(path.org_id, path.user_id, undefined)
          )
        )
        return { deleted }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("transferOwnership", ({ path, payload }) =>
      Effect.gen(function* () {
        yield* requireOrgRole(path.org_id, "owner", true)
        const repo = yield* IdentityRepo
        if ((yield* repo.memberRole(path.org_id, payload.user_id)) === undefined) {
          return yield* Effect.fail(memberNotFound(payload.user_id))
        }
        const previous = (yield* loadOrg(path.org_id)).owner_user_id
        // The previous Owner stays Admin: their owner-role keys stop.
        yield* inTransaction(
          Effect.zipRight(
            repo.transferOwnership(path.org_id, payload.user_id),
            previous === payload.user_id ? Effect.void : revokeKeysAbove(path.org_id, previous, "admin")
          )
        )
        const principal = yield* CurrentPrincipal
        const role = principal.kind === "service" ? "owner" : yield* orgRole(path.org_id)
        return organization(yield* loadOrg(path.org_id), role)
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("createInvite", ({ path, payload }) =>
      Effect.gen(function* () {
        yield* requireOrgRole(path.org_id, "admin", true)
        const principal = yield* CurrentPrincipal
        const token = generateSecret("inv")
        const invite = yield* (yield* IdentityRepo).createInvite({
          invite_id: `inv_${randomUUID()}`,
          org_id: path.org_id,
          email: payload.email.toLowerCase(),
          role: payload.role,
          invited_by: principal.kind === "service" ? "service" : principal.userId,
          expires_at: new Date(Date.now() + INVITE_TTL_MS).toISOString(),
          token_hash: hashSecret(token)
        })
        return { ...invite, token }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("listInvites", ({ path }) =>
      Effect.gen(function* () {
        yield* requireOrgRole(path.org_id, "admin", false)
        return { invites: yield* (yield* IdentityRepo).invites(path.org_id) }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("revokeInvite", ({ path }) =>
      Effect.gen(function* () {
        yield* requireOrgRole(path.org_id, "admin", true)
        const revoked = yield* (yield* IdentityRepo).revokeInvite(path.org_id, path.invite_id)
        if (!revoked) return yield* Effect.fail(new NotFound({ error: `invite ${path.invite_id} not found` }))
        return { deleted: true }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("acceptInvite", ({ payload }) =>
      Effect.gen(function* () {
        yield* requireWrite
        const principal = yield* CurrentPrincipal
        if (principal.kind !== "user") {
          return yield* Effect.fail(new Forbidden({ error: "invites are accepted with a user token" }))
        }
        const repo = yield* IdentityRepo
        const invite = yield* repo.inviteByToken(hashSecret(payload.token), new Date())
        if (invite === undefined)
          return yield* Effect.fail(new NotFound({ error: "invite not found, expired or already used" }))
        // An invite is for one address: a forwarded token does not admit someone else.
        if (principal.email !== undefined && principal.email.toLowerCase() !== invite.email) {
          return yield* Effect.fail(new Forbidden({ error: "this invite was sent to another email address" }))
        }
        yield* repo.acceptInvite(invite.invite_id, principal.userId)
        return organization(yield* loadOrg(invite.org_id), yield* orgRole(invite.org_id))
      }).pipe(Effect.catchTag("StoreError", internal))
    )
)
