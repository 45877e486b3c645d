/**
 * The identity routes on PostgreSQL (the harness on a throwaway database of TEST_DATABASE_URL):
 * the same SQL as on PGlite, but `pg`'s types (int8 as strings, timestamps as Date) and a real
 * unique-violation code. A subset: organizations, API keys, claims, impersonation, plans, license,
 * containment with scope key (jsonb read back as an object).
 */
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"
import { SigningKeys } from "../../adapters/keys/SigningKeys.js"
import { issueLicense } from "../../adapters/licensing/LicenseToken.js"
import * as Harness from "./Support.js"
import { ApiHarness } from "./Support.js"
import { layerIntegration } from "../support/Integration.js"

layerIntegration("postgres", Harness.layer({ database: "postgres" }), { timeout: "60 seconds" })(
  "identity on PostgreSQL",
  (it) => {
    it.effect("organizations: create (member_count an integer), taken slug 400, members, invites", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const owner = yield* api.freshUser
        const slug = `pg-${randomUUID().slice(0, 8)}`
        const created = yield* api.call("POST", "/v1/orgs", { token: owner.token, body: { name: "PG Org", slug } })
        expect(created).toMatchObject({
          status: 201,
          body: { member_count: 1, role: "owner", owner_user_id: owner.userId }
        })
        const taken = yield* api.call("POST", "/v1/orgs", {
          token: api.fixtures.userA.token,
          body: { name: "Again", slug }
        })
        expect(taken).toMatchObject({ status: 400, body: { error: `slug ${slug} is already taken` } })
        const invitee = yield* api.freshUser
        const invite = yield* api.call("POST", `/v1/orgs/${created.body.org_id}/invites`, {
          token: owner.token,
          body: { email: invitee.email, role: "admin" }
        })
        expect(invite.status).toBe(201)
        const accepted = yield* api.call("POST", "/v1/invites/accept", {
          token: invitee.token,
          body: { token: invite.body.token }
        })
        expect(accepted).toMatchObject({ status: 200, body: { role: "admin", member_count: 2 } })
      })
    )

    it.effect("API keys authenticate by hash; plans list with integer fields", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const user = yield* api.freshUser
        const created = yield* api.call("POST", "/v1/api-keys", { token: user.token, body: { name: "pg" } })
        expect(created.status).toBe(201)
        const plans = yield* api.call("GET", "/v1/plans", { apiKey: created.body.key })
        expect(plans.status).toBe(200)
        expect(plans.body.plans[1]).toMatchObject({
          plan_id: "developer",
          base_price_cents: 2900,
          included_checks: 100000
        })
        expect(typeof plans.body.plans[1].per_check_price).toBe("number")
      })
    )

    it.effect("claims, impersonation (read-only), license validation", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const user = yield* api.freshUser
        const claimed = yield* api.call("POST", "/v1/agents/claim", {
          token: user.token,
          body: { provider_key: `sk-${randomUUID()}` }
        })
        expect(claimed.status).toBe(200)
        const session = yield* api.call("POST", "/v1/admin/impersonate", {
          token: api.serviceRoleKey,
          body: { user_id: user.userId }
        })
        expect(session.status).toBe(201)
        const read = yield* api.call("GET", "/v1/agents", { token: session.body.token })
        expect(read.body.agents.map((a: any) => a.agent_id)).toStrictEqual([claimed.body.agent_id])
        const write = yield* api.call("POST", "/v1/orgs", {
          token: session.body.token,
          body: { name: "No", slug: "no-no-no" }
        })
        expect(write.status).toBe(403)
        const { active } = yield* SigningKeys
        const token = issueLicense(active, {
          license_id: "lic-pg",
          plan_id: "team",
          licensee: "PG",
          feature_flags: {},
          limits: {},
          issued_at: new Date().toISOString(),
          expires_at: new Date(Date.now() + 90 * 86_400_000).toISOString()
        })
        const license = yield* api.call("POST", "/v1/license/validate", {
          token: user.token,
          body: { license: token, instance_id: "pg-1", instance_metadata: {} }
        })
        expect(license.body).toMatchObject({ valid: true, plan_id: "team", limits: { requests_per_second: 200 } })
      })
    )

    it.effect("containment with scope key: stored, read back, lifted", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const user = yield* api.freshUser
        const key = `sk-${randomUUID()}`
        const claim = (agent_name: string) =>
          api.call("POST", "/v1/agents/claim", { token: user.token, body: { provider_key: key, agent_name } })
        const a = (yield* claim("a")).body.agent_id
        const b = (yield* claim("b")).body.agent_id
        const kill = yield* api.call("POST", `/v1/agents/${a}/kill`, {
          token: user.token,
          body: { reason: "pg", scope: "key" }
        })
        expect(kill.body).toMatchObject({ containment_scope: "key", containment_status: "killed" })
        const read = yield* api.call("GET", `/v1/agents/${b}/containment`, { token: user.token })
        expect(read.body).toMatchObject({
          containment_status: "killed",
          containment_scope: "key",
          key_containment: { status: "killed", reason: "pg", contained_at: kill.body.contained_at }
        })
        const back = yield* api.call("POST", `/v1/agents/${b}/reactivate`, {
          token: user.token,
          body: { scope: "key" }
        })
        expect(back.status).toBe(200)
        const after = yield* api.call("GET", `/v1/agents/${a}/containment`, { token: user.token })
        expect(after.body).toMatchObject({ containment_status: "active", key_containment: { status: "active" } })
        expect(after.body.log[0]).toMatchObject({ action: "kill", scope: "key" })
      })
    )
  }
)
