/**
 * Organizations, members and invites: every write of an organization's membership, for the API and
 * any other caller. Invite tokens are shown once and stored as SHA-256. Removing or demoting a member
 * revokes the organization keys they created above their new role, in the same transaction. Deleting
 * an organization makes its agents personal: the gateways are told their policy and conscience
 * values (a `BusError` then leaves the deletion done).
 *
 * Who may act (the creator is Owner; Admins manage members and invites; only the Owner deletes the
 * organization, changes its billing or transfers ownership) is the caller's to check.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { randomUUID } from "node:crypto"
import { generateSecret, hashSecret } from "../adapters/auth/Secrets.js"
import { AgentState } from "../adapters/bus/AgentState.js"
import { CredentialRepo } from "../adapters/store/identity/CredentialRepo.js"
import { IdentityRepo } from "../adapters/store/identity/IdentityRepo.js"
import { PolicyRepo } from "../adapters/store/PolicyRepo.js"
import { Store, StoreError } from "../adapters/store/Store.js"
import { transaction } from "../adapters/store/Transaction.js"
import type { OrgRole } from "../core/schema/Organization.js"
import { pushResolvedConscience } from "./ConscienceState.js"
import { pushAgentPolicy } from "./PolicyPropagation.js"

const body = { error: Schema.String }

/** No such organization, member of it or invite. */
export class OrganizationNotFound extends Schema.TaggedError<OrganizationNotFound>()(
  "OrganizationNotFound",
  body,
  HttpApiSchema.annotations({ status: 404 })
) {}

/** A change the membership rules refuse (a slug taken, an owner made or removed other than by transfer). */
export class OrganizationInvalid extends Schema.TaggedError<OrganizationInvalid>()(
  "OrganizationInvalid",
  body,
  HttpApiSchema.annotations({ status: 400 })
) {}

/** A change no role allows: the owner's role changed other than by transfer, an invite used by another address. */
export class OrganizationForbidden extends Schema.TaggedError<OrganizationForbidden>()(
  "OrganizationForbidden",
  body,
  HttpApiSchema.annotations({ status: 403 })
) {}

/** How long an invite can be accepted. */
const INVITE_TTL_MS = 7 * 24 * 3_600_000

const memberNotFound = (userId: string) =>
  new OrganizationNotFound({ error: `user ${userId} is not a member of this organization` })

/** What the operations read and write through. */
type Needs = IdentityRepo | CredentialRepo | PolicyRepo | Store | AgentState | SqlClient.SqlClient

export const make = Effect.gen(function* () {
  const repo = yield* IdentityRepo
  const credentials = yield* CredentialRepo
  const sql = yield* SqlClient.SqlClient
  const context = yield* Effect.context<Needs>()

  const get = (orgId: string) =>
    Effect.flatMap(repo.getOrg(orgId), (org) =>
      org === undefined
        ? Effect.fail(new OrganizationNotFound({ error: `organization ${orgId} not found` }))
        : Effect.succeed(org)
    )

  /** Revokes what a member's new role (none: gone) no longer covers of the keys they created. */
  const revokeKeysAbove = (orgId: string, userId: string, role: OrgRole | undefined) =>
    credentials.revokeKeysAbove(orgId, userId, role)

  /** A membership change and the revocation of the keys it ends, together or not at all. */
  const inTransaction = <A, E>(effect: Effect.Effect<A, E>) =>
    transaction(sql, effect).pipe(
      Effect.catchTag("SqlError", (cause) => Effect.fail(new StoreError({ operation: "membership", cause })))
    )

  /** A new organization, `ownerUserId` its Owner. */
  const create = (input: { readonly name: string; readonly slug: string }, ownerUserId: string) =>
    repo
      .createOrg({
        org_id: `org_${randomUUID()}`,
        billing_account_id: `ba_${randomUUID()}`,
        name: input.name,
        slug: input.slug,
        owner_user_id: ownerUserId
      })
      .pipe(
        Effect.catchTag("SlugTaken", ({ slug }) =>
          Effect.fail(new OrganizationInvalid({ error: `slug ${slug} is already taken` }))
        )
      )

  const updateBilling = (
    orgId: string,
    patch: { readonly billing_email?: string | null; readonly company_name?: string | null }
  ) =>
    Effect.flatMap(repo.updateOrgBilling(orgId, patch), (org) =>
      org === undefined
        ? Effect.fail(new OrganizationNotFound({ error: `organization ${orgId} not found` }))
        : Effect.succeed(org)
    )

  const remove = (orgId: string) =>
    Effect.gen(function* () {
      const agents = yield* repo.agentsOfOrg(orgId)
      yield* repo.deleteOrg(orgId)
      // Its agents are personal now: no longer under the organization's tool policy nor its conscience values.
      yield* Effect.forEach(agents, pushAgentPolicy, { concurrency: 8, discard: true })
      yield* pushResolvedConscience(agents)
    }).pipe(Effect.provide(context))

  const setMemberRole = (orgId: string, userId: string, role: OrgRole) =>
    Effect.gen(function* () {
      if (role === "owner") {
        return yield* new OrganizationInvalid({
          error: "role: use POST /v1/orgs/{org_id}/transfer-ownership to make an owner"
        })
      }
      const current = yield* repo.memberRole(orgId, userId)
      if (current === undefined) return yield* memberNotFound(userId)
      if (current === "owner") {
        return yield* new OrganizationForbidden({ error: "the owner's role changes only by transferring ownership" })
      }
      // A demoted member's keys above the new role stop for good (docs/api.md, "API keys").
      yield* inTransaction(Effect.zipRight(repo.putMember(orgId, userId, role), revokeKeysAbove(orgId, userId, role)))
      const member = (yield* repo.members(orgId)).find((m) => m.user_id === userId)
      if (member === undefined) return yield* memberNotFound(userId)
      return member
    })

  const removeMember = (orgId: string, userId: string) =>
    Effect.gen(function* () {
      const current = yield* repo.memberRole(orgId, userId)
      if (current === undefined) return yield* memberNotFound(userId)
      if (current === "owner") {
        return yield* new OrganizationInvalid({ error: "the owner cannot be removed; transfer ownership first" })
      }
      // A member who leaves or is removed takes the organization keys they created with them.
      return yield* inTransaction(
        Effect.zipLeft(repo.removeMember(orgId, userId), revokeKeysAbove(orgId, userId, undefined))
      )
    })

  const transferOwnership = (orgId: string, userId: string) =>
    Effect.gen(function* () {
      if ((yield* repo.memberRole(orgId, userId)) === undefined) return yield* memberNotFound(userId)
      const previous = (yield* get(orgId)).owner_user_id
      // The previous Owner stays Admin: their owner-role keys stop.
      yield* inTransaction(
        Effect.zipRight(
          repo.transferOwnership(orgId, userId),
          previous === userId ? Effect.void : revokeKeysAbove(orgId, previous, "admin")
        )
      )
    })

  /** A new invite, with its token (shown once). */
  const invite = (orgId: string, email: string, role: Exclude<OrgRole, "owner">, invitedBy: string) =>
    Effect.gen(function* () {
      const token = generateSecret("inv")
      const created = yield* repo.createInvite({
        invite_id: `inv_${randomUUID()}`,
        org_id: orgId,
        email: email.toLowerCase(),
        role,
        invited_by: invitedBy,
        expires_at: new Date(Date.now() + INVITE_TTL_MS).toISOString(),
        token_hash: hashSecret(token)
      })
      return { ...created, token }
    })

  const revokeInvite = (orgId: string, inviteId: string) =>
    Effect.flatMap(repo.revokeInvite(orgId, inviteId), (revoked) =>
      revoked ? Effect.void : Effect.fail(new OrganizationNotFound({ error: `invite ${inviteId} not found` }))
    )

  /** The user joins the organization of the invite; its organization id. */
  const acceptInvite = (token: string, user: { readonly userId: string; readonly email: string | undefined }) =>
    Effect.gen(function* () {
      const found = yield* repo.inviteByToken(hashSecret(token), new Date())
      if (found === undefined)
        return yield* new OrganizationNotFound({ error: "invite not found, expired or already used" })
      // An invite is for one address: a forwarded token does not admit someone else.
      if (user.email !== undefined && user.email.toLowerCase() !== found.email) {
        return yield* new OrganizationForbidden({ error: "this invite was sent to another email address" })
      }
      yield* repo.acceptInvite(found.invite_id, user.userId)
      return found.org_id
    })

  return {
    get,
    /** The organization, when it exists (an organization key's own, which may be gone). */
    find: (orgId: string) => repo.getOrg(orgId),
    ofUser: (userId: string) => repo.orgsOf(userId),
    members: (orgId: string) => repo.members(orgId),
    invites: (orgId: string) => repo.invites(orgId),
    create,
    updateBilling,
    remove,
    setMemberRole,
    removeMember,
    transferOwnership,
    invite,
    revokeInvite,
    acceptInvite
  }
})

export class Organizations extends Context.Tag("candor/services/Organizations")<
  Organizations,
  Effect.Effect.Success<typeof make>
>() {}

export const layer = Layer.effect(Organizations, make)
