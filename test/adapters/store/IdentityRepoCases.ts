/**
 * The identity repositories' cases (adapters/store/identity/), run in the repository conformance
 * suite (RepositoryConformance.ts) on PGlite and PostgreSQL: users, organizations, members, invites
 * and claims (IdentityRepo); API keys and impersonation sessions (CredentialRepo); plans, promos,
 * posts and agent records (CatalogRepo).
 */
import * as Effect from "effect/Effect"
import { expect } from "vitest"
import { CatalogRepo } from "../../../adapters/store/identity/CatalogRepo.js"
import { CredentialRepo, KeyCapReached } from "../../../adapters/store/identity/CredentialRepo.js"
import { IdentityRepo, SlugTaken } from "../../../adapters/store/identity/IdentityRepo.js"
import { uniqueId } from "./Fixtures.js"

/** What creates an organization of `owner`'s, with an id (and slug) of its own. */
const orgFields = (owner: string) => {
  const orgId = uniqueId("org")
  return { org_id: orgId, name: "Acme", slug: orgId, billing_account_id: `ba_${orgId}`, owner_user_id: owner }
}

export const usersOrgsAndMembers = Effect.gen(function* () {
  const repo = yield* IdentityRepo
  const [owner, member] = [uniqueId("user-own"), uniqueId("user-mem")]
  expect(yield* repo.getUser(owner)).toBeUndefined()
  const created = yield* repo.ensureUser(owner, "old@example.com")
  expect(created).toMatchObject({ user_id: owner, email: "old@example.com", is_admin: false })
  expect(yield* repo.ensureUser(owner, "new@example.com")).toMatchObject({ email: "new@example.com" })
  expect(yield* repo.updateUser(owner, { is_admin: true })).toMatchObject({ email: "new@example.com", is_admin: true })
  expect(yield* repo.getUser(owner)).toMatchObject({ user_id: owner, is_admin: true })
  yield* repo.ensureUser(member, "m@example.com")

  const fields = orgFields(owner)
  const orgId = fields.org_id
  const org = yield* repo.createOrg(fields)
  expect(org).toMatchObject({ ...fields, member_count: 1 })
  expect(yield* repo.getOrg(orgId)).toEqual(org)
  expect(yield* repo.getOrg(uniqueId("org"))).toBeUndefined()
  const taken = yield* Effect.flip(repo.createOrg({ ...fields, org_id: uniqueId("org") }))
  expect(taken).toBeInstanceOf(SlugTaken)

  yield* repo.putMember(orgId, member, "member")
  expect(yield* repo.memberRole(orgId, member)).toBe("member")
  expect((yield* repo.members(orgId)).map((m) => [m.user_id, m.role])).toEqual([
    [owner, "owner"],
    [member, "member"]
  ])
  yield* repo.transferOwnership(orgId, member)
  expect([yield* repo.memberRole(orgId, owner), yield* repo.memberRole(orgId, member)]).toEqual(["admin", "owner"])
  expect((yield* repo.orgsOf(member)).map((o) => [o.org_id, o.role, o.member_count])).toEqual([[orgId, "owner", 2]])
  expect(yield* repo.removeMember(orgId, owner)).toBe(true)
  expect(yield* repo.removeMember(orgId, owner)).toBe(false)
  expect(yield* repo.orgsOf(owner)).toEqual([])
  expect((yield* repo.updateOrgBilling(orgId, { company_name: "Acme Ltd" }))?.company_name).toBe("Acme Ltd")
  yield* repo.deleteOrg(orgId)
  expect(yield* repo.getOrg(orgId)).toBeUndefined()
  expect(yield* repo.memberRole(orgId, member)).toBeUndefined()
})

export const invitesAndClaims = Effect.gen(function* () {
  const repo = yield* IdentityRepo
  const [owner, invitee, stranger] = [uniqueId("user-inv"), uniqueId("user-inv"), uniqueId("user-inv")]
  const { org_id: orgId } = yield* repo.createOrg(orgFields(owner))
  const now = new Date("2026-11-01T00:00:00.000Z")
  const invite = yield* repo.createInvite({
    invite_id: uniqueId("inv"),
    org_id: orgId,
    email: "i@example.com",
    role: "admin",
    invited_by: owner,
    expires_at: "2026-11-08T00:00:00.000Z",
    token_hash: `th-${orgId}`
  })
  expect(invite).toMatchObject({ org_id: orgId, role: "admin", accepted_at: null })
  expect(yield* repo.invites(orgId)).toEqual([invite])
  expect(yield* repo.inviteByToken(`th-${orgId}`, now)).toEqual(invite)
  expect(yield* repo.inviteByToken(`th-${orgId}`, new Date("2026-11-09T00:00:00.000Z"))).toBeUndefined()
  yield* repo.acceptInvite(invite.invite_id, invitee)
  expect(yield* repo.memberRole(orgId, invitee)).toBe("admin")
  expect(yield* repo.inviteByToken(`th-${orgId}`, now)).toBeUndefined()
  expect(yield* repo.revokeInvite(orgId, uniqueId("inv"))).toBe(false)

  // One claim per agent; the organization's members see its agents.
  const [agentA, agentB] = [uniqueId("agt-idc"), uniqueId("agt-idc")]
  expect(yield* repo.claimAgent({ agent_id: agentA, agent_hash: "ha", user_id: owner, org_id: orgId })).toBe("claimed")
  expect(yield* repo.claimAgent({ agent_id: agentA, agent_hash: "ha", user_id: owner, org_id: orgId })).toBe(
    "already_yours"
  )
  expect(yield* repo.claimAgent({ agent_id: agentA, agent_hash: "ha", user_id: stranger, org_id: null })).toBe(
    "claimed_by_another"
  )
  yield* repo.claimAgent({ agent_id: agentB, agent_hash: "hb", user_id: stranger, org_id: null })
  expect(yield* repo.claimOf(agentA)).toMatchObject({ agent_id: agentA, user_id: owner, org_id: orgId })
  expect(yield* repo.claimOf(uniqueId("agt-idc"))).toBeUndefined()
  expect((yield* repo.agentAccess(agentA, invitee))?.orgRole).toBe("admin")
  expect((yield* repo.agentAccess(agentA, stranger))?.orgRole).toBeUndefined()
  expect(yield* repo.agentsOfOrg(orgId)).toEqual([agentA])
  expect(yield* repo.agentsVisibleToUser(invitee)).toEqual([agentA])
  expect(yield* repo.agentsVisibleToUser(stranger)).toEqual([agentB])
  const visibility = (yield* repo.claimOf(agentA))!.visibility
  expect(yield* repo.setVisibility(agentA, "public")).toBe(visibility)
  expect(yield* repo.claimOf(agentA)).toMatchObject({ visibility: "public", public: true })
  expect(yield* repo.setVisibility(uniqueId("agt-idc"), "public")).toBeUndefined()
  expect(yield* repo.allAgents).toEqual(expect.arrayContaining([agentA, agentB]))
})

export const keysAndSessions = Effect.gen(function* () {
  const repo = yield* CredentialRepo
  const identity = yield* IdentityRepo
  const [owner, other] = [uniqueId("user-key"), uniqueId("user-key")]
  const { org_id: orgId } = yield* identity.createOrg(orgFields(owner))
  const key = (n: number, orgKey: boolean) => ({
    key_id: `${orgId}-key-${n}`,
    key_hash: `${orgId}-hash-${n}`,
    name: `key ${n}`,
    prefix: `ck_${n}`,
    user_id: owner,
    org_id: orgKey ? orgId : null,
    role: orgKey ? ("admin" as const) : null
  })
  const caps = { perUser: 2, perOrg: 5 }
  const orgKey = yield* repo.createKey(key(1, true), caps)
  expect(orgKey).toMatchObject({ key_id: key(1, true).key_id, role: "admin", revoked_at: null, last_used_at: null })
  const personal = yield* repo.createKey(key(2, false), caps)
  expect(yield* Effect.flip(repo.createKey(key(3, false), caps))).toEqual(
    new KeyCapReached({ scope: "user", limit: 2 })
  )
  expect(yield* repo.keyByHash(key(1, true).key_hash)).toEqual({ ...orgKey, creator_role: "owner" })
  expect(yield* repo.keyByHash(uniqueId("hash"))).toBeUndefined()
  expect(yield* repo.getKey(personal.key_id)).toEqual(personal)
  expect((yield* repo.keysOf({ orgId })).map((k) => k.key_id)).toEqual([orgKey.key_id])
  // A user's personal keys; an organization's keys.
  expect((yield* repo.keysOf({ userId: owner })).map((k) => k.key_id)).toEqual([personal.key_id])

  yield* repo.touchKey(personal.key_id)
  expect((yield* repo.getKey(personal.key_id))?.last_used_at).not.toBeNull()
  expect(yield* repo.rotateKey(personal.key_id, `${orgId}-hash-rotated`, "ck_r")).toBe(true)
  expect(yield* repo.keyByHash(key(2, false).key_hash)).toBeUndefined()
  expect((yield* repo.keyByHash(`${orgId}-hash-rotated`))?.prefix).toBe("ck_r")
  // The owner demoted to member: keys above member are revoked, once.
  expect(yield* repo.revokeKeysAbove(orgId, owner, "member")).toBe(1)
  expect(yield* repo.revokeKeysAbove(orgId, owner, "member")).toBe(0)
  expect(yield* repo.keyByHash(key(1, true).key_hash)).toBeUndefined()
  expect(yield* repo.revokeKey(personal.key_id)).toBe(true)
  expect(yield* repo.rotateKey(personal.key_id, `${orgId}-hash-again`, "ck_a")).toBe(false)
  // Revoked keys do not count against the cap.
  expect((yield* repo.createKey(key(4, false), caps)).key_id).toBe(key(4, false).key_id)

  const sessionId = uniqueId("imp")
  const session = yield* repo.createSession({
    session_id: sessionId,
    admin_user_id: other,
    target_user_id: owner,
    reason: "support",
    expires_at: "2026-11-01T01:00:00.000Z",
    token_hash: `${sessionId}-token`
  })
  expect(session).toMatchObject({ session_id: sessionId, target_user_id: owner, ended_at: null })
  expect(yield* repo.getSession(sessionId)).toEqual(session)
  expect(yield* repo.sessionByToken(`${sessionId}-token`, new Date("2026-11-01T00:30:00.000Z"))).toEqual(session)
  expect(yield* repo.sessionByToken(`${sessionId}-token`, new Date("2026-11-01T01:30:00.000Z"))).toBeUndefined()
  const ended = yield* repo.endSession(sessionId)
  expect(ended?.ended_at).not.toBeNull()
  expect(yield* repo.sessionByToken(`${sessionId}-token`, new Date("2026-11-01T00:30:00.000Z"))).toBeUndefined()
  expect(yield* repo.getSession(uniqueId("imp"))).toBeUndefined()
})

export const catalog = Effect.gen(function* () {
  const repo = yield* CatalogRepo
  const plans = yield* repo.plans
  expect(plans.length).toBeGreaterThan(0)
  expect(yield* repo.plan(plans[0]!.plan_id)).toEqual(plans[0])
  expect(yield* repo.plan("no-such-plan")).toBeUndefined()

  const code = uniqueId("PROMO").toUpperCase()
  const now = new Date()
  yield* repo.putPromo({ code, name: "Launch", discount_percent: 20, discount_amount_cents: 0 })
  expect(yield* repo.promo(code.toLowerCase(), now)).toEqual({
    code,
    name: "Launch",
    discount_percent: 20,
    discount_amount_cents: 0
  })
  yield* repo.putPromo({ code, name: "Launch 2", discount_percent: 0, discount_amount_cents: 500 })
  expect(yield* repo.promo(code, now)).toMatchObject({ name: "Launch 2", discount_amount_cents: 500 })
  expect(yield* repo.promo(uniqueId("NONE"), now)).toBeUndefined()

  const agentId = uniqueId("agt-blog")
  const post = (n: number) => ({
    post_id: `${agentId}-post-${n}`,
    agent_id: agentId,
    title: `Post ${n}`,
    slug: `post-${n}`,
    summary: "s",
    published_at: `2026-11-0${n}T00:00:00.000Z`,
    body: "b"
  })
  for (const n of [1, 3, 2]) yield* repo.putPost(post(n))
  const published = (n: number) => {
    const { body: _, ...rest } = post(n)
    return rest
  }
  // Newest first, paged.
  expect(yield* repo.posts({ agentId, limit: 2, offset: 0 })).toEqual([published(3), published(2)])
  expect((yield* repo.posts({ agentId, limit: 2, offset: 2 })).map((p) => p.post_id)).toEqual([post(1).post_id])

  expect(yield* repo.agentRecord(agentId)).toBeUndefined()
  const identity = yield* IdentityRepo
  const user = uniqueId("user-blog")
  yield* identity.ensureUser(user, "blog@example.com")
  yield* identity.claimAgent({ agent_id: agentId, agent_hash: "hb", user_id: user, org_id: null })
  expect(yield* repo.agentRecord(agentId)).toMatchObject({
    id: agentId,
    user_id: user,
    email: "blog@example.com",
    status: "active",
    last_seen: null,
    billing_account_id: `ba_${user}`
  })
})
