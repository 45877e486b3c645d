/**
 * Two `candor serve --role worker` processes on one stream: they split the partitions through the
 * lease bucket, and when one stops gracefully the other takes them all; every event published
 * before, between and after is committed exactly once.
 */
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { WorkerProcess } from "../support/WorkerProcess.js"
import { startWorker } from "../support/WorkerProcess.js"
import {
  awaitEvenSplit,
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

describeIntegration(["postgres", "nats"], "workers on one stream", () => {
  it.scopedLive(
    "share the partitions 4/4 and rebalance to the survivor when one stops",
    () => {
      const workers: Array<WorkerProcess> = []
      return Effect.gen(function* () {
        const d = yield* deployment("rebal")
        const [w1, w2] = yield* Effect.all([startWorker(d.worker("w1")), startWorker(d.worker("w2"))], {
          concurrency: 2
        })
        workers.push(w1!, w2!)

        yield* Effect.gen(function* () {
          // Fair shares: 4 each, and (a key holds one value) no partition held twice.
          yield* awaitEvenSplit(d.prefix)

          const before = makeEvents("rebal-a", 24, 240)
          yield* publishAll(d.prefix, before)
          yield* awaitAll(d.prefix, before, 30_000)

          // A graceful stop hands its leases back; the survivor's lease watch sees them freed and takes them.
          const exit = yield* w2!.terminate
          expect(exit).toEqual({ code: 0, signal: null })
          yield* eventually(
            "w1 holding every partition",
            Effect.map(
              leaseHolders(d.prefix),
              (holders) => holders.size === PARTITIONS && sharesOf(holders).get("w1") === PARTITIONS
            ),
            5_000
          )

          const after = makeEvents("rebal-b", 24, 240)
          yield* publishAll(d.prefix, after)
          yield* awaitAll(d.prefix, after, 30_000)
          yield* expectExactlyOnce([...before, ...after], d.key)
          yield* awaitDrained(d.prefix)
        }).pipe(Effect.provide(observer(d)))
      }).pipe(withWorkerLogs(() => workers))
    },
    90_000
  )
})
