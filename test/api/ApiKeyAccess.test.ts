/**
 * API keys end with the access they were made under (issue 24, deliverable 8): an organization key
 * stops when its creator is removed from the organization or demoted below the key's role (and
 * stays revoked if the role comes back), including through an ownership transfer; and live keys are
 * capped per user and per organization (409 beyond, revoked keys do not count). Here the caps are 3
 * per user and 4 per organization.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"
import { IdentityRepo } from "../../adapters/store/identity/IdentityRepo.js"
import * as Harness from "./Support.js"
import { ApiHarness } from "./Support.js"

const CAPS = { perUser: 3, perOrg: 4 }

/** A new organization of new users (so the caps of the fixtures' users are not shared between tests). */
const team = Effect.gen(function* () {
  const api = yield* ApiHarness
  const repo = yield* IdentityRepo
  const user = Effect.gen(function* () {
    const fresh = yield* api.freshUser
    // Enterprise: a test's burst of calls never meets the Free plan's rate.
    yield* Effect.orDie(repo.updateUser(fresh.userId, { plan_id: "enterprise" }))
    return fresh
  })
  const owner = yield* user
  const admin = yield* user
  const member = yield* user
  const orgId = `org_${randomUUID()}`
  yield* Effect.orDie(
    repo.createOrg({
      org_id: orgId,
      name: "Keys",
      slug: `keys-${randomUUID().slice(0, 8)}`,
      billing_account_id: `ba_${randomUUID()}`,
      owner_user_id: owner.userId
    })
  )
  yield* Effect.orDie(repo.setOrgPlan(orgId, "enterprise"))
  yield* Effect.orDie(repo.putMember(orgId, admin.userId, "admin"))
  yield* Effect.orDie(repo.putMember(orgId, member.userId, "member"))
  return { owner, admin, member, orgId, user }
})

const createKey = (token: string, body: Record<string, unknown>) =>
  Effect.flatMap(ApiHarness, (api) => api.call("POST", "/v1/api-keys", { token, body: { name: "k", ...body } }))

const keyOf = (token: string, body: Record<string, unknown>) =>
  Effect.map(createKey(token, body), (res) => {
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    return { id: res.body.key_id as string, key: res.body.key as string }
  })

/** A read the key's role allows: its organization. */
const readsOrg = (apiKey: string, orgId: string) =>
  Effect.flatMap(ApiHarness, (api) => api.call("GET", `/v1/orgs/${orgId}`, { apiKey }))

layer(Harness.layer({ apiKeyCaps: CAPS }), { timeout: "120 seconds" })("API keys and their creator's role", (it) => {
  it.effect("a removed creator's organization keys stop at once, and stay revoked if they come back", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { admin, orgId, owner } = yield* team
      const key = yield* keyOf(admin.token, { org_id: orgId, role: "admin" })
      expect((yield* readsOrg(key.key, orgId)).status).toBe(200)

      const removed = yield* api.call("DELETE", `/v1/orgs/${orgId}/members/${admin.userId}`, { token: owner.token })
      expect(removed).toMatchObject({ status: 200, body: { deleted: true } })
      expect(yield* readsOrg(key.key, orgId)).toMatchObject({ status: 401, body: { error: "invalid API key" } })
      const listed = yield* api.call("GET", `/v1/api-keys?org_id=${orgId}`, { token: owner.token })
      expect(listed.body.keys.find((k: any) => k.key_id === key.id).revoked_at).not.toBeNull()

      // Back in the organization, with the same role: the key stays dead.
      yield* Effect.orDie((yield* IdentityRepo).putMember(orgId, admin.userId, "admin"))
      expect((yield* readsOrg(key.key, orgId)).status).toBe(401)
    })
  )

  it.effect("whatever removed the creator, authentication refuses the key and says why", () =>
    Effect.gen(function* () {
      const { admin, member, orgId } = yield* team
      const adminKey = yield* keyOf(admin.token, { org_id: orgId, role: "admin" })
      const memberKey = yield* keyOf(admin.token, { org_id: orgId, role: "member" })
      const repo = yield* IdentityRepo
      // Membership changed in the store directly (no revocation): the rule holds at authentication.
      yield* Effect.orDie(repo.putMember(orgId, admin.userId, "member"))
      expect(yield* readsOrg(adminKey.key, orgId)).toMatchObject({
        status: 401,
        body: { error: "API key stopped: its creator no longer holds the admin role it was created under" }
      })
      expect((yield* readsOrg(memberKey.key, orgId)).status).toBe(200)
      yield* Effect.orDie(repo.removeMember(orgId, admin.userId))
      expect(yield* readsOrg(memberKey.key, orgId)).toMatchObject({
        status: 401,
        body: { error: "API key stopped: its creator is no longer a member of its organization" }
      })
      // Another member's key is untouched.
      yield* Effect.orDie(repo.putMember(orgId, member.userId, "admin"))
      const other = yield* keyOf(member.token, { org_id: orgId, role: "admin" })
      expect((yield* readsOrg(other.key, orgId)).status).toBe(200)
    })
  )

  it.effect("a creator demoted below a key's role: that key stops, those within the new role go on", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { admin, orgId, owner } = yield* team
      const adminKey = yield* keyOf(admin.token, { org_id: orgId, role: "admin" })
      const memberKey = yield* keyOf(admin.token, { org_id: orgId, role: "member" })
      const demoted = yield* api.call("PUT", `/v1/orgs/${orgId}/members/${admin.userId}`, {
        token: owner.token,
        body: { role: "member" }
      })
      expect(demoted).toMatchObject({ status: 200, body: { role: "member" } })
      expect((yield* readsOrg(adminKey.key, orgId)).status).toBe(401)
      expect(yield* readsOrg(memberKey.key, orgId)).toMatchObject({ status: 200, body: { role: "member" } })
      // Promoted again: the admin key does not come back.
      yield* api.call("PUT", `/v1/orgs/${orgId}/members/${admin.userId}`, {
        token: owner.token,
        body: { role: "admin" }
      })
      expect((yield* readsOrg(adminKey.key, orgId)).status).toBe(401)
    })
  )

  it.effect("an ownership transfer stops the previous owner's owner-role keys, not their admin-role ones", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { admin, orgId, owner } = yield* team
      const ownerKey = yield* keyOf(owner.token, { org_id: orgId, role: "owner" })
      const adminKey = yield* keyOf(owner.token, { org_id: orgId, role: "admin" })
      const transferred = yield* api.call("POST", `/v1/orgs/${orgId}/transfer-ownership`, {
        token: owner.token,
        body: { user_id: admin.userId }
      })
      expect(transferred.status).toBe(200)
      expect((yield* readsOrg(ownerKey.key, orgId)).status).toBe(401)
      expect(yield* readsOrg(adminKey.key, orgId)).toMatchObject({ status: 200, body: { role: "admin" } })
    })
  )

  it.effect("live keys are capped per user (409); a revoked key frees its place", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { member, orgId, admin } = yield* team
      const keys = [yield* keyOf(member.token, {}), yield* keyOf(member.token, {}), yield* keyOf(member.token, {})]
      const over = yield* createKey(member.token, {})
      expect(over).toMatchObject({
        status: 409,
        body: { error: "at most 3 live API keys per user: revoke one first (DELETE /v1/api-keys/{key_id})" }
      })
      expect(Object.keys(over.body)).toEqual(["error"])
      expect((yield* api.call("DELETE", `/v1/api-keys/${keys[0]!.id}`, { token: member.token })).status).toBe(200)
      yield* keyOf(member.token, {})
      // Organization keys a user creates count towards the user's cap too.
      yield* keyOf(admin.token, { org_id: orgId })
      yield* keyOf(admin.token, {})
      yield* keyOf(admin.token, {})
      expect((yield* createKey(admin.token, { org_id: orgId })).status).toBe(409)
    })
  )

  it.effect("live keys are capped per organization (409), whoever creates them", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { admin, orgId, owner } = yield* team
      const first = yield* keyOf(owner.token, { org_id: orgId })
      yield* keyOf(owner.token, { org_id: orgId })
      yield* keyOf(admin.token, { org_id: orgId, role: "member" })
      yield* keyOf(admin.token, { org_id: orgId })
      const over = yield* createKey(admin.token, { org_id: orgId })
      expect(over).toMatchObject({
        status: 409,
        body: { error: "at most 4 live API keys per organization: revoke one first (DELETE /v1/api-keys/{key_id})" }
      })
      // The creator's personal keys are not the organization's.
      yield* keyOf(admin.token, {})
      expect((yield* api.call("DELETE", `/v1/api-keys/${first.id}`, { token: admin.token })).status).toBe(200)
      yield* keyOf(owner.token, { org_id: orgId })
    })
  )
})
