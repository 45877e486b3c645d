/**
 * A worker killed (SIGKILL) while events flow: whatever it had committed stays, a second worker
 * takes its leases once its heartbeat has been silent for a few seconds (not after the lease TTL),
 * and what the dead one had received but not acked comes back at once (the consumer is rewound) and
 * is committed by the second. Nothing is lost and nothing is committed twice.
 */
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { committedCount } from "../streams/PipelineChecks.js"
import type { WorkerProcess } from "../support/WorkerProcess.js"
import { startWorker } from "../support/WorkerProcess.js"
import {
  ackPending,
  agentsOf,
  awaitAll,
  awaitDrained,
  deployment,
  eventually,
  expectExactlyOnce,
  leaseHolders,
  makeEvents,
  observer,
  PARTITIONS,
  publishAll,
  sharesOf,
  withWorkerLogs
} from "./Harness.js"
import { describeIntegration } from "../support/Integration.js"

describeIntegration(["postgres", "nats"], "a worker killed mid-batch", () => {
  it.scopedLive(
    "loses nothing and duplicates nothing: a second worker finishes the work",
    () => {
      const workers: Array<WorkerProcess> = []
      return Effect.gen(function* () {
        const d = yield* deployment("crash")
        const first = yield* startWorker(d.worker("first"))
        workers.push(first)

        yield* Effect.gen(function* () {
          const events = makeEvents("crash", 16, 1_600)
          const agents = agentsOf(events)
          const publishing = yield* publishAll(d.prefix, events).pipe(Effect.fork)

          // Kill it once it is visibly committing, with most of the load still to come.
          yield* eventually(
            "the first commits",
            Effect.map(committedCount(agents), (n) => n >= 100),
            30_000
          )
          const exit = yield* first.kill
          expect(exit.signal).toBe("SIGKILL")
          const atKill = yield* committedCount(agents)
          expect(atKill).toBeLessThan(events.length)
          // It died holding deliveries it had not acked: those must come back, not vanish.
          expect(yield* ackPending(d.prefix)).toBeGreaterThan(0)

          const second = yield* startWorker(d.worker("second"))
          workers.push(second)
          yield* Fiber.join(publishing)
          // The dead worker is deemed dead after ~3 s of silence; its unacked deliveries come back when
          // the second rewinds each consumer, not after the ack wait (30 s).
          yield* awaitAll(d.prefix, events, 25_000)
          expect(sharesOf(yield* leaseHolders(d.prefix)).get("second")).toBe(PARTITIONS)
          yield* expectExactlyOnce(events, d.key)
          yield* awaitDrained(d.prefix)
        }).pipe(Effect.provide(observer(d)))
      }).pipe(withWorkerLogs(() => workers))
    },
    120_000
  )
})
