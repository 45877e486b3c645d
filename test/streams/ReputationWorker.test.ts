/**
 * Reputation recomputation in the workers, on the embedded default (in-process bus, PGlite): events
 * committed by the partition workers are scored without anyone asking; the dirty set, the drain
 * and the sweep of streams/ReputationWorker.ts driven by direct calls.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import { expect } from "vitest"
import { generateSigningKey } from "../../core/Signing.js"
import { Bus } from "../../adapters/bus/Bus.js"
import { AgentState } from "../../adapters/bus/AgentState.js"
import { eventSubject } from "../../adapters/bus/Subjects.js"
import { PartitionOwnership } from "../../adapters/bus/PartitionOwnership.js"
import * as EventFeedStore from "../../adapters/bus/EventFeedStore.js"
import * as SecretKeys from "../../adapters/keys/SecretKeys.js"
import { SigningKeys } from "../../adapters/keys/SigningKeys.js"
import * as GovernanceLog from "../../adapters/store/GovernanceLog.js"
import * as ReputationRepo from "../../adapters/store/ReputationRepo.js"
import * as SqlStore from "../../adapters/store/SqlStore.js"
import { runWorkers } from "../../streams/PartitionWorkers.js"
import { makeReputationWorker } from "../../streams/ReputationWorker.js"
import { seed } from "../api/AgentData.js"
import { uniqueId } from "../adapters/store/Fixtures.js"
import { gatewayEvent, violation } from "../support/Events.js"
import { awaitCommitted } from "./PipelineChecks.js"
import { migratedPglite } from "../support/PgliteTemplate.js"

const key = generateSigningKey()
const logOrigin = "candor.test"
const PARTITIONS = 4

const Infra = Layer.mergeAll(
  Bus.layerMemoryWith({ partitions: PARTITIONS, ackWaitMs: 2_000 }),
  AgentState.layerMemory,
  SigningKeys.fromKey(key),
  PartitionOwnership.layerAll(PARTITIONS),
  Layer.merge(SqlStore.layer, ReputationRepo.layer).pipe(
    Layer.provide(SecretKeys.layerEphemeral),
    Layer.provideMerge(migratedPglite)
  )
).pipe(
  (infra) => GovernanceLog.layer({ logOrigin }).pipe(Layer.provideMerge(infra)),
  (infra) => EventFeedStore.layer().pipe(Layer.orDie, Layer.provideMerge(infra))
)
// The workers' own sweep runs once at start (on an empty store) and then not within a test.
const Workers = Layer.scopedDiscard(
  runWorkers({
    logOrigin,
    subjectPrefix: "candor",
    reputation: { drainInterval: "50 millis", sweepInterval: "1 hour", staleAfter: "1 hour", sweepLimit: 1000 }
  })
).pipe(Layer.provideMerge(Infra))

const scoreOf = (agentId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ tree_size: unknown; computed_at: unknown }>`
      select tree_size, computed_at from reputation_scores where agent_id = ${agentId}`.pipe(
      Effect.map(([row]) =>
        row === undefined
          ? undefined
          : { tree_size: Number(row.tree_size), computed_at: new Date(row.computed_at as string).getTime() }
      )
    )
  ).pipe(Effect.orDie)

/** Waits (polling the store, with a deadline) until the agent's stored score covers `treeSize` checkpoints. */
const awaitScored = (agentId: string, treeSize: number) =>
  scoreOf(agentId).pipe(
    Effect.filterOrFail(
      (score) => score !== undefined && score.tree_size >= treeSize,
      (score) => new Error(`score over ${score?.tree_size} of ${treeSize}`)
    ),
    Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo("30 seconds")))
  )

layer(Workers, { timeout: "120 seconds", excludeTestServices: true })("reputation in the workers", (it) => {
  it.effect("committed events are scored off the commit path, the newest commit included", () =>
    Effect.gen(function* () {
      const bus = yield* Bus
      const agentId = uniqueId("agt-rep-work")
      const publish = (n: number) =>
        Effect.forEach(
          Array.from({ length: n }, (_, i) =>
            gatewayEvent(agentId, { sessionId: `ses-${i % 4}`, concerns: i % 10 === 9 ? [violation] : [] })
          ),
          (event) => bus.publish(eventSubject(agentId, "candor", PARTITIONS), event),
          { discard: true }
        )
      yield* publish(55)
      yield* awaitCommitted([agentId], 55)
      yield* awaitScored(agentId, 55)
      yield* publish(5)
      yield* awaitCommitted([agentId], 60)
      yield* awaitScored(agentId, 60)
      const repo = yield* ReputationRepo.ReputationRepo
      const stored = (yield* Effect.orDie(repo.stored(agentId)))!.record
      expect(stored).toMatchObject({ agent_id: agentId, checkpoint_count: 60, is_eligible: true })
      // 5 violations (i = 9, 19, …, 49 of the first 55), 55 clear of 60 analysed.
      expect(stored.components.find((c) => c.key === "integrity_ratio")!.score).toBe(917)
    })
  )

  it.scoped("the dirty set drains on demand; the sweep takes lagging and stale agents of owned partitions only", () =>
    Effect.gen(function* () {
      const mine = uniqueId("agt-rep-mine")
      const theirs = uniqueId("agt-rep-theirs")
      yield* seed(mine, 5)
      yield* seed(theirs, 5)
      const worker = yield* makeReputationWorker(
        { drainInterval: "1 hour", sweepInterval: "1 hour", staleAfter: "1 hour", sweepLimit: 1000 },
        (agentId) => Effect.succeed(agentId !== theirs)
      )
      // The sweep at start finds both lagging and takes the one it owns.
      yield* awaitScored(mine, 5)
      yield* worker.sweep
      expect(yield* scoreOf(theirs)).toBeUndefined()

      // A mark is recomputed by the next drain, not before.
      yield* seed(mine, 3)
      expect((yield* scoreOf(mine))!.tree_size).toBe(5)
      worker.mark([mine])
      expect(yield* worker.drain).toBe(1)
      expect((yield* scoreOf(mine))!.tree_size).toBe(8)
      expect(yield* worker.drain).toBe(0)

      // A score older than an hour is recomputed by the sweep.
      const sql = yield* SqlClient.SqlClient
      yield* Effect.orDie(
        sql`update reputation_scores set computed_at = now() - interval '2 hours' where agent_id = ${mine}`
      )
      const stale = (yield* scoreOf(mine))!.computed_at
      yield* worker.sweep
      expect((yield* scoreOf(mine))!.computed_at).toBeGreaterThan(stale)
      expect(yield* scoreOf(theirs)).toBeUndefined()
    })
  )

  it.scoped(
    "a busy agent is recomputed at most once per minInterval while commits come; it stays marked meanwhile, and the sweep and a drain after the commits pause ignore the interval",
    () =>
      Effect.gen(function* () {
        const busy = uniqueId("agt-rep-busy")
        const quiet = uniqueId("agt-rep-quiet")
        yield* seed(busy, 2)
        const worker = yield* makeReputationWorker(
          {
            drainInterval: "1 hour",
            minInterval: "1 hour",
            sweepInterval: "1 hour",
            staleAfter: "1 hour",
            sweepLimit: 1000
          },
          () => Effect.succeed(true)
        )
        yield* awaitScored(busy, 2)
        // The start's sweep scored it; a drain within the hour leaves it marked, and takes the others.
        yield* seed(busy, 3)
        yield* seed(quiet, 1)
        worker.mark([busy, quiet])
        expect(yield* worker.drain).toBe(1)
        expect((yield* scoreOf(busy))!.tree_size).toBe(2)
        expect((yield* scoreOf(quiet))!.tree_size).toBe(1)
        // The commits go on: still held back.
        worker.mark([busy])
        expect(yield* worker.drain).toBe(0)
        // Still marked: the sweep (which ignores the interval) takes it.
        yield* worker.sweep
        expect((yield* scoreOf(busy))!.tree_size).toBe(5)
        // A commit again: the drain after it holds the agent back, the next (no commit since) takes it.
        yield* seed(busy, 1)
        worker.mark([busy])
        expect(yield* worker.drain).toBe(0)
        expect((yield* scoreOf(busy))!.tree_size).toBe(5)
        expect(yield* worker.drain).toBe(1)
        expect((yield* scoreOf(busy))!.tree_size).toBe(6)
      })
  )

  it.scoped("a drain recomputes at most maxPerDrain agents, the longest marked first; the rest wait for the next", () =>
    Effect.gen(function* () {
      const [a, b, c, z] = [uniqueId("agt-rep-a"), uniqueId("agt-rep-b"), uniqueId("agt-rep-c"), uniqueId("agt-rep-z")]
      yield* seed(z, 1)
      const worker = yield* makeReputationWorker(
        {
          drainInterval: "1 hour",
          maxPerDrain: 2,
          concurrency: 2,
          sweepInterval: "1 hour",
          staleAfter: "1 hour",
          sweepLimit: 1000
        },
        (agentId) => Effect.succeed([a, b, c, z].includes(agentId))
      )
      // The start's sweep takes z alone (the others have no checkpoints yet): once z is scored, it is done.
      yield* awaitScored(z, 1)
      for (const agentId of [a, b, c]) yield* seed(agentId, 1)
      worker.mark([a, b, c])
      worker.mark([a])
      expect(yield* worker.drain).toBe(2)
      expect(yield* scoreOf(a)).toBeDefined()
      expect(yield* scoreOf(b)).toBeDefined()
      expect(yield* scoreOf(c)).toBeUndefined()
      expect(yield* worker.drain).toBe(1)
      expect(yield* scoreOf(c)).toBeDefined()
    })
  )

  it.scoped("a drain after commits takes maxPerDrain; one with no commit since the last takes maxPerIdleDrain", () =>
    Effect.gen(function* () {
      const ids = ["a", "b", "c", "d", "e"].map((n) => uniqueId(`agt-rep-idle-${n}`))
      const z = uniqueId("agt-rep-idle-z")
      yield* seed(z, 1)
      const worker = yield* makeReputationWorker(
        {
          drainInterval: "1 hour",
          maxPerDrain: 1,
          maxPerIdleDrain: 3,
          concurrency: 2,
          sweepInterval: "1 hour",
          staleAfter: "1 hour",
          sweepLimit: 1000
        },
        (agentId) => Effect.succeed(agentId === z || ids.includes(agentId))
      )
      yield* awaitScored(z, 1)
      for (const agentId of ids) yield* seed(agentId, 1)
      worker.mark(ids)
      // Commits marked agents since the last drain: the commits' budget.
      expect(yield* worker.drain).toBe(1)
      // Nothing marked since: the idle budget, the longest marked first.
      expect(yield* worker.drain).toBe(3)
      for (const agentId of ids.slice(0, 4)) expect(yield* scoreOf(agentId)).toBeDefined()
      expect(yield* scoreOf(ids[4]!)).toBeUndefined()
      // A commit again: one a drain, the longest marked (ids[4]) before the one just marked.
      worker.mark([ids[0]!])
      expect(yield* worker.drain).toBe(1)
      expect(yield* scoreOf(ids[4]!)).toBeDefined()
      expect(yield* worker.drain).toBe(1)
    })
  )
})
