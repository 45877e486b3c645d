/**
 * The reputation recomputation and routes on PostgreSQL (a throwaway database): `pg` hands back int8
 * and numeric as strings and runs statements on several connections, so exactness, concurrent
 * recomputations of one agent (two owners of its partition) and the aggregate reads are checked here.
 */
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { computeReputation, NO_COHERENCE } from "../../core/Reputation.js"
import * as ReputationRepo from "../../adapters/store/ReputationRepo.js"
import type { CommitInput } from "../../adapters/store/Store.js"
import { recomputeReputation } from "../../services/ReputationRecompute.js"
import { referenceTally, spreadOptions, varied } from "../streams/ReputationChecks.js"
import { seed } from "./AgentData.js"
import { ApiHarness, layer as harness } from "./Support.js"
import { layerIntegration } from "../support/Integration.js"

const NOW = Date.parse("2026-09-24T00:00:00.000Z")

const recompute = (agentId: string) =>
  Effect.orDie(recomputeReputation(agentId)).pipe(Effect.provide(ReputationRepo.layer))

layerIntegration("postgres", harness({ database: "postgres" }), { timeout: "120 seconds" })(
  "reputation on PostgreSQL",
  (it) => {
    it.effect("incremental recomputation is exact, and concurrent ones of one agent serialise", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const api = yield* ApiHarness
        const agentId = yield* api.claimAgent({ userId: api.fixtures.userA.userId })
        const all: Array<CommitInput> = []
        for (const size of [1, 9, 30, 3, 57]) {
          all.push(...(yield* seed(agentId, size, varied, spreadOptions(agentId))))
          // Two at once, as two owners during a lease handover: the tally row lock orders them.
          const [a, b] = yield* Effect.all([recompute(agentId), recompute(agentId)], { concurrency: 2 })
          expect(a.counted + b.counted).toBe(size)
          const expected = computeReputation(referenceTally(all), NO_COHERENCE, new Date(NOW))
          for (const { record } of [a, b]) {
            expect(record.components).toEqual(expected.components)
            expect(record.score).toBe(expected.score)
            expect(record.computed_over.tree_size).toBe(all.length)
          }
        }

        yield* Effect.orDie(
          api.call("PUT", `/v1/agents/${agentId}/visibility`, {
            token: api.fixtures.userA.token,
            body: { visibility: "public" }
          })
        )
        const read = yield* api.call("GET", `/v1/reputation/${agentId}`)
        expect(read.body).toMatchObject({
          agent_id: agentId,
          checkpoint_count: expect.any(Number),
          visibility: "public"
        })
        expect(read.body.computed_over.tree_size).toBe(100)
        const benchmarks = yield* api.call("GET", "/v1/reputation/benchmarks")
        expect(benchmarks.body).toMatchObject({ count: 1, mean: read.body.score })
        expect(benchmarks.body.percentiles.p90).toBe(read.body.score)
        expect(benchmarks.body.grades[read.body.grade]).toBe(1)
        const search = yield* api.call("GET", `/v1/reputation/search?grade=${read.body.grade}`, {
          token: api.fixtures.userB.token
        })
        expect(search.body).toMatchObject({ total: 1, reputations: [{ agent_id: agentId }] })
        const history = yield* api.call("GET", `/v1/reputation/${agentId}/history?days=365`)
        expect(history.body.history[0]).toMatchObject({ tree_size: 100 })
      })
    )
  }
)
