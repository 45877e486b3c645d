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
 * - throughput: BENCH_EVENTS events for BENCH_AGENTS (200) agents, as fast as the bus takes them, with
 *   agents the worker knows and (PostgreSQL, bare) agents new to it; baselines: the bus alone, the
 *   worker alone (bare).
 * - latency: BENCH_RATE events/s (default half the backend's throughput just measured, else 2,500)
 *   for BENCH_LATENCY_SECONDS: publish-to-commit p50/p90/p99.
 * - soak: BENCH_SOAK_AGENTS (10,000) agents at BENCH_SOAK_RATE (1,000/s) for
 *   BENCH_SOAK_SECONDS (60; the figure in docs/benchmarks.md is a 600 s run): the worker's memory over time.
 * - failover: two worker processes under steady load, one SIGKILLed: time until its partitions
 *   commit again, commit lag across the kill, lost/duplicated/out-of-order (BENCH_FAILOVER_*).
 * - gateway (bench/pipeline/ThroughGateway.ts): HTTP calls through `candor serve --role gateway` to a
 *   fake provider, two worker processes on PostgreSQL and JetStream (and, realistic, `--role api`),
 *   200 agents, c=64: committed checkpoints/s and CPU per checkpoint of every process, the load
 *   generator included (BENCH_GATEWAY_SECONDS, BENCH_GATEWAY_CONCURRENCY, BENCH_GATEWAY_AGENTS,
 *   BENCH_GATEWAY_WORKERS, BENCH_GATEWAY_WARMUP).
 *
 * The shape (bench/pipeline/Shape.ts): BENCH_SHAPE=realistic (the default: claimed agents of
 * BENCH_ORGS organizations with cards, conscience values, tool policies, webhooks and a live stream
 * client, set up through the API; realistic answers, one in ten an injection and one in ten a
 * review) or bare (unclaimed agents, short clear answers). With realistic, every row runs bare too,
 * printed beside it with the ratio. In the realistic shape every row also runs `candor serve --role
 * api` (the operator's setup, the live stream) and the peers' process (webhook receivers, the stream
 * client), whose CPU is counted. It needs PostgreSQL and worker processes: the PGlite rows and the
 * baselines run bare only.
 *
 * A row's window runs until every checkpoint is committed and the work they deferred (outbox,
 * webhook fan-out, reputation recomputation) is back where it started (bench/pipeline/Window.ts):
 * that drain counts in the CPU per checkpoint, by process (/proc) and by feature (the `--cpu-prof`
 * profiles of the gateway, worker and API processes, cut to the window and attributed to features
 * by source file: bench/pipeline/Profile.ts, bench/pipeline/Features.ts). BENCH_PROFILE=0 turns the
 * profiles off; BENCH_CPU_PROFILE=<dir> keeps them (bench/ProfileSummary.ts reads them).
 *
 * Other knobs (bench/pipeline/Settings.ts): BENCH_BACKENDS (postgres,pglite), BENCH_PARTITIONS (64),
 * BENCH_WORKER (process|inline: where the PostgreSQL worker runs), BENCH_WARMUP,
 * BENCH_PUBLISH_CONCURRENCY, BENCH_BATCH, BENCH_SOAK_SAMPLE_SECONDS, BENCH_PUBLISH_BATCH (the bench
 * publisher's events per JetStream message, BusOptions.publishBatchEvents; unset: the bus default).
 */
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import { natsUrl } from "./pipeline/Deployment.js"
import { failover, type FailoverResult, failoverTable } from "./pipeline/Failover.js"
import { latency, type LatencyResult } from "./pipeline/Latency.js"
import {
  cpuColumns,
  DEFERRED_HEADER,
  deferredCells,
  DRAIN_HEADER,
  drainCell,
  featureTable,
  fmt,
  framesTable,
  ratio,
  table
} from "./pipeline/Report.js"
import { progress } from "./pipeline/Progress.js"
import { type Shape, shapeSettings } from "./pipeline/Shape.js"
import { settings } from "./pipeline/Settings.js"
import { rssGrowth, slope, soak, WARM_SECONDS } from "./pipeline/Soak.js"
import { gatewaySettings, throughGateway, type ThroughGatewayResult } from "./pipeline/ThroughGateway.js"
import { busAlone, endToEnd, type ThroughputRow, workerAlone } from "./pipeline/Throughput.js"

const requested = process.argv.slice(2)
const wants = (row: string) => requested.length === 0 || requested.includes(row)
const { shapes } = shapeSettings
/** The shape each of a row's results is compared with: the last (bare) when there are two. */
const baseline = <A extends { readonly shape?: Shape | undefined }>(rows: ReadonlyArray<A>, row: A) =>
  row.shape === "realistic" ? rows.find((other) => other.shape === "bare" && other !== row) : undefined

const throughputTable = (rows: ReadonlyArray<ThroughputRow>) => {
  const columns = cpuColumns(rows.map((row) => row.cpu))
  const lines: Array<ReadonlyArray<string>> = []
  for (const row of rows) {
    const rate = row.events / row.seconds
    lines.push([
      row.name,
      row.shape ?? "bare",
      fmt(row.events),
      fmt(row.seconds, 2),
      fmt(rate),
      row.publishSeconds === undefined ? "" : fmt(row.publishSeconds, 2),
      drainCell(row.measured),
      ...columns.cells(row.cpu),
      ...deferredCells(row.measured?.deferred),
      row.name.startsWith("end to end, postgres, known") ? `≥ 5,000/s: ${rate >= 5_000 ? "met" : "NOT met"}` : ""
    ])
    const base = baseline(rows, row)
    if (base !== undefined)
      lines.push([
        "ratio realistic / bare",
        "",
        "",
        ratio(row.seconds, base.seconds),
        ratio(rate, base.events / base.seconds),
        "",
        "",
        ...columns.ratios(row.cpu, base.cpu),
        "",
        "",
        "",
        ""
      ])
  }
  table(
    "Throughput: time from the first publish until all are committed; CPU: µs per checkpoint by process, " +
      "until the deferred work is drained",
    [
      "row",
      "shape",
      "events",
      "seconds",
      "checkpoints/s",
      "last publish stored at s",
      DRAIN_HEADER,
      ...columns.header,
      ...DEFERRED_HEADER,
      "target"
    ],
    lines
  )
}

const latencyTable = (rows: ReadonlyArray<readonly [string, LatencyResult]>) => {
  const columns = cpuColumns(rows.map(([, r]) => r.measured.cpu))
  const lines: Array<ReadonlyArray<string>> = []
  for (const [backend, r] of rows) {
    lines.push([
      backend,
      r.shape,
      fmt(r.rate),
      fmt(r.published / r.seconds),
      fmt(r.published),
      fmt(r.p50, 1),
      fmt(r.p90, 1),
      fmt(r.p99, 1),
      fmt(r.max, 1),
      fmt(r.missing),
      drainCell(r.measured),
      ...columns.cells(r.measured.cpu),
      ...deferredCells(r.measured.deferred),
      backend === "postgres" ? `p99 < 250 ms: ${r.p99 < 250 && r.missing === 0 ? "met" : "NOT met"}` : ""
    ])
    const base = r.shape === "realistic" ? rows.find(([b, o]) => b === backend && o.shape === "bare")?.[1] : undefined
    if (base !== undefined)
      lines.push([
        "ratio realistic / bare",
        "",
        "",
        "",
        "",
        ratio(r.p50, base.p50),
        ratio(r.p90, base.p90),
        ratio(r.p99, base.p99),
        ratio(r.max, base.max),
        "",
        "",
        ...columns.ratios(r.measured.cpu, base.measured.cpu),
        "",
        "",
        "",
        ""
      ])
  }
  table(
    `Publish-to-commit latency at a fixed rate, ${settings.latencySeconds} s, ${fmt(settings.agents)} known agents ` +
      "(ms; upper bound, 10 ms polls; CPU: µs per checkpoint until the deferred work is drained)",
    [
      "backend",
      "shape",
      "target rate/s",
      "achieved rate/s",
      "events",
      "p50",
      "p90",
      "p99",
      "max",
      "not committed",
      DRAIN_HEADER,
      ...columns.header,
      ...DEFERRED_HEADER,
      "target"
    ],
    lines
  )
}

const verdictMix = (verdicts: Readonly<Record<string, number>>) =>
  ["clear", "review_needed", "boundary_violation"]
    .map((verdict) => `${((verdicts[verdict] ?? 0) * 100).toFixed(0)}%`)
    .join(" / ")

const gatewayTable = (results: ReadonlyArray<ThroughGatewayResult>) => {
  const columns = cpuColumns(results.map((g) => g.measured.cpu))
  const lines: Array<ReadonlyArray<string>> = []
  for (const g of results) {
    lines.push([
      g.shape,
      fmt(g.requests),
      fmt(g.requestRate),
      fmt(g.committedRate),
      fmt(g.commitSeconds, 2),
      drainCell(g.measured),
      fmt(g.failed),
      fmt(g.uncommitted),
      verdictMix(g.verdicts),
      ...columns.cells(g.measured.cpu),
      ...deferredCells(g.measured.deferred),
      `≥ 2,000/s: ${g.committedRate >= 2_000 && g.failed === 0 && g.uncommitted === 0 ? "met" : "NOT met"}`
    ])
    const base = baseline(results, g)
    if (base !== undefined)
      lines.push([
        "ratio realistic / bare",
        ratio(g.requests, base.requests),
        ratio(g.requestRate, base.requestRate),
        ratio(g.committedRate, base.committedRate),
        "",
        "",
        "",
        "",
        "",
        ...columns.ratios(g.measured.cpu, base.measured.cpu),
        "",
        "",
        "",
        ""
      ])
  }
  table(
    `Through the gateway: ${gatewaySettings.workers} workers on PostgreSQL + JetStream, ${gatewaySettings.agents} agents, ` +
      `c=${gatewaySettings.concurrency}, ${gatewaySettings.seconds} s, load generator and fake provider on the same machine ` +
      "(CPU: µs per committed checkpoint by process, until the deferred work is drained)",
    [
      "shape",
      "calls",
      "calls/s",
      "committed checkpoints/s",
      "committed s after the load",
      DRAIN_HEADER,
      "failed",
      "answered, not committed",
      "verdicts clear / review / violation",
      ...columns.header,
      ...DEFERRED_HEADER,
      "target"
    ],
    lines
  )
}

const program = Effect.gen(function* () {
  console.log(
    `pipeline bench: shapes ${shapes.join(", ")}, ${fmt(settings.events)} events, ${fmt(settings.agents)} agents, ` +
      `${settings.partitions} partitions, NATS ${natsUrl()}, PostgreSQL worker: ${settings.pgWorker}, node ${process.version}, ` +
      `profiles ${shapeSettings.profile ? "on" : "off"}, ${new Date().toISOString()}`
  )
  const realisticRuns = (backend: string) => backend === "postgres" && settings.pgWorker === "process"
  // Each backend's end-to-end throughput with known agents (its first shape's): its latency row runs at half of it.
  const measured = new Map<string, number>()
  if (wants("throughput") || wants("baselines")) {
    const rows: Array<ThroughputRow> = []
    if (wants("baselines")) rows.push(yield* busAlone)
    for (const backend of settings.backends) {
      if (wants("baselines")) rows.push(yield* workerAlone(backend))
      if (!wants("throughput")) continue
      for (const shape of shapes) {
        if (shape === "realistic" && !realisticRuns(backend)) continue
        progress(`throughput row, ${backend}, ${shape}`)
        const known = yield* endToEnd(backend, true, shape)
        rows.push(known)
        if (!measured.has(backend)) measured.set(backend, known.events / known.seconds)
      }
      if (backend === "postgres") rows.push(yield* endToEnd(backend, false, "bare"))
    }
    throughputTable(rows)
    const known = rows.filter((row) => row.name.startsWith("end to end, postgres, known") && row.measured !== undefined)
    featureTable(
      "Throughput, PostgreSQL, known agents: CPU by feature, µs per checkpoint (worker and API profiles, the window only)",
      known.map((row) => ({ shape: row.shape ?? "bare", cpu: row.cpu, features: row.measured!.features }))
    )
    framesTable(
      `Throughput, ${known[0]?.shape ?? ""}: the code that cost the most (the frame that decided the feature, everything beneath it)`,
      known[0]?.measured?.features
    )
  }
  const rateOf = (backend: string) => {
    const throughput = measured.get(backend)
    return settings.rate ?? (throughput === undefined ? 2_500 : Math.round(throughput / 2))
  }
  if (wants("latency")) {
    const rows: Array<readonly [string, LatencyResult]> = []
    for (const backend of settings.backends)
      for (const shape of shapes) {
        if (shape === "realistic" && !realisticRuns(backend)) continue
        rows.push([backend, yield* latency(backend, rateOf(backend), shape)])
      }
    latencyTable(rows)
    const pg = rows.filter(([backend]) => backend === "postgres").map(([, r]) => r)
    featureTable(
      "Latency row, PostgreSQL: CPU by feature, µs per checkpoint",
      pg.map((r) => ({ shape: r.shape, cpu: r.measured.cpu, features: r.measured.features }))
    )
  }
  // failover (bench/pipeline/Failover.ts): two workers under steady load, one SIGKILLed.
  if (wants("failover")) {
    const results: Array<FailoverResult> = []
    for (const shape of shapes) results.push(yield* failover(shape))
    table(...failoverTable(results))
  }
  if (wants("gateway")) {
    const results: Array<ThroughGatewayResult> = []
    for (const shape of shapes) {
      progress(`gateway row, ${shape}`)
      results.push(yield* throughGateway(shape))
    }
    gatewayTable(results)
    featureTable(
      "Through the gateway: CPU by feature, µs per committed checkpoint (gateway, worker and API profiles, the window only)",
      results.map((g) => ({ shape: g.shape, cpu: g.measured.cpu, features: g.measured.features }))
    )
    framesTable(
      `Through the gateway, ${results[0]!.shape}: the code that cost the most (the frame that decided the feature, everything beneath it)`,
      results[0]!.measured.features
    )
  }
  if (wants("soak")) {
    const soakRate = settings.soakRate
    for (const shape of shapes) {
      const samples = yield* soak(soakRate, shape)
      const withApi = samples[0]?.api !== undefined
      table(
        `${withApi ? "Worker and API memory" : "Worker memory"}, ${shape} shape, ${fmt(settings.soakAgents)} agents at ${fmt(soakRate)} events/s for ${settings.soakSeconds} s ` +
          `(PostgreSQL, worker ${settings.pgWorker})`,
        [
          "second",
          "RSS MB",
          "heap used MB",
          "live heap MB (after a full GC)",
          "published",
          "backlog",
          ...(withApi ? ["API RSS MB", "API live heap MB", "API V8 heap MB", "API external MB"] : [])
        ],
        samples.map((s) => [
          fmt(s.second),
          fmt(s.rssMb, 1),
          fmt(s.heapMb, 1),
          fmt(s.liveMb, 1),
          fmt(s.published),
          fmt(s.backlog),
          ...(s.api === undefined
            ? []
            : [
                fmt(s.processRssMb.api ?? 0, 1),
                fmt(s.api.liveMb, 1),
                fmt(s.api.heapTotalMb, 1),
                fmt(s.api.externalMb, 1)
              ])
        ])
      )
      const first = samples[0]!
      const last = samples[samples.length - 1]!
      // The first minute settles (pools, windows filling up); the slope is over the rest when there is one.
      const settled = samples.filter((s) => s.second >= 60)
      const sloped = settled.length >= 2 ? settled : samples
      table(
        `Worker memory summary, ${shape} shape (first: after the warm-up; last: all committed; slope: least squares over ${
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
      const growth = rssGrowth(samples)
      if (growth !== undefined)
        table(
          `RSS growth by process, ${shape} shape, from the first sample after ${WARM_SECONDS} s to the end (all committed)`,
          ["process", "RSS after the warm-up MB", "RSS at the end MB", "growth", "target"],
          growth.map((g) => [
            g.process,
            fmt(g.warmMb, 1),
            fmt(g.lastMb, 1),
            `${fmt(g.percent, 1)}%`,
            g.percent < 5 ? "< 5%: met" : "< 5%: NOT met"
          ])
        )
    }
  }
})

Effect.runPromise(program.pipe(Effect.provide(Logger.minimumLogLevel(LogLevel.Warning)))).then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
