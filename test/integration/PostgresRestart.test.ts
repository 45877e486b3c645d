/**
 * PostgreSQL "restarts" under load, as the worker sees them (the shared cluster itself is never
 * restarted): every backend on its database terminated, again and again while events flow; and the
 * server unreachable for a while (a proxy resets every connection and refuses new ones), then back.
 * Transactions cut off mid-way roll back, commits whose answer was lost are found as duplicates on
 * redelivery, and the pool reconnects. Nothing is lost, nothing is committed twice, nothing is
 * dead-lettered, and no partition consumer dies of it (a cut connection is a failed commit, held
 * and tried again until the database answers).
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Redacted from "effect/Redacted"
import { committedCount } from "../streams/PipelineChecks.js"
import { testDatabaseUrl } from "../support/Postgres.js"
import { tcpProxy } from "./TcpProxy.js"
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

/** Terminates every backend on `database` (from a connection to another one); returns how many. */
const terminateBackends = (database: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ terminated: unknown }>`
      select count(*) filter (where pg_terminate_backend(pid)) as terminated
      from pg_stat_activity where datname = ${database} and pid <> pg_backend_pid()`.pipe(
      Effect.map(([row]) => Number(row?.terminated ?? 0))
    )
  )

const Admin = PgClient.layer({ url: Redacted.make(testDatabaseUrl()), applicationName: "candor-test-admin" })

/** Events committed between two rounds of terminations: progress first, then the next cut. */
const STEP = 150

/** How long PostgreSQL stays unreachable: a restart of a real server takes seconds. */
const OUTAGE = "8 seconds"

/** A cut connection must be a failed batch, handed back: never a partition consumer that dies of it. */
const consumerDeaths = (worker: WorkerProcess) =>
  worker.output().filter((line) => line.includes("partition consumer stopped"))

describeIntegration(["postgres", "nats"], "a PostgreSQL restart during load", () => {
  it.scopedLive(
    "is survived: every event committed exactly once",
    () => {
      const workers: Array<WorkerProcess> = []
      return Effect.gen(function* () {
        const d = yield* deployment("pgrestart")
        const database = new URL(d.databaseUrl).pathname.slice(1)
        const worker = yield* startWorker(d.worker("survivor"))
        workers.push(worker)

        yield* Effect.gen(function* () {
          const events = makeEvents("pgrestart", 16, 1_200)
          const agents = agentsOf(events)
          // The load arrives in chunks of STEP, and every connection is cut as soon as the worker has
          // begun committing a chunk: the cuts fall in the middle of the load whatever the worker's
          // speed (cutting on a commit count alone raced a fast worker to the end of the load). The
          // count is read on connections that are cut too, so a failed read just means "look again".
          const rounds: Array<{ readonly committed: number; readonly terminated: number }> = []
          const deadline = Date.now() + 60_000
          for (let start = 0; start < events.length; start += STEP) {
            yield* publishAll(d.prefix, events.slice(start, start + STEP))
            if (start + STEP >= events.length) break
            for (;;) {
              if (Date.now() > deadline) return yield* Effect.fail(new Error(`stuck: ${JSON.stringify(rounds)}`))
              const committed = yield* committedCount(agents).pipe(Effect.orElseSucceed(() => 0))
              if (committed > start) {
                rounds.push({ committed, terminated: yield* terminateBackends(database) })
                break
              }
              yield* Effect.sleep("20 millis")
            }
          }

          yield* awaitAll(d.prefix, events, 60_000)
          // The load was cut several times while the worker was connected.
          expect(
            rounds.filter((round) => round.terminated > 0 && round.committed < events.length).length,
            JSON.stringify(rounds)
          ).toBeGreaterThanOrEqual(3)
          expect(consumerDeaths(worker)).toEqual([])
          yield* expectExactlyOnce(events, d.key)
          yield* awaitDrained(d.prefix, 15_000)
        }).pipe(Effect.provide(observer(d)), Effect.provide(Admin))
      }).pipe(withWorkerLogs(() => workers))
    },
    120_000
  )

  it.scopedLive(
    "an outage (connections reset, new ones refused) is waited out: every event committed exactly once",
    () => {
      const workers: Array<WorkerProcess> = []
      return Effect.gen(function* () {
        const d = yield* deployment("pgoutage")
        const server = new URL(testDatabaseUrl())
        const proxy = yield* tcpProxy({ host: server.hostname, port: Number(server.port || 5432) })
        const viaProxy = new URL(d.databaseUrl)
        viaProxy.hostname = "127.0.0.1"
        viaProxy.port = String(proxy.port)
        const worker = yield* startWorker({ ...d.worker("survivor"), databaseUrl: viaProxy.toString() })
        workers.push(worker)

        yield* Effect.gen(function* () {
          const events = makeEvents("pgoutage", 16, 1_200)
          const agents = agentsOf(events)
          const publishing = yield* publishAll(d.prefix, events).pipe(Effect.fork)

          yield* eventually(
            "the worker commits",
            Effect.map(committedCount(agents), (n) => n >= 150),
            30_000
          )
          yield* proxy.down
          const atOutage = yield* committedCount(agents)
          expect(atOutage).toBeLessThan(events.length)
          // Down for as long as a restart takes (the fault's length, not a wait for a result), and at
          // least until the worker has tried to reconnect and been refused.
          yield* Effect.sleep(OUTAGE)
          yield* eventually(
            "the worker trying to reconnect",
            Effect.sync(() => proxy.refused() > 0),
            30_000
          )
          const acceptedBefore = proxy.accepted()
          yield* proxy.up

          yield* Fiber.join(publishing)
          yield* awaitAll(d.prefix, events, 60_000)
          expect(proxy.accepted()).toBeGreaterThan(acceptedBefore)
          expect(consumerDeaths(worker)).toEqual([])
          yield* expectExactlyOnce(events, d.key)
          yield* awaitDrained(d.prefix, 15_000)
        }).pipe(Effect.provide(observer(d)))
      }).pipe(withWorkerLogs(() => workers))
    },
    120_000
  )
})
