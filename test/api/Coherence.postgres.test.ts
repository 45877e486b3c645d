/**
 * GET /v1/orgs/{org_id}/coherence on PostgreSQL (a throwaway database): the fleet version kept by
 * triggers (migration 0034) as PostgreSQL runs them, concurrent readers given one answer, and a card
 * stored by another writer (the store, not this API's route) seen by the next request.
 */
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"
import { IdentityRepo } from "../../adapters/store/identity/IdentityRepo.js"
import { Store } from "../../adapters/store/Store.js"
import { layerIntegration } from "../support/Integration.js"
import { cardFor } from "./AgentData.js"
import { ApiHarness, layer as harness } from "./Support.js"

layerIntegration("postgres", harness({ database: "postgres" }), { timeout: "90 seconds" })(
  "fleet coherence on PostgreSQL",
  (it) => {
    it.effect("concurrent readers get one answer; a card stored elsewhere is seen at once", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const { member, owner } = api.fixtures
        const orgId = `org_${randomUUID()}`
        const repo = yield* IdentityRepo
        yield* Effect.orDie(
          repo.createOrg({
            org_id: orgId,
            name: "Fleet",
            slug: `fleet-${randomUUID().slice(0, 8)}`,
            billing_account_id: `ba_${randomUUID()}`,
            owner_user_id: owner.userId
          })
        )
        yield* Effect.orDie(repo.putMember(orgId, member.userId, "member"))
        const store = yield* Store
        const withValues = (agentId: string, declared: ReadonlyArray<string>) => ({
          ...cardFor(agentId, `card-${randomUUID().slice(0, 8)}`),
          values: { declared }
        })
        const a = yield* api.claimAgent({ userId: owner.userId, orgId })
        const b = yield* api.claimAgent({ userId: owner.userId, orgId })
        yield* api.claimAgent({ userId: owner.userId, orgId })
        yield* Effect.orDie(store.putCard(a, withValues(a, ["honesty", "privacy"])))
        yield* Effect.orDie(store.putCard(b, withValues(b, ["honesty"])))

        const get = api.call("GET", `/v1/orgs/${orgId}/coherence`, { token: member.token })
        const answers = yield* Effect.all(
          Array.from({ length: 8 }, () => get),
          { concurrency: "unbounded" }
        )
        expect(answers.map((r) => r.status)).toEqual(answers.map(() => 200))
        expect(answers[0]!.body).toMatchObject({ agent_count: 2, agents_without_card: 1, fleet_score: 0.5 })
        expect(new Set(answers.map((r) => r.body.computed_at)).size).toBe(1)

        yield* Effect.orDie(store.putCard(b, withValues(b, ["honesty", "Privacy"])))
        const after = yield* get
        expect(after.body).toMatchObject({ agent_count: 2, fleet_score: 1 })
      })
    )
  }
)
