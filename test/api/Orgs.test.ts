/**
 * Organizations end to end over HTTP: POST /v1/orgs per docs/api.md (fields, limits, slug pattern),
 * the creator as Owner, members, invites, role changes and ownership with each role's powers.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"
import { IdentityRepo } from "../../adapters/store/identity/IdentityRepo.js"
import * as Harness from "./Support.js"
import { ApiHarness } from "./Support.js"

const slug = () => `acme-${randomUUID().slice(0, 8)}`
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/

const ORG_FIELDS = [
  "billing_account_id",
  "billing_email",
  "company_name",
  "created_at",
  "member_count",
  "name",
  "org_id",
  "owner_user_id",
  "role",
  "slug",
  "updated_at"
]

/** A new organization of a new owner, with an admin and a member, for tests that change it. */
const freshOrg = Effect.gen(function* () {
  const api = yield* ApiHarness
  const owner = yield* api.freshUser
  const admin = yield* api.freshUser
  const member = yield* api.freshUser
  const created = yield* api.call("POST", "/v1/orgs", { token: owner.token, body: { name: "Team", slug: slug() } })
  expect(created.status).toBe(201)
  const orgId: string = created.body.org_id
  const repo = yield* IdentityRepo
  yield* Effect.orDie(repo.putMember(orgId, admin.userId, "admin"))
  yield* Effect.orDie(repo.putMember(orgId, member.userId, "member"))
  return { api, orgId, owner, admin, member }
})

layer(Harness.layer(), { timeout: "60 seconds" })("orgs", (it) => {
  describe("POST /v1/orgs", () => {
    it.effect("creates the organization with the creator as owner, fields per the spec", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const user = api.fixtures.userA
        const s = slug()
        const res = yield* api.call("POST", "/v1/orgs", { token: user.token, body: { name: "Acme Inc", slug: s } })
        expect(res.status).toBe(201)
        expect(Object.keys(res.body).sort()).toStrictEqual(ORG_FIELDS)
        expect(res.body).toMatchObject({
          name: "Acme Inc",
          slug: s,
          owner_user_id: user.userId,
          billing_email: null,
          company_name: null,
          member_count: 1,
          role: "owner"
        })
        expect(res.body.org_id).toMatch(/^org_/)
        expect(res.body.billing_account_id).toMatch(/^ba_/)
        expect(res.body.created_at).toMatch(ISO)
        expect(res.body.updated_at).toMatch(ISO)
        const got = yield* api.call("GET", `/v1/orgs/${res.body.org_id}`, { token: user.token })
        expect(got.status).toBe(200)
        expect(got.body).toStrictEqual(res.body)
      })
    )

    it.effect("accepts the limits' edges: name of 2 and 100, slug of 3 and 48", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const token = api.fixtures.userA.token
        const s48 = `a${randomUUID().replace(/-/g, "")}`.padEnd(48, "x")
        for (const body of [
          { name: "ab", slug: `a${randomUUID().slice(0, 2)}` },
          { name: "n".repeat(100), slug: s48 }
        ]) {
          const res = yield* api.call("POST", "/v1/orgs", { token, body })
          expect(res.status, JSON.stringify(res.body)).toBe(201)
        }
      })
    )

    it.effect("answers 400 {error} naming the field for a bad slug, a bad name or a missing field", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const token = api.fixtures.userA.token
        const cases: ReadonlyArray<[unknown, string]> = [
          [{ name: "Acme", slug: "Bad_Slug" }, "slug"],
          [{ name: "Acme", slug: "-acme" }, "slug"],
          [{ name: "Acme", slug: "acme-" }, "slug"],
          [{ name: "Acme", slug: "ab" }, "slug"],
          [{ name: "Acme", slug: "a".repeat(49) }, "slug"],
          [{ name: "A", slug: slug() }, "name"],
          [{ name: "n".repeat(101), slug: slug() }, "name"],
          [{ slug: slug() }, "name"],
          [{ name: "Acme" }, "slug"],
          [{ name: 42, slug: slug() }, "name"]
        ]
        for (const [body, field] of cases) {
          const res = yield* api.call("POST", "/v1/orgs", { token, body })
          expect(res.status, JSON.stringify(body)).toBe(400)
          expect(Object.keys(res.body)).toStrictEqual(["error"])
          expect(res.body.error).toMatch(new RegExp(`^${field}\\b`))
        }
      })
    )

    it.effect("a taken slug is a 400, a body that is not JSON a 400, no token a 401", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const token = api.fixtures.userA.token
        const s = slug()
        expect((yield* api.call("POST", "/v1/orgs", { token, body: { name: "One", slug: s } })).status).toBe(201)
        const taken = yield* api.call("POST", "/v1/orgs", {
          token: api.fixtures.userB.token,
          body: { name: "Two", slug: s }
        })
        expect(taken).toMatchObject({ status: 400, body: { error: `slug ${s} is already taken` } })
        const garbled = yield* api.call("POST", "/v1/orgs", { token, body: "{not json" })
        expect(garbled).toMatchObject({ status: 400, body: { error: "request body is not valid JSON" } })
        const anonymous = yield* api.call("POST", "/v1/orgs", { body: { name: "Anon", slug: slug() } })
        expect(anonymous.status).toBe(401)
        expect(Object.keys(anonymous.body)).toStrictEqual(["error"])
      })
    )

    it.effect("an organization API key and the service-role key cannot create organizations (403)", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const { orgId, owner } = api.fixtures
        const orgKey = yield* api.createApiKey(owner.userId, { orgId, role: "owner" })
        const byKey = yield* api.call("POST", "/v1/orgs", { apiKey: orgKey, body: { name: "Key", slug: slug() } })
        expect(byKey.status).toBe(403)
        const byService = yield* api.call("POST", "/v1/orgs", {
          token: api.serviceRoleKey,
          body: { name: "Svc", slug: slug() }
        })
        expect(byService.status).toBe(403)
      })
    )
  })

  describe("reading", () => {
    it.effect("GET /v1/orgs lists the caller's organizations with the caller's role", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const { admin, member, orgId } = api.fixtures
        const forAdmin = yield* api.call("GET", "/v1/orgs", { token: admin.token })
        expect(forAdmin.status).toBe(200)
        expect(forAdmin.body.orgs.map((o: any) => [o.org_id, o.role])).toStrictEqual([[orgId, "admin"]])
        const forMember = yield* api.call("GET", "/v1/orgs", { token: member.token })
        expect(forMember.body.orgs[0]).toMatchObject({ org_id: orgId, role: "member", member_count: 3 })
      })
    )

    it.effect("an organization the caller is not in is not found (404), members are listed for members", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const { member, orgId, userB } = api.fixtures
        expect((yield* api.call("GET", `/v1/orgs/${orgId}`, { token: userB.token })).status).toBe(404)
        expect((yield* api.call("GET", `/v1/orgs/org_${randomUUID()}`, { token: member.token })).status).toBe(404)
        const members = yield* api.call("GET", `/v1/orgs/${orgId}/members`, { token: member.token })
        expect(members.status).toBe(200)
        expect(members.body.members.map((m: any) => m.role).sort()).toStrictEqual(["admin", "member", "owner"])
        expect(members.body.members[0]).toMatchObject({ email: expect.stringContaining("@example.test") })
      })
    )
  })

  describe("members and roles", () => {
    it.effect("an admin changes a member's role; a member cannot (403); the owner's role is not changed", () =>
      Effect.gen(function* () {
        const { admin, api, member, orgId, owner } = yield* freshOrg
        const byMember = yield* api.call("PUT", `/v1/orgs/${orgId}/members/${admin.userId}`, {
          token: member.token,
          body: { role: "member" }
        })
        expect(byMember.status).toBe(403)
        const byAdmin = yield* api.call("PUT", `/v1/orgs/${orgId}/members/${member.userId}`, {
          token: admin.token,
          body: { role: "admin" }
        })
        expect(byAdmin).toMatchObject({ status: 200, body: { user_id: member.userId, role: "admin" } })
        const onOwner = yield* api.call("PUT", `/v1/orgs/${orgId}/members/${owner.userId}`, {
          token: admin.token,
          body: { role: "member" }
        })
        expect(onOwner.status).toBe(403)
        const toOwner = yield* api.call("PUT", `/v1/orgs/${orgId}/members/${member.userId}`, {
          token: owner.token,
          body: { role: "owner" }
        })
        expect(toOwner.status).toBe(400)
        const badRole = yield* api.call("PUT", `/v1/orgs/${orgId}/members/${member.userId}`, {
          token: owner.token,
          body: { role: "boss" }
        })
        expect(badRole.status).toBe(400)
        expect(badRole.body.error).toMatch(/^role: must be one of owner, admin, member/)
      })
    )

    it.effect("invites: an admin invites, the invitee accepts with the token once, as the invited address only", () =>
      Effect.gen(function* () {
        const { admin, api, member, orgId } = yield* freshOrg
        const invitee = yield* api.freshUser
        const byMember = yield* api.call("POST", `/v1/orgs/${orgId}/invites`, {
          token: member.token,
          body: { email: invitee.email, role: "member" }
        })
        expect(byMember.status).toBe(403)
        const badEmail = yield* api.call("POST", `/v1/orgs/${orgId}/invites`, {
          token: admin.token,
          body: { email: "not-an-email", role: "member" }
        })
        expect(badEmail.status).toBe(400)
        expect(badEmail.body.error).toMatch(/^email: must be an email address/)
        const invite = yield* api.call("POST", `/v1/orgs/${orgId}/invites`, {
          token: admin.token,
          body: { email: invitee.email, role: "member" }
        })
        expect(invite.status).toBe(201)
        expect(invite.body).toMatchObject({ org_id: orgId, email: invitee.email, role: "member", accepted_at: null })
        const listed = yield* api.call("GET", `/v1/orgs/${orgId}/invites`, { token: admin.token })
        expect(listed.body.invites.map((i: any) => i.invite_id)).toContain(invite.body.invite_id)
        expect(JSON.stringify(listed.body)).not.toContain(invite.body.token)

        const stranger = yield* api.freshUser
        const wrongUser = yield* api.call("POST", "/v1/invites/accept", {
          token: stranger.token,
          body: { token: invite.body.token }
        })
        expect(wrongUser.status).toBe(403)
        const accepted = yield* api.call("POST", "/v1/invites/accept", {
          token: invitee.token,
          body: { token: invite.body.token }
        })
        expect(accepted).toMatchObject({ status: 200, body: { org_id: orgId, role: "member", member_count: 4 } })
        const again = yield* api.call("POST", "/v1/invites/accept", {
          token: invitee.token,
          body: { token: invite.body.token }
        })
        expect(again.status).toBe(404)
      })
    )

    it.effect("removing members: admins remove members, anyone leaves, the owner is never removed", () =>
      Effect.gen(function* () {
        const { admin, api, member, orgId, owner } = yield* freshOrg
        const ownerOut = yield* api.call("DELETE", `/v1/orgs/${orgId}/members/${owner.userId}`, { token: admin.token })
        expect(ownerOut.status).toBe(400)
        const byMember = yield* api.call("DELETE", `/v1/orgs/${orgId}/members/${admin.userId}`, { token: member.token })
        expect(byMember.status).toBe(403)
        const leave = yield* api.call("DELETE", `/v1/orgs/${orgId}/members/${member.userId}`, { token: member.token })
        expect(leave).toMatchObject({ status: 200, body: { deleted: true } })
        expect((yield* api.call("GET", `/v1/orgs/${orgId}`, { token: member.token })).status).toBe(404)
      })
    )

    it.effect("the owner sets the billing email and company name (PATCH); admins and members may not", () =>
      Effect.gen(function* () {
        const { admin, api, member, orgId, owner } = yield* freshOrg
        const path = `/v1/orgs/${orgId}`
        for (const who of [admin, member])
          expect((yield* api.call("PATCH", path, { token: who.token, body: { company_name: "X" } })).status).toBe(403)
        const set = yield* api.call("PATCH", path, {
          token: owner.token,
          body: { billing_email: "billing@acme.test", company_name: "  Acme Holdings  " }
        })
        expect(set.status, JSON.stringify(set.body)).toBe(200)
        expect(Object.keys(set.body).sort()).toStrictEqual(ORG_FIELDS)
        expect(set.body).toMatchObject({
          billing_email: "billing@acme.test",
          company_name: "Acme Holdings",
          role: "owner"
        })
        // An absent field stays; null clears.
        const cleared = yield* api.call("PATCH", path, { token: owner.token, body: { billing_email: null } })
        expect(cleared.body).toMatchObject({ billing_email: null, company_name: "Acme Holdings" })
        expect((yield* api.call("GET", path, { token: member.token })).body).toMatchObject({
          billing_email: null,
          company_name: "Acme Holdings"
        })
        for (const body of [
          { billing_email: "not an address" },
          { company_name: "" },
          { company_name: "x".repeat(201) }
        ]) {
          const refused = yield* api.call("PATCH", path, { token: owner.token, body })
          expect(refused.status, JSON.stringify(body)).toBe(400)
          expect(typeof refused.body.error).toBe("string")
        }
        const stranger = yield* api.freshUser
        expect((yield* api.call("PATCH", path, { token: stranger.token, body: { company_name: "X" } })).status).toBe(
          404
        )
      })
    )

    it.effect("only the owner transfers ownership (staying admin) and deletes the organization", () =>
      Effect.gen(function* () {
        const { admin, api, orgId, owner } = yield* freshOrg
        const byAdmin = yield* api.call("POST", `/v1/orgs/${orgId}/transfer-ownership`, {
          token: admin.token,
          body: { user_id: admin.userId }
        })
        expect(byAdmin.status).toBe(403)
        const transferred = yield* api.call("POST", `/v1/orgs/${orgId}/transfer-ownership`, {
          token: owner.token,
          body: { user_id: admin.userId }
        })
        expect(transferred).toMatchObject({ status: 200, body: { owner_user_id: admin.userId, role: "admin" } })
        expect((yield* api.call("DELETE", `/v1/orgs/${orgId}`, { token: owner.token })).status).toBe(403)
        const deleted = yield* api.call("DELETE", `/v1/orgs/${orgId}`, { token: admin.token })
        expect(deleted).toMatchObject({ status: 200, body: { deleted: true } })
        expect((yield* api.call("GET", `/v1/orgs/${orgId}`, { token: admin.token })).status).toBe(404)
      })
    )
  })
})
