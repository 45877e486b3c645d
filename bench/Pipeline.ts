/**
 * `npm run bench:pipeline` (`npx tsx bench/Pipeline.ts [throughput] [baselines] [latency] [soak] [failover] [gateway]`,
 * all by default): the durable pipeline end to end. The bench publishes gateway events to NATS
 * JetStream as a gateway would, a worker attests and commits them, and the bench times until they
 * are committed, on PostgreSQL and on PGlite.
 *
 * Each row gets a deployment of its own (bench/pipeline/Deployment.ts): a fresh NATS prefix, a
 * throwaway PostgreSQL database (TEST_DATABASE_URL's server) or an in-memory PGlite, and a worker.
 * With PostgreSQL the worker is a child process, `node bin/candor.js serve --role worker`
 * (configured through its environment, partitions leased in NATS KV), so the publisher does not
 * share its event loop; PGlite can only be opened by one process, so there `runWorkers` runs in the
 * bench's process. Every row starts after a warm-up (JIT, pools, leases settled).
 *
 * Rows (bench/pipeline/Throughput.ts, Latency.ts, Soak.ts, Failover.ts):
 * - throughput: BENCH_EVENTS events for BENCH_AGENTS agents, as fast as the bus takes them, with
 *   agents the worker knows and (PostgreSQL) agents new to it; baselines: the bus alone, the worker alone.
 * - latency: BENCH_RATE events/s (default half the backend's throughput just measured, else 2,500)
 *   for BENCH_LATENCY_SECONDS: publish-to-commit p50/p90/p99.
 * - soak: BENCH_SOAK_AGENTS (10,000) agents at BENCH_SOAK_RATE (1,000/s) for
 *   BENCH_SOAK_SECONDS (60; the README's figure is a 600 s run): the worker's memory over time.
 * - failover: two worker processes under steady load, one SIGKILLed: time until its partitions
 *   commit again, commit lag across the kill, lost/duplicated/out-of-order (BENCH_FAILOVER_*).
 * - gateway (bench/pipeline/ThroughGateway.ts): HTTP calls through `candor serve --role gateway` to a
 *   fake provider, two worker processes on PostgreSQL and JetStream, 200 agents, c=64: committed
 *   checkpoints/s and CPU per checkpoint of every process, the load generator included
 *   (BENCH_GATEWAY_SECONDS, BENCH_GATEWAY_CONCURRENCY, BENCH_GATEWAY_AGENTS, BENCH_GATEWAY_WORKERS).
 *
 * Other knobs (bench/pipeline/Settings.ts): BENCH_BACKENDS (postgres,pglite), BENCH_PARTITIONS (64),
 * BENCH_WORKER (process|inline: where the PostgreSQL worker runs), BENCH_CPU_PROFILE=<dir>
 * (`--cpu-prof` of the worker process), BENCH_WARMUP, BENCH_PUBLISH_CONCURRENCY, BENCH_BATCH,
 * BENCH_SOAK_SAMPLE_SECONDS, BENCH_PUBLISH_BATCH (the bench publisher's events per JetStream
 * message, BusOptions.publishBatchEvents; unset: the bus default).
 */
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import { natsUrl } from "./pipeline/Deployment.js"
import { failover, failoverTable } from "./pipeline/Failover.js"
import { latency, type LatencyResult } from "./pipeline/Latency.js"
import { settings } from "./pipeline/Settings.js"
import { slope, soak } from "./pipeline/Soak.js"
import { gatewaySettings, throughGateway } from "./pipeline/ThroughGateway.js"
import { busAlone, endToEnd, type ThroughputRow, workerAlone } from "./pipeline/Throughput.js"

const requested = process.argv.slice(2)
const wants = (row: string) => requested.length === 0 || requested.includes(row)

const fmt = (n: number, digits = 0) =>
  n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits })

const table = (title: string, header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>) => {
  console.log(`\n${title}\n`)
  console.log(`| ${header.join(" | ")} |`)
  console.log(`|${header.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|`)
  for (const row of rows) console.log(`| ${row.join(" | ")} |`)
}

const throughputTable = (rows: ReadonlyArray<ThroughputRow>) =>
  table(
    "Throughput: time from the first publish until all are committed (CPU: µs per checkpoint, by process)",
    [
      "row",
      "events",
      "seconds",
      "checkpoints/s",
      "last publish stored at s",
      "CPU worker",
      "CPU bench",
      "CPU postgres",
      "CPU nats",
      "target"
    ],
    rows.map((row) => {
      const rate = row.events / row.seconds
      return [
        row.name,
        fmt(row.events),
        fmt(row.seconds, 2),
        fmt(rate),
        row.publishSeconds === undefined ? "" : fmt(row.publishSeconds, 2),
        row.cpu.worker === undefined ? "" : fmt(row.cpu.worker),
        fmt(row.cpu.bench),
        fmt(row.cpu.postgres),
        fmt(row.cpu.nats),
        row.name.startsWith("end to end, postgres, known") ? `≥ 5,000/s: ${rate >= 5_000 ? "met" : "NOT met"}` : ""
      ]
    })
  )

const latencyTable = (rows: ReadonlyArray<readonly [string, LatencyResult]>) =>
  table(
    `Publish-to-commit latency at a fixed rate, ${settings.latencySeconds} s, ${fmt(settings.agents)} known agents (ms; upper bound, 10 ms polls; CPU: µs per checkpoint)`,
    [
      "backend",
      "target rate/s",
      "achieved rate/s",
      "events",
      "p50",
      "p90",
      "p99",
      "max",
      "not committed",
      "CPU worker",
      "CPU bench",
      "CPU postgres",
      "CPU nats",
      "target"
    ],
    rows.map(([backend, r]) => [
      backend,
      fmt(r.rate),
      fmt(r.published / r.seconds),
      fmt(r.published),
      fmt(r.p50, 1),
      fmt(r.p90, 1),
      fmt(r.p99, 1),
      fmt(r.max, 1),
      fmt(r.missing),
      r.cpu.worker === undefined ? "" : fmt(r.cpu.worker),
      fmt(r.cpu.bench),
      fmt(r.cpu.postgres),
      fmt(r.cpu.nats),
      backend === "postgres" ? `p99 < 250 ms: ${r.p99 < 250 && r.missing === 0 ? "met" : "NOT met"}` : ""
    ])
  )

const program = Effect.gen(function* () {
  console.log(
    `pipeline bench: ${fmt(settings.events)} events, ${fmt(settings.agents)} agents, ${settings.partitions} partitions, ` +
      `NATS ${natsUrl()}, PostgreSQL worker: ${settings.pgWorker}, node ${process.version}`
  )
  // Each backend's end-to-end throughput with known agents: its latency row runs at half of it.
  const measured = new Map<string, number>()
  if (wants("throughput") || wants("baselines")) {
    const rows: Array<ThroughputRow> = []
    if (wants("baselines")) rows.push(yield* busAlone)
    for (const backend of settings.backends) {
      if (wants("baselines")) rows.push(yield* workerAlone(backend))
      if (!wants("throughput")) continue
      const known = yield* endToEnd(backend, true)
      rows.push(known)
      measured.set(backend, known.events / known.seconds)
      if (backend === "postgres") rows.push(yield* endToEnd(backend, false))
    }
    throughputTable(rows)
  }
  const rateOf = (backend: string) => {
    const throughput = measured.get(backend)
    return settings.rate ?? (throughput === undefined ? 2_500 : Math.round(throughput / 2))
  }
  if (wants("latency")) {
    const rows: Array<readonly [string, LatencyResult]> = []
    for (const backend of settings.backends) rows.push([backend, yield* latency(backend, rateOf(backend))])
    latencyTable(rows)
  }
  // failover (bench/pipeline/Failover.ts): two workers under steady load, one SIGKILLed.
  if (wants("failover")) table(...failoverTable(yield* failover))
  if (wants("gateway")) {
    const g = yield* throughGateway
    const { gateway, workers, postgres, nats, loadGenerator, upstream } = g.cpu
    table(
      `Through the gateway: ${gatewaySettings.workers} workers on PostgreSQL + JetStream, ${gatewaySettings.agents} agents, ` +
        `c=${gatewaySettings.concurrency}, ${gatewaySettings.seconds} s, load generator and fake provider on the same machine ` +
        "(CPU: µs per committed checkpoint, by process)",
      [
        "calls",
        "calls/s",
        "committed checkpoints/s",
        "drained s after the load",
        "failed",
        "answered, not committed",
        "CPU gateway",
        "CPU workers",
        "CPU postgres",
        "CPU nats",
        "CPU load generator",
        "CPU provider",
        "CPU total",
        "target"
      ],
      [
        [
          fmt(g.requests),
          fmt(g.requestRate),
          fmt(g.committedRate),
          fmt(g.drainSeconds, 2),
          fmt(g.failed),
          fmt(g.uncommitted),
          fmt(gateway),
          fmt(workers),
          fmt(postgres),
          fmt(nats),
          fmt(loadGenerator),
          fmt(upstream),
          fmt(gateway + workers + postgres + nats + loadGenerator + upstream),
          `≥ 2,000/s: ${g.committedRate >= 2_000 && g.failed === 0 && g.uncommitted === 0 ? "met" : "NOT met"}`
        ]
      ]
    )
  }
  if (wants("soak")) {
    const soakRate = settings.soakRate
    const samples = yield* soak(soakRate)
    table(
      `Worker memory, ${fmt(settings.soakAgents)} agents at ${fmt(soakRate)} events/s for ${settings.soakSeconds} s ` +
        `(PostgreSQL, worker ${settings.pgWorker})`,
      ["second", "RSS MB", "heap used MB", "live heap MB (after a full GC)", "published", "backlog"],
      samples.map((s) => [
        fmt(s.second),
        fmt(s.rssMb, 1),
        fmt(s.heapMb, 1),
        fmt(s.liveMb, 1),
        fmt(s.published),
        fmt(s.backlog)
      ])
    )
    const first = samples[0]!
    const last = samples[samples.length - 1]!
    // The first minute settles (pools, windows filling up); the slope is over the rest when there is one.
    const settled = samples.filter((s) => s.second >= 60)
    const sloped = settled.length >= 2 ? settled : samples
    table(
      `Worker memory summary (first: after the warm-up; last: all committed; slope: least squares over ${
        sloped === settled ? "the samples from the first minute on" : "all samples"
      })`,
      ["measure", "first MB", "last MB", "max MB", "slope MB/min"],
      (["rssMb", "heapMb", "liveMb"] as const).map((k) => [
        { rssMb: "RSS", heapMb: "heap used", liveMb: "live heap" }[k],
        fmt(first[k], 1),
        fmt(last[k], 1),
        fmt(Math.max(...samples.map((s) => s[k])), 1),
        fmt(slope(sloped.map((s) => [s.second / 60, s[k]] as const)), 2)
      ])
    )
  }
})

Effect.runPromise(program.pipe(Effect.provide(Logger.minimumLogLevel(LogLevel.Warning)))).then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
