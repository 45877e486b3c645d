/**
 * `npm run bench:stream`: the live alert stream under load. The real API over HTTP on 127.0.0.1
 * (the test harness: every handler, real authentication and access control, embedded PGlite), its
 * event feed, BENCH_STREAM_CLIENTS (100) SSE clients of one organization member connected to
 * `GET /v1/stream`, and events published to the feed at BENCH_STREAM_RATE (1,000) per second for
 * BENCH_STREAM_SECONDS (10), as the event relay and the gateways would.
 *
 * Latency is event-to-client: from the event's `created_at` (set when it is published) to the
 * moment a client has parsed its frame. The clients run in a worker thread (bench/StreamClients.ts),
 * so their parsing does not share the server's event loop. The target is p99 < 100 ms.
 *
 * Runs on the embedded feed (the store's table), then on the JetStream feed when NATS answers at
 * TEST_NATS_URL / NATS_URL (default nats://127.0.0.1:4222).
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import type * as SqlClient from "@effect/sql/SqlClient"
import { randomUUID } from "node:crypto"
import { connect } from "node:net"
import { availableParallelism, loadavg } from "node:os"
import { Worker } from "node:worker_threads"
import { EventFeed } from "../adapters/bus/EventFeed.js"
import * as EventFeedJetStream from "../adapters/bus/EventFeedJetStream.js"
import { newEnvelope } from "../core/Events.js"
import { natsForPrefix, uniquePrefix } from "../test/adapters/bus/NatsSupport.js"
import * as Harness from "../test/api/Support.js"
import { ApiHarness } from "../test/api/Support.js"

const CLIENTS = Number(process.env.BENCH_STREAM_CLIENTS ?? 100)
const RATE = Number(process.env.BENCH_STREAM_RATE ?? 1_000)
const SECONDS = Number(process.env.BENCH_STREAM_SECONDS ?? 10)
const TICK_MS = 10
const natsUrl = process.env.TEST_NATS_URL ?? process.env.NATS_URL ?? "nats://127.0.0.1:4222"

interface Row {
  readonly feed: string
  readonly clients: number
  readonly published: number
  readonly publishedPerSecond: number
  readonly delivered: number
  readonly p50: number
  readonly p95: number
  readonly p99: number
  readonly max: number
}

const percentile = (sorted: Float64Array, p: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

const sleepUntil = (at: number) =>
  Effect.promise(() => new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now()))))

const run = (feedName: string) =>
  Effect.gen(function* () {
    const api = yield* ApiHarness
    const feed = yield* EventFeed
    const { member, orgAgent, orgId } = api.fixtures
    const total = RATE * SECONDS
    // A worker that loads the TypeScript module through tsx, as `npm run` loads this one.
    const clientsModule = new URL("./StreamClients.ts", import.meta.url).href
    const worker = new Worker(
      `import("tsx/esm/api").then((tsx) => tsx.tsImport(${JSON.stringify(clientsModule)}, ${JSON.stringify(clientsModule)}))`,
      { eval: true, workerData: { url: `${api.url}/v1/stream`, token: member.token, clients: CLIENTS, total } }
    )
    yield* Effect.addFinalizer(() => Effect.promise(() => worker.terminate()))
    const message = <A>() =>
      Effect.async<A, Error>((resume) => {
        worker.once("message", (m: A & { error?: string }) =>
          resume(m.error === undefined ? Effect.succeed(m) : Effect.fail(new Error(m.error)))
        )
      })
    yield* message<{ ready: true }>()
    const perTick = Math.max(1, Math.round((RATE * TICK_MS) / 1000))
    const start = Date.now()
    let published = 0
    for (let tick = 0; published < total; tick++) {
      yield* sleepUntil(start + tick * TICK_MS)
      const batch = Array.from({ length: Math.min(perTick, total - published) }, () =>
        newEnvelope({
          type: "agent.paused",
          source: randomUUID(),
          org_id: orgId,
          agent_id: orgAgent,
          created_at: new Date(),
          data: { bench: true }
        })
      )
      yield* Effect.forEach(batch, feed.publish, { concurrency: perTick, discard: true })
      published += batch.length
    }
    const elapsed = (Date.now() - start) / 1000
    // Every client gets every event, or 30 s pass.
    const collected = message<{ latencies: Float64Array }>()
    const timer = setTimeout(() => worker.postMessage("collect"), 30_000)
    const { latencies } = yield* collected
    clearTimeout(timer)
    return {
      feed: feedName,
      clients: CLIENTS,
      published,
      publishedPerSecond: Math.round(published / elapsed),
      delivered: latencies.length,
      p50: percentile(latencies, 50),
      p95: percentile(latencies, 95),
      p99: percentile(latencies, 99),
      max: latencies[latencies.length - 1] ?? NaN
    } satisfies Row
  }).pipe(Effect.scoped)

const natsAnswers = (url: string) =>
  Effect.promise(
    () =>
      new Promise<boolean>((resolve) => {
        const { hostname, port } = new URL(url.split(",")[0]!.trim())
        const socket = connect({ host: hostname, port: Number(port || 4222) })
        socket.setTimeout(1_000)
        socket.once("connect", () => (socket.destroy(), resolve(true)))
        socket.once("error", () => resolve(false))
        socket.once("timeout", () => (socket.destroy(), resolve(false)))
      })
  )

const harness = (feed?: Layer.Layer<EventFeed, unknown, SqlClient.SqlClient>) =>
  Harness.layer({ stream: { maxConnections: CLIENTS + 10 }, ...(feed === undefined ? {} : { feed }) })

const program = Effect.gen(function* () {
  console.log(
    `bench:stream — ${CLIENTS} SSE clients, ${RATE} events/s for ${SECONDS} s; ${availableParallelism()} cores, load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`
  )
  const rows: Array<Row> = [yield* run("embedded (PGlite table)").pipe(Effect.provide(harness()))]
  if (yield* natsAnswers(natsUrl)) {
    process.env.TEST_NATS_URL ??= natsUrl
    const prefix = uniquePrefix("benchstream")
    const jetstream = EventFeedJetStream.layer({ prefix }).pipe(Layer.provide(natsForPrefix(prefix)))
    rows.push(yield* run("JetStream").pipe(Effect.provide(harness(jetstream))))
  } else console.log(`(NATS not reachable at ${natsUrl}: JetStream feed skipped)`)
  console.log("")
  console.log("| feed | clients | events | published/s | deliveries | p50 ms | p95 ms | p99 ms | max ms |")
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
  for (const r of rows)
    console.log(
      `| ${r.feed} | ${r.clients} | ${r.published} | ${r.publishedPerSecond} | ${r.delivered} / ${r.published * r.clients} | ${r.p50.toFixed(1)} | ${r.p95.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.max.toFixed(1)} |`
    )
  console.log("\ntarget: p99 < 100 ms")
})

Effect.runPromise(program.pipe(Effect.provide(Logger.minimumLogLevel(LogLevel.Warning)))).then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
