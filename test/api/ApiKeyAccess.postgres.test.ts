/**
 * The API-key caps on PostgreSQL, where requests run on a pool of connections: creations sent all
 * at once never pass a cap together (the creator's and the organization's rows are locked while the
 * live keys are counted), and a removed creator's keys stop as on PGlite.
 */
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"
import { IdentityRepo } from "../../adapters/store/identity/IdentityRepo.js"
import { layerIntegration } from "../support/Integration.js"
import * as Harness from "./Support.js"
import { ApiHarness } from "./Support.js"

const CAPS = { perUser: 3, perOrg: 5 }

const statuses = (responses: ReadonlyArray<{ readonly status: number }>) =>
  responses.map((r) => r.status).sort((a, b) => a - b)

layerIntegration("postgres", Harness.layer({ database: "postgres", apiKeyCaps: CAPS }), { timeout: "90 seconds" })(
  "API keys on PostgreSQL",
  (it) => {
    it.effect("twelve creations at once: exactly the cap succeeds, per user and per organization", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const repo = yield* IdentityRepo
        const users = yield* Effect.all([api.freshUser, api.freshUser, api.freshUser])
        for (const user of users) yield* Effect.orDie(repo.updateUser(user.userId, { plan_id: "enterprise" }))
        const [owner, a, b] = users as [(typeof users)[0], (typeof users)[0], (typeof users)[0]]
        const create = (token: string, body: Record<string, unknown> = {}) =>
          api.call("POST", "/v1/api-keys", { token, body: { name: "k", ...body } })

        const personal = yield* Effect.all(
          Array.from({ length: 12 }, () => create(a.token)),
          { concurrency: "unbounded" }
        )
        expect(statuses(personal)).toEqual([...Array(3).fill(201), ...Array(9).fill(409)])

        const orgId = `org_${randomUUID()}`
        yield* Effect.orDie(
          repo.createOrg({
            org_id: orgId,
            name: "Race",
            slug: `race-${randomUUID().slice(0, 8)}`,
            billing_account_id: `ba_${randomUUID()}`,
            owner_user_id: owner.userId
          })
        )
        yield* Effect.orDie(repo.putMember(orgId, b.userId, "admin"))
        const orgKeys = yield* Effect.all(
          [
            ...Array.from({ length: 6 }, () => create(owner.token, { org_id: orgId })),
            ...Array.from({ length: 6 }, () => create(b.token, { org_id: orgId }))
          ],
          { concurrency: "unbounded" }
        )
        // 5 for the organization (each admin also under their own cap of 3).
        expect(statuses(orgKeys)).toEqual([...Array(5).fill(201), ...Array(7).fill(409)])
        const listed = yield* api.call("GET", `/v1/api-keys?org_id=${orgId}`, { token: owner.token })
        expect(listed.body.keys).toHaveLength(5)
      })
    )

    it.effect("a removed creator's organization key is refused", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const { admin, owner } = api.fixtures
        const org = yield* Harness.freshOrganization("Gone")
        const created = yield* api.call("POST", "/v1/api-keys", {
          token: admin.token,
          body: { name: "k", org_id: org, role: "admin" }
        })
        expect(created.status).toBe(201)
        expect((yield* api.call("GET", `/v1/orgs/${org}`, { apiKey: created.body.key })).status).toBe(200)
        yield* api.call("DELETE", `/v1/orgs/${org}/members/${admin.userId}`, { token: owner.token })
        expect((yield* api.call("GET", `/v1/orgs/${org}`, { apiKey: created.body.key })).status).toBe(401)
      })
    )
  }
)
