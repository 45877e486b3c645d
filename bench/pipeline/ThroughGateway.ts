/**
 * The through-the-gateway row: the pipeline as a deployment runs it, driven by HTTP calls rather
 * than by publishing events. Processes, all on this machine: the fake provider
 * (bench/gateway/FakeUpstream.ts), `candor serve --role gateway` (publishing one event per response
 * to JetStream), two `candor serve --role worker` on a throwaway PostgreSQL database (partitions
 * leased in NATS KV), and this process as the load generator: BENCH_GATEWAY_CONCURRENCY (64) calls in
 * flight for BENCH_GATEWAY_SECONDS (20), Anthropic JSON, spread over BENCH_GATEWAY_AGENTS (200)
 * agents (`x-candor-agent`). Timed from the first call until every response's checkpoint is
 * committed; CPU per committed checkpoint by process, the load generator and the provider included.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { spawn } from "node:child_process"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { Pool } from "undici"
import { formatSecretKey, generateSecretKey } from "../../core/SecretBox.js"
import { formatSigningKey, generateSigningKey } from "../../core/Signing.js"
import { jetstreamManager } from "@nats-io/jetstream"
import { NatsConnection } from "../../adapters/bus/NatsConnection.js"
import { streamNames } from "../../adapters/bus/Subjects.js"
import { freePort } from "../../test/support/NatsServer.js"
import { throwawayDatabase } from "../../test/support/Postgres.js"
import { benchPrefix, natsUrl, procCpuMs, serverCpuMs, startWorkerProcess } from "./Deployment.js"
import { now } from "./Load.js"
import { positive } from "./Settings.js"

export const gatewaySettings = {
  seconds: positive("BENCH_GATEWAY_SECONDS", 20),
  concurrency: positive("BENCH_GATEWAY_CONCURRENCY", 64),
  agents: positive("BENCH_GATEWAY_AGENTS", 200),
  workers: positive("BENCH_GATEWAY_WORKERS", 2),
  warmupRequests: positive("BENCH_GATEWAY_WARMUP", 2_000)
} as const

export interface ThroughGatewayResult {
  readonly requests: number
  /** Calls answered per second while the load ran. */
  readonly requestRate: number
  /** Checkpoints committed per second, from the first call until the last was committed. */
  readonly committedRate: number
  /** From the end of the load until the last checkpoint was committed. */
  readonly drainSeconds: number
  readonly failed: number
  /** Calls answered whose checkpoint was never committed (exchanges the gateway dropped). */
  readonly uncommitted: number
  /** µs per committed checkpoint. */
  readonly cpu: {
    readonly gateway: number
    readonly workers: number
    readonly postgres: number
    readonly nats: number
    readonly loadGenerator: number
    readonly upstream: number
  }
}

const upstreamScript = fileURLToPath(new URL("../gateway/FakeUpstream.ts", import.meta.url))
const LOG_ORIGIN = "candor.bench"

/** The fake provider in a process of its own; its port is the first line it prints. */
const startUpstream = Effect.acquireRelease(
  Effect.async<{ readonly pid: number; readonly origin: string; readonly kill: () => void }, Error>((resume) => {
    const child = spawn(process.execPath, ["--import", "tsx", upstreamScript], { stdio: ["ignore", "pipe", "ignore"] })
    createInterface({ input: child.stdout! }).once("line", (line) =>
      resume(
        Effect.succeed({
          pid: child.pid!,
          origin: `http://127.0.0.1:${line.trim()}`,
          kill: () => child.kill("SIGTERM")
        })
      )
    )
    child.once("exit", (code) => resume(Effect.fail(new Error(`fake upstream exited with ${code}`))))
  }),
  (upstream) => Effect.sync(upstream.kill)
)

const body = JSON.stringify({
  model: "claude-bench",
  max_tokens: 256,
  messages: [{ role: "user", content: "Summarise the report." }]
})

/** `count` calls (or, without one, calls until `until`), `concurrency` in flight, round-robin over the agents. */
const drive = (pool: Pool, concurrency: number, agents: number, stop: { count?: number; until?: number }) =>
  Effect.promise(async () => {
    let next = 0
    let failed = 0
    const more = () => (stop.count !== undefined ? next < stop.count : now() < stop.until!)
    const caller = async () => {
      while (more()) {
        const i = next++
        try {
          const response = await pool.request({
            method: "POST",
            path: "/anthropic/v1/messages",
            headers: {
              "content-type": "application/json",
              "x-api-key": "sk-ant-bench",
              "anthropic-version": "2023-06-01",
              "x-candor-agent": `agent-${i % agents}`
            },
            body
          })
          await response.body.dump()
          if (response.statusCode !== 200) failed++
        } catch {
          failed++
        }
      }
    }
    await Promise.all(Array.from({ length: concurrency }, caller))
    return { requests: next, failed }
  })

export const throughGateway = Effect.scoped(
  Effect.gen(function* () {
    const { seconds, concurrency, agents, workers, warmupRequests } = gatewaySettings
    const prefix = yield* benchPrefix("bench")
    const url = natsUrl()
    const upstream = yield* startUpstream
    const databaseUrl = Redacted.value(yield* throwawayDatabase)
    const key = formatSigningKey(generateSigningKey())
    // Shared by the workers, as in a deployment: each opens the stored fields the other sealed.
    const secretKey = formatSecretKey(generateSecretKey())
    const started: Array<{ readonly pid: number; readonly output: () => ReadonlyArray<string> }> = []
    // One after the other: the first migrates the database.
    for (let i = 0; i < workers; i++)
      started.push(
        yield* startWorkerProcess(
          {
            DATABASE_URL: databaseUrl,
            NATS_URL: url,
            CANDOR_NATS_PREFIX: prefix,
            CANDOR_LOG_ORIGIN: LOG_ORIGIN,
            SIGNING_KEY: key,
            CANDOR_SECRET_KEY: secretKey
          },
          undefined
        )
      )
    const gatewayPort = yield* Effect.promise(freePort)
    const gateway = yield* startWorkerProcess(
      {
        NATS_URL: url,
        CANDOR_NATS_PREFIX: prefix,
        GATEWAY_PORT: String(gatewayPort),
        ANTHROPIC_BASE_URL: upstream.origin
      },
      undefined,
      "gateway",
      gatewayPort
    )
    const client = yield* Layer.build(
      PgClient.layer({ url: Redacted.make(databaseUrl), applicationName: "candor-bench" })
    )
    const sql = Context.get(client, SqlClient.SqlClient)
    const committed = Effect.map(
      sql<{ n: unknown }>`select coalesce(sum(position), 0) as n from chain_heads`,
      ([row]) => Number(row?.n ?? 0)
    )
    /**
     * When the committed count reaches `target`, or (a gateway drops exchanges its analysis queue
     * cannot take, and their events are never published) when it has not moved for 3 s: the time
     * of the last progress.
     */
    const awaitCommitted = (target: number) =>
      Effect.gen(function* () {
        let last = -1
        let progressAt = now()
        for (;;) {
          const n = yield* committed
          if (n >= target) return now()
          if (n !== last) [last, progressAt] = [n, now()]
          else if (now() - progressAt > 3_000) return progressAt
          yield* Effect.sleep("20 millis")
        }
      })

    const pool = yield* Effect.acquireRelease(
      Effect.sync(() => new Pool(`http://127.0.0.1:${gatewayPort}`, { connections: concurrency, pipelining: 1 })),
      (pool) => Effect.promise(() => pool.close())
    )
    // Warm-up: every agent known to the workers, JIT and pools warm, and the partitions shared by the
    // workers (a worker that joins takes its share as the other hands it over): every event consumed.
    const nc = Context.get(
      yield* Layer.build(NatsConnection.layer(url, { name: "candor-bench-probe" })),
      NatsConnection
    )
    const jsm = yield* Effect.promise(() => jetstreamManager(nc))
    const pending = Effect.promise(() => jsm.streams.info(streamNames(prefix).events)).pipe(
      Effect.map((info) => info.state.messages)
    )
    yield* drive(pool, concurrency, agents, { count: warmupRequests })
    const settledBy = now() + 120_000
    while ((yield* pending) > 0) {
      if (now() > settledBy) {
        const consumers = yield* Effect.promise(async () => {
          const out: Array<string> = []
          for await (const c of jsm.consumers.list(streamNames(prefix).events))
            out.push(`${c.name} pending=${c.num_pending} ack_pending=${c.num_ack_pending} waiting=${c.num_waiting}`)
          return out
        })
        console.error(consumers.join("\n"))
        console.error(started.map((w) => w.output().join("\n")).join("\n----\n"))
        return yield* Effect.fail(new Error("the warm-up's events were not all consumed"))
      }
      yield* Effect.sleep("100 millis")
    }
    yield* awaitCommitted(warmupRequests)
    const base = yield* committed

    const self = () => {
      const usage = process.cpuUsage()
      return (usage.user + usage.system) / 1000
    }
    const cpuAt = () => ({
      gateway: procCpuMs(gateway.pid),
      workers: started.reduce((sum, w) => sum + procCpuMs(w.pid), 0),
      postgres: serverCpuMs("postgres"),
      nats: serverCpuMs("nats-server"),
      loadGenerator: self(),
      upstream: procCpuMs(upstream.pid)
    })
    const at = cpuAt()
    const start = now()
    const { requests, failed } = yield* drive(pool, concurrency, agents, { until: start + seconds * 1000 })
    const loadEnd = now()
    const done = yield* awaitCommitted(base + requests - failed)
    const after = cpuAt()
    const checkpoints = (yield* committed) - base
    const per = (k: keyof typeof at) => ((after[k] - at[k]) * 1000) / Math.max(1, checkpoints)
    return {
      requests,
      requestRate: requests / ((loadEnd - start) / 1000),
      committedRate: checkpoints / ((done - start) / 1000),
      drainSeconds: (done - loadEnd) / 1000,
      failed,
      uncommitted: requests - failed - checkpoints,
      cpu: {
        gateway: per("gateway"),
        workers: per("workers"),
        postgres: per("postgres"),
        nats: per("nats"),
        loadGenerator: per("loadGenerator"),
        upstream: per("upstream")
      }
    } satisfies ThroughGatewayResult
  })
)
