/**
 * NATS is killed (SIGKILL) in the middle of the load and comes back on the same port and storage (a
 * server of the test's own, so the shared one is never touched). The worker's connection waits the
 * outage out and its consumers resume; the publisher retries what failed. A hard kill can make the
 * server forget acks it had received, so some committed events come back after the ack wait (30 s):
 * they must be recognised as duplicates and acked. Nothing is lost, nothing is committed twice.
 */
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { committedCount } from "../streams/PipelineChecks.js"
import { natsServer } from "../support/NatsServer.js"
import type { WorkerProcess } from "../support/WorkerProcess.js"
import { startWorker } from "../support/WorkerProcess.js"
import {
  agentsOf,
  awaitAll,
  awaitDrained,
  deployment,
  eventually,
  expectExactlyOnce,
  makeEvents,
  observer,
  publishAll,
  withWorkerLogs
} from "./Harness.js"
import { describeIntegration } from "../support/Integration.js"

describeIntegration(["postgres", "nats"], "a NATS restart during load", () => {
  it.scopedLive(
    "is survived: publishing and consuming resume, every event committed exactly once",
    () => {
      const workers: Array<WorkerProcess> = []
      return Effect.gen(function* () {
        const nats = yield* natsServer
        const d = yield* deployment("natsrestart", nats.url)
        const worker = yield* startWorker(d.worker("survivor"))
        workers.push(worker)

        yield* Effect.gen(function* () {
          const events = makeEvents("natsrestart", 16, 1_600)
          const agents = agentsOf(events)
          const publishing = yield* publishAll(d.prefix, events).pipe(Effect.fork)

          yield* eventually(
            "the worker commits",
            Effect.map(committedCount(agents), (n) => n >= 100),
            30_000
          )
          yield* nats.kill
          const atOutage = yield* committedCount(agents)
          expect(atOutage).toBeLessThan(events.length)
          yield* nats.start

          yield* Fiber.join(publishing)
          yield* awaitAll(d.prefix, events, 60_000)
          yield* expectExactlyOnce(events, d.key)
          // Includes the redeliveries of forgotten acks, after the ack wait.
          yield* awaitDrained(d.prefix, 60_000)
        }).pipe(Effect.provide(observer(d)))
      }).pipe(withWorkerLogs(() => workers))
    },
    150_000
  )
})
