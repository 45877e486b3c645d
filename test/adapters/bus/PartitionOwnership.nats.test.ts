/**
 * Partition ownership: everything for a single process; leases in the real NATS KV for several
 * workers (each with its own connection), on a short TTL, waiting on conditions. Failover: a worker
 * that stops heartbeating loses its leases after `deadAfterMs`, long before their TTL; a graceful
 * stop or a newcomer is acted on at once (the watch), not at the next heartbeat.
 */
import { Kvm } from "@nats-io/kv"
import { expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Exit from "effect/Exit"
import { NatsConnection } from "../../../adapters/bus/NatsConnection.js"
import * as PartitionLeases from "../../../adapters/bus/PartitionLeases.js"
import { fairShare } from "../../../adapters/bus/PartitionLeases.js"
import { PartitionOwnership } from "../../../adapters/bus/PartitionOwnership.js"
import { leaseBucket } from "../../../adapters/bus/Subjects.js"
import { describeIntegration } from "../../support/Integration.js"
import { NatsTest, removeNatsResources, uniquePrefix, waitUntil } from "./NatsSupport.js"

const P = 8
const TTL = 1_500

/** A worker in a scope of its own, so the test can stop it. */
const startWorker = (prefix: string, workerId: string, options: Partial<PartitionLeases.LeaseOptions> = {}) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(
      PartitionLeases.layer({ partitions: P, workerId, ttlMs: TTL, prefix, ...options }).pipe(Layer.provide(NatsTest)),
      scope
    )
    return { ownership: Context.get(context, PartitionOwnership), stop: Scope.close(scope, Exit.void) }
  })

const ownedBy = (ownership: PartitionOwnership["Type"]) => ownership.owned.get

/** The test's own view of the bucket, on a connection of its own. */
const bucket = (prefix: string, ttl = TTL) =>
  Effect.gen(function* () {
    const context = yield* Layer.build(NatsTest)
    const nc = Context.get(context, NatsConnection)
    return yield* Effect.promise(() => new Kvm(nc).create(leaseBucket(prefix), { history: 1, ttl }))
  })

const withPrefix = <A, E, R>(body: (prefix: string) => Effect.Effect<A, E, R>) => {
  const prefix = uniquePrefix("lease")
  return Effect.gen(function* () {
    yield* Effect.addFinalizer(() => removeNatsResources(prefix).pipe(Effect.provide(NatsTest)))
    return yield* body(prefix)
  }).pipe(Effect.scoped)
}

describeIntegration("nats", "PartitionOwnership", () => {
  it.effect("layerAll owns every partition", () =>
    Effect.gen(function* () {
      const ownership = yield* PartitionOwnership
      expect([...(yield* ownership.owned.get)]).toEqual([0, 1, 2, 3, 4, 5, 6, 7])
      expect(ownership.workerId).toBe("solo")
    }).pipe(Effect.provide(PartitionOwnership.layerAll(P, "solo")))
  )

  it("fair share is ceil(P / live)", () => {
    expect([1, 2, 3, 8, 9].map((live) => fairShare(8, live))).toEqual([8, 4, 3, 1, 1])
  })

  it.live(
    "two workers split the partitions 4/4 without overlap; when one stops the other takes all",
    () =>
      withPrefix((prefix) =>
        Effect.gen(function* () {
          const a = yield* startWorker(prefix, "worker-a")
          const b = yield* startWorker(prefix, "worker-b")
          const kv = yield* bucket(prefix)
          let overlaps = 0
          yield* waitUntil(
            "a 4/4 split",
            Effect.map(Effect.all([ownedBy(a.ownership), ownedBy(b.ownership)]), ([x, y]) => {
              if ([...x].some((p) => y.has(p))) overlaps++
              return x.size === 4 && y.size === 4
            }),
            20_000
          )
          expect(overlaps).toBe(0)
          const [x, y] = yield* Effect.all([ownedBy(a.ownership), ownedBy(b.ownership)])
          expect([...x, ...y].sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7])
          // The bucket agrees: each lease names the worker that believes it holds it.
          for (const p of x) expect((yield* Effect.promise(() => kv.get(`lease.${p}`)))?.string()).toBe("worker-a")
          for (const p of y) expect((yield* Effect.promise(() => kv.get(`lease.${p}`)))?.string()).toBe("worker-b")

          yield* b.stop
          expect((yield* ownedBy(b.ownership)).size).toBe(0)
          yield* waitUntil(
            "a to take all 8",
            Effect.map(ownedBy(a.ownership), (s) => s.size === P),
            20_000
          )
          yield* a.stop
        })
      ),
    60_000
  )

  it.live(
    "a worker that stops heartbeating loses its leases after deadAfterMs, long before their TTL",
    () =>
      withPrefix((prefix) =>
        Effect.gen(function* () {
          // A dead worker: a heartbeat and every lease, never written again; the TTL is a minute.
          const kv = yield* bucket(prefix, 60_000)
          yield* Effect.promise(async () => {
            await kv.put("worker.dead", "dead")
            for (let p = 0; p < P; p++) await kv.create(`lease.${p}`, "dead")
          })
          const startedAt = Date.now()
          const a = yield* startWorker(prefix, "worker-a", { ttlMs: 60_000, heartbeatMs: 300, deadAfterMs: 1_000 })
          expect((yield* ownedBy(a.ownership)).size).toBe(0)
          yield* waitUntil(
            "a to take all 8",
            Effect.map(ownedBy(a.ownership), (s) => s.size === P),
            10_000
          )
          const elapsed = Date.now() - startedAt
          expect(elapsed).toBeGreaterThanOrEqual(1_000)
          expect(elapsed).toBeLessThan(5_000)
          // Taken over by compare-and-set: every lease names a now.
          for (let p = 0; p < P; p++)
            expect((yield* Effect.promise(() => kv.get(`lease.${p}`)))?.string()).toBe("worker-a")
          yield* a.stop
        })
      ),
    60_000
  )

  it.live(
    "a graceful stop and a newcomer are acted on at once, not at the next heartbeat",
    () =>
      withPrefix((prefix) =>
        Effect.gen(function* () {
          // Heartbeats 20 s apart: only the watch can explain a move within a couple of seconds.
          const slow = { heartbeatMs: 20_000, deadAfterMs: 60_000, ttlMs: 60_000 }
          const a = yield* startWorker(prefix, "worker-a", slow)
          yield* waitUntil(
            "a to own everything",
            Effect.map(ownedBy(a.ownership), (s) => s.size === P)
          )
          const joinedAt = Date.now()
          const b = yield* startWorker(prefix, "worker-b", slow)
          yield* waitUntil(
            "a 4/4 split",
            Effect.map(
              Effect.all([ownedBy(a.ownership), ownedBy(b.ownership)]),
              ([x, y]) => x.size === 4 && y.size === 4
            ),
            5_000
          )
          expect(Date.now() - joinedAt).toBeLessThan(5_000)
          const stoppedAt = Date.now()
          yield* b.stop
          yield* waitUntil(
            "a to take all 8",
            Effect.map(ownedBy(a.ownership), (s) => s.size === P),
            5_000
          )
          expect(Date.now() - stoppedAt).toBeLessThan(5_000)
          yield* a.stop
        })
      ),
    60_000
  )

  it.live(
    "a worker starting beside a live one whose heartbeat is rewritten as it looks counts it, at once",
    () =>
      withPrefix((prefix) =>
        Effect.gen(function* () {
          // The live worker: its heartbeat rewritten every 500 ms, as a worker's is, and at once when
          // a consumer of the bucket is created. That rewrite is what stalled starts: `kv.keys()`
          // counted the heartbeat it then no longer found, and waited for a "nothing pending" that
          // never came (JetStreamSetup.liveKeys); on a loaded machine it happened by chance.
          const nc = Context.get(yield* Layer.build(NatsTest), NatsConnection)
          const kv = yield* Effect.promise(() => new Kvm(nc).create(leaseBucket(prefix), { history: 1, ttl: TTL }))
          const beat = Effect.promise(() => kv.put("worker.live", "live"))
          yield* beat
          yield* Effect.acquireRelease(
            Effect.sync(() =>
              nc.subscribe(`$JS.EVENT.ADVISORY.CONSUMER.CREATED.KV_${leaseBucket(prefix)}.>`, {
                callback: () => void kv.put("worker.live", "live").catch(() => undefined)
              })
            ),
            (sub) => Effect.sync(() => sub.unsubscribe())
          )
          yield* Effect.promise(() => nc.flush())
          yield* beat.pipe(Effect.repeat(Schedule.spaced("500 millis")), Effect.forkScoped)
          // Several starts: each had its chance of the stall (most did, run against the old count).
          for (const id of ["worker-a", "worker-b", "worker-c"]) {
            // A start takes milliseconds; the bound is for one that never comes.
            const w = yield* startWorker(prefix, id).pipe(
              Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error(`${id} never started`) })
            )
            // Counted before its first tick: half the partitions, not all of them first.
            expect((yield* ownedBy(w.ownership)).size).toBe(fairShare(P, 2))
            yield* w.stop
          }
        })
      ),
    60_000
  )

  it.live("a worker that left (its heartbeat deleted) is not counted: a newcomer takes everything at once", () =>
    withPrefix((prefix) =>
      Effect.gen(function* () {
        const kv = yield* bucket(prefix)
        yield* Effect.promise(async () => {
          await kv.put("worker.gone", "gone")
          await kv.delete("worker.gone")
        })
        const a = yield* startWorker(prefix, "worker-a")
        expect((yield* ownedBy(a.ownership)).size).toBe(P)
        yield* a.stop
      })
    )
  )

  it.live(
    "a renewal that fails drops the partition at once",
    () =>
      withPrefix((prefix) =>
        Effect.gen(function* () {
          const a = yield* startWorker(prefix, "worker-a")
          yield* waitUntil(
            "a to own everything",
            Effect.map(ownedBy(a.ownership), (s) => s.size === P)
          )
          // A live worker writes partition 3's lease (as if it had taken a for dead): a drops it.
          const kv = yield* bucket(prefix)
          yield* Effect.promise(() => kv.put("worker.intruder", "intruder"))
          yield* Effect.promise(() => kv.put("lease.3", "intruder"))
          yield* waitUntil(
            "a to drop partition 3",
            Effect.map(ownedBy(a.ownership), (s) => !s.has(3)),
            TTL
          )
          // (A live newcomer also halves a's fair share: it hands back extras besides.)
          expect((yield* ownedBy(a.ownership)).size).toBeLessThan(P)
          // The intruder never heartbeats again: once it is deemed dead, a takes the partition back.
          yield* waitUntil(
            "a to retake partition 3 and the rest",
            Effect.map(ownedBy(a.ownership), (s) => s.size === P),
            20_000
          )
          yield* a.stop
        })
      ),
    60_000
  )
})
