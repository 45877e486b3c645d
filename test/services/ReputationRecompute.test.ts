/**
 * The reputation recomputation on PGlite: exact against a tally computed from scratch, however the
 * log is split into batches; history and weekly snapshots; webhooks on a slow slide and on a grade
 * change; an agent without checkpoints.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { expect } from "vitest"
import { computeReputation, NO_COHERENCE } from "../../core/Reputation.js"
import * as SecretKeys from "../../adapters/keys/SecretKeys.js"
import * as ReputationRepo from "../../adapters/store/ReputationRepo.js"
import * as SqlStore from "../../adapters/store/SqlStore.js"
import { type CommitInput, Store } from "../../adapters/store/Store.js"
import { recomputeReputation } from "../../services/ReputationRecompute.js"
import { seed } from "../api/AgentData.js"
import { uniqueId } from "../adapters/store/Fixtures.js"
import { outboxEvents, referenceTally, spreadOptions, varied } from "../streams/ReputationChecks.js"
import { migratedPglite } from "../support/PgliteTemplate.js"

const Pglite = Layer.merge(SqlStore.layer, ReputationRepo.layer).pipe(
  Layer.provide(SecretKeys.layerEphemeral),
  Layer.provideMerge(migratedPglite)
)

/** 115 days after the first checkpoint of `spreadOptions`: the first sessions' violations are out of the window. */
const NOW = Date.parse("2026-09-24T00:00:00.000Z")

const recompute = (agentId: string) => Effect.orDie(recomputeReputation(agentId))

const sqlRun = <A extends object>(f: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<A>, unknown>) =>
  Effect.orDie(Effect.flatMap(SqlClient.SqlClient, f))

/** Batch sizes that split a log of 200 unevenly, ones included. */
const BATCHES = [1, 1, 2, 7, 13, 1, 40, 3, 3, 29, 50, 1, 49]

layer(Pglite, { timeout: "120 seconds" })("reputation recomputation", (it) => {
  it.effect("incremental over many batches equals the from-scratch tally, and a rebuilt tally", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const agentId = uniqueId("agt-rep")
      const all: Array<CommitInput> = []
      for (const size of BATCHES) {
        all.push(...(yield* seed(agentId, size, varied, spreadOptions(agentId))))
        const { record } = yield* recompute(agentId)
        const expected = computeReputation(referenceTally(all), NO_COHERENCE, new Date(NOW))
        expect(record.components).toEqual(expected.components)
        expect(record).toMatchObject({
          score: expected.score,
          grade: expected.grade,
          is_eligible: expected.is_eligible,
          checkpoint_count: expected.checkpoint_count,
          confidence: expected.confidence
        })
        expect(record.computed_over.tree_size).toBe(all.length)
      }
      expect(all.length).toBe(200)
      const reference = referenceTally(all)
      // The seeding exercises every part of the tally.
      expect(reference.analysed).toBeLessThan(reference.certified)
      expect(reference.stable_sessions).toBeLessThan(reference.long_sessions)
      expect(reference.stable_sessions).toBeGreaterThan(0)
      expect(reference.violation_sessions.length).toBeGreaterThan(0)

      const store = yield* Store
      const head = (yield* Effect.orDie(store.treeHead(agentId)))!
      const { record: incremental } = yield* recompute(agentId)
      expect(incremental.computed_over).toEqual({ tree_size: 200, root: head.root, checkpoint: head.note })
      // Compliance: only the violations of the last 90 days count.
      const compliance = incremental.components.find((c) => c.key === "compliance")!
      expect(compliance.inputs["violation_sessions"]).toBeLessThan(reference.violation_sessions.length)

      // The same log counted at once, from an empty tally.
      yield* sqlRun((sql) => sql`delete from reputation_sessions where agent_id = ${agentId}`)
      yield* sqlRun((sql) => sql`delete from reputation_tallies where agent_id = ${agentId}`)
      const rebuilt = yield* recompute(agentId)
      expect(rebuilt.counted).toBe(200)
      expect(rebuilt.record).toEqual(incremental)
    })
  )

  it.effect("a re-verified checkpoint counts with its certified verdict", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const agentId = uniqueId("agt-rep-rev")
      const inputs = yield* seed(agentId, 60, (input) => input, spreadOptions(agentId))
      const before = (yield* recompute(agentId)).record
      // The API's re-verification rewrites the row's verdict and keeps the certified one.
      yield* sqlRun(
        (sql) => sql`
        update checkpoints set verdict = 'clear',
          body = (body::jsonb || '{"original_verdict": "boundary_violation"}'::jsonb)::json
        where agent_id = ${agentId} and verdict = 'boundary_violation'`
      )
      yield* sqlRun((sql) => sql`delete from reputation_sessions where agent_id = ${agentId}`)
      yield* sqlRun((sql) => sql`delete from reputation_tallies where agent_id = ${agentId}`)
      const after = (yield* recompute(agentId)).record
      expect(after.components).toEqual(before.components)
      expect(after.components).toEqual(
        computeReputation(referenceTally(inputs), NO_COHERENCE, new Date(NOW)).components
      )
    })
  )

  it.effect("an agent without checkpoints is rated NR over the empty log", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const agentId = uniqueId("agt-rep-empty")
      const { counted, record } = yield* recompute(agentId)
      expect(counted).toBe(0)
      expect(record).toMatchObject({
        agent_id: agentId,
        grade: "NR",
        tier: "Not Rated",
        is_eligible: false,
        checkpoint_count: 0,
        confidence: "insufficient",
        computed_over: { tree_size: 0, root: null, checkpoint: null },
        trend_30d: null
      })
      // integrity 0, compliance 1000, drift 1000, completeness 1000, coherence 750.
      expect(record.score).toBe(575)
    })
  )

  it.effect("history: a row per change, one weekly snapshot per ISO week, trend over 30 days", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const agentId = uniqueId("agt-rep-hist")
      const repo = yield* ReputationRepo.ReputationRepo
      yield* seed(agentId, 60, (input) => input, spreadOptions(agentId))
      yield* recompute(agentId)
      yield* recompute(agentId)
      yield* TestClock.adjust("1 hour")
      yield* recompute(agentId)
      const kinds = (yield* Effect.orDie(repo.history(agentId, new Date(0).toISOString(), 100))).map((h) => h.kind)
      // Nothing changed since the first: one recomputation, and the week's one snapshot.
      expect(kinds.sort()).toEqual(["recomputation", "weekly_snapshot"])

      // 2026-09-24 is a Thursday: its week began on Monday the 21st.
      const [week] = yield* sqlRun(
        (sql) => sql<{ week_start: unknown }>`
        select week_start from reputation_history where agent_id = ${agentId} and kind = 'weekly_snapshot'`
      )
      expect(new Date(week!.week_start as string).toISOString()).toBe("2026-09-21T00:00:00.000Z")

      // A new week: a new snapshot, even without a change.
      yield* TestClock.adjust("5 days")
      yield* recompute(agentId)
      yield* recompute(agentId)
      const history = yield* Effect.orDie(repo.history(agentId, new Date(0).toISOString(), 100))
      expect(history.filter((h) => h.kind === "weekly_snapshot")).toHaveLength(2)
      // Newest first.
      expect(history[0]!.computed_at >= history[history.length - 1]!.computed_at).toBe(true)

      // 40 days on, the trend compares with the newest record at or before 30 days back.
      yield* seed(agentId, 30, (input) => input, spreadOptions(agentId))
      yield* TestClock.adjust("40 days")
      const { record } = yield* recompute(agentId)
      expect(record.trend_30d).toBe(record.score - history[0]!.score)
    })
  )

  it.effect("webhooks: a slow slide of 3 points a step alerts once it passes 10; a grade change alerts", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const agentId = uniqueId("agt-rep-hook")
      yield* seed(agentId, 60, (input) => input, spreadOptions(agentId))
      // The baseline: drift stability at 1000 over 1000 long sessions (each 15 unstable ones: 3 points).
      const setStable = (stable: number) =>
        sqlRun(
          (sql) => sql`
          update reputation_tallies set long_sessions = 1000, stable_sessions = ${stable} where agent_id = ${agentId}`
        )
      yield* recompute(agentId)
      yield* setStable(1000)
      const baseline = (yield* recompute(agentId)).record.score
      yield* sqlRun((sql) => sql`update reputation_scores set notified_score = ${baseline} where agent_id = ${agentId}`)
      const eventsBefore = (yield* outboxEvents(agentId)).length

      const scores: Array<number> = []
      const fired: Array<ReadonlyArray<string>> = []
      for (let step = 1; step <= 7; step++) {
        yield* setStable(1000 - 15 * step)
        const { events, record } = yield* recompute(agentId)
        scores.push(record.score)
        fired.push(events)
      }
      expect(scores).toEqual([1, 2, 3, 4, 5, 6, 7].map((step) => baseline - 3 * step))
      // 3, 6, 9: quiet; 12 > 10: one event, and the 12-point score is the new reference; 15, 18, 21 are 3, 6, 9 from it.
      expect(fired.map((e) => e.includes("reputation.score_changed"))).toEqual([
        false,
        false,
        false,
        true,
        false,
        false,
        false
      ])
      const events = (yield* outboxEvents(agentId)).slice(eventsBefore)
      expect(events.filter((type) => type === "reputation.score_changed")).toHaveLength(1)

      // A grade change alerts on its own (the drop crosses a grade floor).
      yield* setStable(0)
      const dropped = yield* recompute(agentId)
      expect(dropped.events).toContain("reputation.grade_changed")
      const [stored] = yield* sqlRun(
        (sql) => sql<{ notified_score: number; notified_grade: string }>`
        select notified_score, notified_grade from reputation_scores where agent_id = ${agentId}`
      )
      expect(stored).toEqual({ notified_score: dropped.record.score, notified_grade: dropped.record.grade })
      expect((yield* recompute(agentId)).events).toEqual([])
    })
  )
})
