/**
 * Users, organizations, their members and invites, and who claimed which agent: the rows access
 * control decides on (migrations/0003_identity.ts). Same SQL on PostgreSQL and PGlite.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { Row } from "@effect/sql/SqlConnection"
import type { SqlError } from "@effect/sql/SqlError"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Struct from "effect/Struct"
import { UserAccount } from "../../../core/schema/Admin.js"
import { Invite } from "../../../core/schema/Invite.js"
import { OrgMember, OrgRole, Organization } from "../../../core/schema/Organization.js"
import type { Visibility } from "../../../core/schema/Reputation.js"
import { type Columns, Count, decodeAll, decodeFirst, fromRow, IsoTimestamp, toIso } from "../Rows.js"
import { StoreError, storeError } from "../Store.js"
import { transaction } from "../Transaction.js"

/** A `users` row: the published account (core/schema/Admin.ts). */
const UserRow = Schema.Struct({ ...UserAccount.fields, created_at: IsoTimestamp })
export type User = typeof UserRow.Type
const decodeUser = decodeFirst(UserRow)

/**
 * An `orgs` row with its member count: the published organization (core/schema/Organization.ts)
 * without the caller's role, with the plan it is on.
 */
const OrgRow = Schema.Struct({
  ...Struct.omit(Organization.fields, "role"),
  plan_id: Schema.String,
  member_count: Count,
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp
})
export type Org = typeof OrgRow.Type

/** An `org_members` row with the member's email: the published member (core/schema/Organization.ts). */
const MemberRow = Schema.Struct({ ...OrgMember.fields, email: Schema.NullOr(Schema.String), created_at: IsoTimestamp })
export type Member = OrgMember

/** An `org_invites` row: the published invite (core/schema/Invite.ts). */
const InviteRow = Schema.Struct({
  ...Invite.fields,
  created_at: IsoTimestamp,
  expires_at: IsoTimestamp,
  accepted_at: Schema.NullOr(IsoTimestamp)
})
export type { Invite } from "../../../core/schema/Invite.js"

export interface AgentClaim {
  readonly agent_id: string
  readonly agent_hash: string
  readonly user_id: string
  readonly org_id: string | null
  /** visibility = public (a generated column: visibility is the one source). */
  readonly public: boolean
  readonly visibility: Visibility
  readonly claimed_at: string
}

/** A claim and the asking user's role in the claim's organization, in one read. */
export interface AgentAccess {
  readonly claim: AgentClaim
  readonly orgRole: OrgRole | undefined
}

/** The slug is unique across organizations. */
export class SlugTaken extends Data.TaggedError("SlugTaken")<{ readonly slug: string }> {}

export type ClaimOutcome = "claimed" | "already_yours" | "claimed_by_another"

export class IdentityRepo extends Context.Tag("candor/adapters/store/identity/IdentityRepo")<
  IdentityRepo,
  {
    /** Creates the user on first sight and keeps the latest email the identity provider sent. */
    readonly ensureUser: (userId: string, email: string | undefined) => Effect.Effect<User, StoreError>
    readonly getUser: (userId: string) => Effect.Effect<User | undefined, StoreError>
    /** Creates the user if needed; sets only what `patch` names. */
    readonly updateUser: (
      userId: string,
      patch: { readonly plan_id?: string | undefined; readonly is_admin?: boolean | undefined }
    ) => Effect.Effect<User, StoreError>

    /** The organization with its creator as Owner, in one transaction. */
    readonly createOrg: (
      org: Pick<Org, "org_id" | "name" | "slug" | "billing_account_id" | "owner_user_id">
    ) => Effect.Effect<Org, StoreError | SlugTaken>
    readonly getOrg: (orgId: string) => Effect.Effect<Org | undefined, StoreError>
    readonly setOrgPlan: (orgId: string, planId: string) => Effect.Effect<void, StoreError>
    /** Sets the billing details given (undefined: unchanged, null: cleared); the organization after, if any. */
    readonly updateOrgBilling: (
      orgId: string,
      patch: { readonly billing_email?: string | null; readonly company_name?: string | null }
    ) => Effect.Effect<Org | undefined, StoreError>
    readonly deleteOrg: (orgId: string) => Effect.Effect<void, StoreError>
    /** The user's organizations with the user's role in each. */
    readonly orgsOf: (userId: string) => Effect.Effect<ReadonlyArray<Org & { readonly role: OrgRole }>, StoreError>
    readonly memberRole: (orgId: string, userId: string) => Effect.Effect<OrgRole | undefined, StoreError>
    readonly members: (orgId: string) => Effect.Effect<ReadonlyArray<Member>, StoreError>
    /** Inserts or changes the member's role. */
    readonly putMember: (orgId: string, userId: string, role: OrgRole) => Effect.Effect<void, StoreError>
    /** Whether there was such a member. */
    readonly removeMember: (orgId: string, userId: string) => Effect.Effect<boolean, StoreError>
    /** Makes `userId` the owner (and keeps the previous owner as admin). */
    readonly transferOwnership: (orgId: string, userId: string) => Effect.Effect<void, StoreError>

    readonly createInvite: (
      invite: Omit<Invite, "created_at" | "accepted_at"> & { readonly token_hash: string }
    ) => Effect.Effect<Invite, StoreError>
    readonly invites: (orgId: string) => Effect.Effect<ReadonlyArray<Invite>, StoreError>
    /** The pending, unexpired invite with this token hash. */
    readonly inviteByToken: (tokenHash: string, now: Date) => Effect.Effect<Invite | undefined, StoreError>
    /** Marks it accepted and adds the member, in one transaction. */
    readonly acceptInvite: (inviteId: string, userId: string) => Effect.Effect<void, StoreError>
    readonly revokeInvite: (orgId: string, inviteId: string) => Effect.Effect<boolean, StoreError>

    readonly claimAgent: (
      claim: Omit<AgentClaim, "claimed_at" | "public" | "visibility">
    ) => Effect.Effect<ClaimOutcome, StoreError>
    readonly agentAccess: (agentId: string, userId: string) => Effect.Effect<AgentAccess | undefined, StoreError>
    readonly claimOf: (agentId: string) => Effect.Effect<AgentClaim | undefined, StoreError>
    /**
     * Sets the claimed agent's visibility, its claim row locked until the ambient transaction ends;
     * returns the visibility before, or undefined when the agent is not claimed.
     */
    readonly setVisibility: (
      agentId: string,
      visibility: Visibility
    ) => Effect.Effect<Visibility | undefined, StoreError>
    /** Agents the user claimed personally and those claimed into the user's organizations. */
    readonly agentsVisibleToUser: (userId: string) => Effect.Effect<ReadonlyArray<string>, StoreError>
    readonly agentsOfOrg: (orgId: string) => Effect.Effect<ReadonlyArray<string>, StoreError>
    /** Every agent, claimed or not: those that sent traffic and those claimed before their first request (for the service-role key). */
    readonly allAgents: Effect.Effect<ReadonlyArray<string>, StoreError>
  }
>() {}

const decodeOrg = decodeFirst(OrgRow)
const decodeOrgsWithRole = decodeAll(Schema.Struct({ ...OrgRow.fields, role: OrgRole }))
const decodeMembers = decodeAll(MemberRow)
const decodeInvite = decodeFirst(InviteRow)
const decodeInvites = decodeAll(InviteRow)

const claimOf = fromRow((row: Columns<AgentClaim, "claimed_at">): AgentClaim => ({
  agent_id: row.agent_id,
  agent_hash: row.agent_hash,
  user_id: row.user_id,
  org_id: row.org_id ?? null,
  public: row.public === true,
  visibility: row.visibility ?? "unlisted",
  claimed_at: toIso(row.claimed_at)
}))

const isUniqueViolation = (error: SqlError): boolean => {
  const cause = error.cause as { code?: unknown } | undefined
  return (
    cause?.code === "23505" ||
    /duplicate key|unique constraint/i.test(String((cause as { message?: unknown } | undefined)?.message ?? ""))
  )
}

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const orgColumns = sql`o.org_id, o.name, o.slug, o.billing_account_id, o.owner_user_id, o.billing_email,
    o.company_name, o.plan_id, o.created_at, o.updated_at,
    (select count(*) from org_members m where m.org_id = o.org_id) as member_count`

  const getOrg = (orgId: string) =>
    sql`select ${orgColumns} from orgs o where o.org_id = ${orgId}`.pipe(
      Effect.flatMap(decodeOrg),
      storeError("getOrg")
    )

  const ids = (rows: ReadonlyArray<Row>) => rows.map((row) => row.agent_id as string)

  return IdentityRepo.of({
    ensureUser: (userId, email) =>
      sql`insert into users (user_id, email) values (${userId}, ${email ?? null})
          on conflict (user_id) do update set email = coalesce(excluded.email, users.email),
            updated_at = case when excluded.email is distinct from users.email and excluded.email is not null
              then now() else users.updated_at end
          returning *`.pipe(
        Effect.flatMap(decodeUser),
        // `returning` answers the row written
        Effect.map((user) => user!),
        storeError("ensureUser")
      ),

    getUser: (userId) =>
      sql`select * from users where user_id = ${userId}`.pipe(Effect.flatMap(decodeUser), storeError("getUser")),

    updateUser: (userId, patch) =>
      sql`insert into users (user_id, plan_id, is_admin)
          values (${userId}, ${patch.plan_id ?? "free"}, ${patch.is_admin ?? false})
          on conflict (user_id) do update set
            plan_id = coalesce(${patch.plan_id ?? null}::text, users.plan_id),
            is_admin = coalesce(${patch.is_admin ?? null}::boolean, users.is_admin),
            updated_at = now()
          returning *`.pipe(
        Effect.flatMap(decodeUser),
        // `returning` answers the row written
        Effect.map((user) => user!),
        storeError("updateUser")
      ),

    createOrg: (org) =>
      transaction(
        sql,
        Effect.gen(function* () {
          yield* sql`insert into orgs (org_id, name, slug, billing_account_id, owner_user_id)
          values (${org.org_id}, ${org.name}, ${org.slug}, ${org.billing_account_id}, ${org.owner_user_id})`
          yield* sql`insert into org_members (org_id, user_id, role) values (${org.org_id}, ${org.owner_user_id}, 'owner')`
          const rows = yield* sql`select ${orgColumns} from orgs o where o.org_id = ${org.org_id}`
          // In the transaction that inserted it: the row is there.
          return (yield* decodeOrg(rows))!
        })
      ).pipe(
        Effect.catchTags({
          SqlError: (error): Effect.Effect<never, StoreError | SlugTaken> =>
            isUniqueViolation(error)
              ? Effect.fail(new SlugTaken({ slug: org.slug }))
              : Effect.fail(new StoreError({ operation: "createOrg", cause: error })),
          ParseError: (error) => Effect.fail(new StoreError({ operation: "createOrg", cause: error }))
        })
      ),

    getOrg,

    setOrgPlan: (orgId, planId) =>
      sql`update orgs set plan_id = ${planId}, updated_at = now() where org_id = ${orgId}`.pipe(
        Effect.asVoid,
        storeError("setOrgPlan")
      ),

    updateOrgBilling: (orgId, patch) =>
      Effect.zipRight(
        sql`update orgs set
              billing_email = case when ${patch.billing_email !== undefined} then ${patch.billing_email ?? null}
                                   else billing_email end,
              company_name = case when ${patch.company_name !== undefined} then ${patch.company_name ?? null}
                                  else company_name end,
              updated_at = now()
            where org_id = ${orgId}`.pipe(storeError("updateOrgBilling")),
        getOrg(orgId)
      ),

    deleteOrg: (orgId) =>
      transaction(
        sql,
        Effect.zipRight(
          sql`update agent_claims set org_id = null where org_id = ${orgId}`,
          sql`delete from orgs where org_id = ${orgId}`
        )
      ).pipe(Effect.asVoid, storeError("deleteOrg")),

    orgsOf: (userId) =>
      sql`select ${orgColumns}, me.role from org_members me join orgs o on o.org_id = me.org_id
          where me.user_id = ${userId} order by o.created_at, o.org_id`.pipe(
        Effect.flatMap(decodeOrgsWithRole),
        storeError("orgsOf")
      ),

    memberRole: (orgId, userId) =>
      sql<{
        readonly role: OrgRole
      }>`select role from org_members where org_id = ${orgId} and user_id = ${userId}`.pipe(
        Effect.map((rows) => rows[0]?.role),
        storeError("memberRole")
      ),

    members: (orgId) =>
      sql`select m.user_id, u.email, m.role, m.created_at from org_members m
          left join users u on u.user_id = m.user_id
          where m.org_id = ${orgId} order by m.created_at, m.user_id`.pipe(
        Effect.flatMap(decodeMembers),
        storeError("members")
      ),

    putMember: (orgId, userId, role) =>
      sql`insert into org_members (org_id, user_id, role) values (${orgId}, ${userId}, ${role})
          on conflict (org_id, user_id) do update set role = excluded.role`.pipe(
        Effect.zipRight(sql`update orgs set updated_at = now() where org_id = ${orgId}`),
        Effect.asVoid,
        storeError("putMember")
      ),

    removeMember: (orgId, userId) =>
      sql`delete from org_members where org_id = ${orgId} and user_id = ${userId} returning user_id`.pipe(
        Effect.map((rows) => rows.length > 0),
        storeError("removeMember")
      ),

    transferOwnership: (orgId, userId) =>
      transaction(
        sql,
        Effect.gen(function* () {
          yield* sql`update org_members set role = 'admin' where org_id = ${orgId} and role = 'owner'`
          yield* sql`insert into org_members (org_id, user_id, role) values (${orgId}, ${userId}, 'owner')
          on conflict (org_id, user_id) do update set role = 'owner'`
          yield* sql`update orgs set owner_user_id = ${userId}, updated_at = now() where org_id = ${orgId}`
        })
      ).pipe(storeError("transferOwnership")),

    createInvite: (invite) =>
      sql`insert into org_invites (invite_id, org_id, email, role, token_hash, invited_by, expires_at)
          values (${invite.invite_id}, ${invite.org_id}, ${invite.email}, ${invite.role}, ${invite.token_hash},
            ${invite.invited_by}, ${invite.expires_at})
          returning *`.pipe(
        Effect.flatMap(decodeInvite),
        // `returning` answers the row inserted
        Effect.map((invite) => invite!),
        storeError("createInvite")
      ),

    invites: (orgId) =>
      sql`select * from org_invites where org_id = ${orgId} and revoked_at is null order by created_at, invite_id`.pipe(
        Effect.flatMap(decodeInvites),
        storeError("invites")
      ),

    inviteByToken: (tokenHash, now) =>
      sql`select * from org_invites where token_hash = ${tokenHash} and accepted_at is null
          and revoked_at is null and expires_at > ${now}`.pipe(
        Effect.flatMap(decodeInvite),
        storeError("inviteByToken")
      ),

    acceptInvite: (inviteId, userId) =>
      transaction(
        sql,
        Effect.gen(function* () {
          const rows = yield* sql<{
            readonly org_id: string
            readonly role: OrgRole
          }>`update org_invites set accepted_at = now(), accepted_by = ${userId}
          where invite_id = ${inviteId} and accepted_at is null returning org_id, role`
          const row = rows[0]
          if (row === undefined) return
          // An existing member keeps a higher role than the invite's.
          yield* sql`insert into org_members (org_id, user_id, role) values (${row.org_id}, ${userId}, ${row.role})
          on conflict (org_id, user_id) do nothing`
        })
      ).pipe(storeError("acceptInvite")),

    revokeInvite: (orgId, inviteId) =>
      sql`update org_invites set revoked_at = now() where org_id = ${orgId} and invite_id = ${inviteId}
          and revoked_at is null and accepted_at is null returning invite_id`.pipe(
        Effect.map((rows) => rows.length > 0),
        storeError("revokeInvite")
      ),

    claimAgent: (claim) =>
      Effect.gen(function* () {
        const inserted = yield* sql`insert into agent_claims (agent_id, agent_hash, user_id, org_id)
          values (${claim.agent_id}, ${claim.agent_hash}, ${claim.user_id}, ${claim.org_id})
          on conflict (agent_id) do nothing returning agent_id`
        if (inserted.length > 0) return "claimed" as const
        const rows = yield* sql<{
          readonly user_id: string
        }>`select user_id from agent_claims where agent_id = ${claim.agent_id}`
        if (rows[0]?.user_id !== claim.user_id) return "claimed_by_another" as const
        // The claimer may move their own agent into (or out of) an organization by claiming again.
        yield* sql`update agent_claims set org_id = ${claim.org_id} where agent_id = ${claim.agent_id}`
        return "already_yours" as const
      }).pipe(storeError("claimAgent")),

    agentAccess: (agentId, userId) =>
      sql<{ readonly role: OrgRole | null }>`select c.*, m.role from agent_claims c
          left join org_members m on m.org_id = c.org_id and m.user_id = ${userId}
          where c.agent_id = ${agentId}`.pipe(
        Effect.map((rows) =>
          rows[0] === undefined ? undefined : { claim: claimOf(rows[0]), orgRole: rows[0].role ?? undefined }
        ),
        storeError("agentAccess")
      ),

    claimOf: (agentId) =>
      sql`select * from agent_claims where agent_id = ${agentId}`.pipe(
        Effect.map((rows) => (rows[0] === undefined ? undefined : claimOf(rows[0]))),
        storeError("claimOf")
      ),

    setVisibility: (agentId, visibility) =>
      Effect.gen(function* () {
        const [before] = yield* sql<{ readonly visibility: Visibility }>`
          select visibility from agent_claims where agent_id = ${agentId} for update`
        if (before === undefined) return undefined
        yield* sql`update agent_claims set visibility = ${visibility} where agent_id = ${agentId}`
        return before.visibility
      }).pipe(storeError("setVisibility")),

    agentsVisibleToUser: (userId) =>
      sql`select agent_id from agent_claims where user_id = ${userId} and org_id is null
          union
          select c.agent_id from agent_claims c join org_members m on m.org_id = c.org_id
          where m.user_id = ${userId}
          order by agent_id`.pipe(Effect.map(ids), storeError("agentsVisibleToUser")),

    agentsOfOrg: (orgId) =>
      sql`select agent_id from agent_claims where org_id = ${orgId} order by agent_id`.pipe(
        Effect.map(ids),
        storeError("agentsOfOrg")
      ),

    allAgents: sql`select agent_id from agents union select agent_id from agent_claims order by agent_id`.pipe(
      Effect.map(ids),
      storeError("allAgents")
    )
  })
})

export const layer: Layer.Layer<IdentityRepo, never, SqlClient.SqlClient> = Layer.effect(IdentityRepo, make)
