/**
 * The through-the-gateway row: the pipeline as a deployment runs it, driven by HTTP calls rather
 * than by publishing events. Processes, all on this machine: the fake provider
 * (bench/gateway/FakeUpstream.ts), `candor serve --role gateway` (publishing one event per response
 * to JetStream), BENCH_GATEWAY_WORKERS (2) `candor serve --role worker` on a throwaway PostgreSQL
 * database (partitions leased in NATS KV), and this process as the load generator:
 * BENCH_GATEWAY_CONCURRENCY (64) calls in flight for BENCH_GATEWAY_SECONDS (20), Anthropic JSON,
 * spread over BENCH_GATEWAY_AGENTS (200) agents. In the realistic shape (bench/pipeline/Shape.ts)
 * also `candor serve --role api` and the peers (webhook receivers, live stream client); the agents
 * are the organizations' claimed agents (their provider key and `x-candor-agent` name), and the
 * answers the realistic ones in the shape's mix. In the bare shape one key and 200 unclaimed names,
 * short clear answers.
 *
 * Timed from the first call until every response's checkpoint is committed; CPU per committed
 * checkpoint by process (the load generator, the provider and the peers included) until the work
 * the commits deferred is drained, and by feature from the gateway's, workers' and API's profiles.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import { jetstreamManager } from "@nats-io/jetstream"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { join } from "node:path"
import { Pool } from "undici"
import { NatsConnection } from "../../adapters/bus/NatsConnection.js"
import { streamNames } from "../../adapters/bus/Subjects.js"
import { throwawayDatabase } from "../../test/support/Postgres.js"
import { awaitDrained, backlogProbe } from "./Backlogs.js"
import { pollIntervalMs } from "./Polling.js"
import { benchPrefix, natsUrl, startWorkerProcess } from "./CandorProcess.js"
import { startUpstream } from "./Children.js"
import { natsServer } from "./Deployment.js"
import { now } from "./Load.js"
import { postgresPids } from "./ProcessCpu.js"
import { type FeatureBreakdown, profiled } from "./Profiling.js"
import { ANSWER_HEADER, answerKindOf, realisticRequestBody } from "./RealisticContent.js"
import { progress } from "./Progress.js"
import { setUpRealistic, sharedSettings, startGateway, storeEnv } from "./Realistic.js"
import type { Shape } from "./Shape.js"
import { positive, settings } from "./Settings.js"
import { type Measurement, openWindow } from "./Window.js"

export const gatewaySettings = {
  seconds: positive("BENCH_GATEWAY_SECONDS", 20),
  concurrency: positive("BENCH_GATEWAY_CONCURRENCY", 64),
  agents: positive("BENCH_GATEWAY_AGENTS", 200),
  workers: positive("BENCH_GATEWAY_WORKERS", 2),
  warmupRequests: positive("BENCH_GATEWAY_WARMUP", 2_000)
} as const

export interface ThroughGatewayResult {
  readonly shape: Shape
  readonly requests: number
  /** Calls answered per second while the load ran. */
  readonly requestRate: number
  /** Checkpoints committed per second, from the first call until the last was committed. */
  readonly committedRate: number
  /** From the end of the load until the last checkpoint was committed. */
  readonly commitSeconds: number
  readonly failed: number
  /** Calls answered whose checkpoint was not committed by the end of the drain (exchanges the gateway dropped). */
  readonly uncommitted: number
  /** Share of each verdict among the deployment's checkpoints (warm-up included). */
  readonly verdicts: Readonly<Record<string, number>>
  /** CPU µs per committed checkpoint by process, the drain, what the deferred work delivered, by feature. */
  readonly measured: Measurement & { readonly features: FeatureBreakdown | undefined }
}

/** Who calls: a provider key and an `x-candor-agent` name. */
interface Caller {
  readonly key: string
  readonly name: string
}

const bareBody = JSON.stringify({
  model: "claude-bench",
  max_tokens: 256,
  messages: [{ role: "user", content: "Summarise the report." }]
})

/**
 * `count` calls (or, without one, calls until `until`), `concurrency` in flight, round-robin over the
 * callers; `realistic`: the realistic request, asking the provider for the answer of the shape's mix.
 */
const drive = (
  pool: Pool,
  concurrency: number,
  callers: ReadonlyArray<Caller>,
  realistic: boolean,
  stop: { count?: number; until?: number }
) =>
  Effect.promise(async () => {
    let next = 0
    let failed = 0
    const more = () => (stop.count !== undefined ? next < stop.count : now() < stop.until!)
    const caller = async () => {
      while (more()) {
        const i = next++
        const { key, name } = callers[i % callers.length]!
        try {
          const response = await pool.request({
            method: "POST",
            path: "/anthropic/v1/messages",
            headers: {
              "content-type": "application/json",
              "x-api-key": key,
              "anthropic-version": "2023-06-01",
              "x-candor-agent": name,
              ...(realistic ? { [ANSWER_HEADER]: answerKindOf(i, callers.length) } : {})
            },
            body: realistic ? realisticRequestBody : bareBody
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

const run = (shape: Shape, dir: string | undefined) =>
  Effect.gen(function* () {
    const { seconds, concurrency, agents, workers, warmupRequests } = gatewaySettings
    const profile = (role: string) => (dir === undefined ? undefined : join(dir, role))
    const prefix = yield* benchPrefix("bench")
    const url = natsUrl()
    const upstream = yield* startUpstream
    const databaseUrl = Redacted.value(yield* throwawayDatabase)
    const shared = sharedSettings(databaseUrl, url, prefix, settings.partitions)
    const started: Array<{ readonly pid: number; readonly output: () => ReadonlyArray<string> }> = []
    // One after the other: the first migrates the database.
    progress(`gateway row, ${shape}: starting ${workers} workers`)
    for (let i = 0; i < workers; i++) started.push(yield* startWorkerProcess(storeEnv(shared), profile("worker")))
    const parts = shape === "realistic" ? yield* setUpRealistic(shared, agents, dir) : undefined
    const gateway = yield* startGateway(shared, upstream.origin, profile("gateway"))
    const context = yield* Layer.build(
      Layer.merge(
        PgClient.layer({ url: Redacted.make(databaseUrl), applicationName: "candor-bench" }),
        NatsConnection.layer(url, { name: "candor-bench-probe" })
      )
    )
    const sql = Context.get(context, SqlClient.SqlClient)
    const nc = Context.get(context, NatsConnection)
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
        const since = now()
        let progressAt = since
        for (;;) {
          const n = yield* committed
          if (n >= target) return now()
          if (n !== last) [last, progressAt] = [n, now()]
          else if (now() - progressAt > 3_000) return progressAt
          yield* Effect.sleep(pollIntervalMs(now() - since))
        }
      })

    const callers: ReadonlyArray<Caller> =
      parts === undefined
        ? Array.from({ length: agents }, (_, i) => ({ key: "sk-ant-bench", name: `agent-${i}` }))
        : parts.organizations
            .flatMap((org) => org.agents.map((agent) => ({ key: org.providerKey, name: agent.name })))
            .slice(0, agents)
    const pool = yield* Effect.acquireRelease(
      Effect.sync(() => new Pool(gateway.url, { connections: concurrency, pipelining: 1 })),
      (pool) => Effect.promise(() => pool.close())
    )
    // Warm-up: every agent known to the workers, JIT and pools warm, and the partitions shared by the
    // workers (a worker that joins takes its share as the other hands it over): every event consumed,
    // committed, and what the commits deferred drained.
    const jsm = yield* Effect.promise(() => jetstreamManager(nc))
    const pending = Effect.promise(() => jsm.streams.info(streamNames(prefix).events)).pipe(
      Effect.map((info) => info.state.messages)
    )
    progress(`gateway row, ${shape}: warm-up (${warmupRequests} calls)`)
    const warm = yield* drive(pool, concurrency, callers, parts !== undefined, { count: warmupRequests })
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
    yield* awaitCommitted(warm.requests - warm.failed)
    const backlog = backlogProbe(sql, nc, prefix)
    yield* awaitDrained(backlog, { outbox: 0, proofJobs: 0, fanOut: 0, reputation: 0 })
    const base = yield* committed

    const close = yield* openWindow({
      processes: {
        gateway: Effect.succeed([gateway.pid]),
        workers: Effect.succeed(started.map((w) => w.pid)),
        postgres: postgresPids(sql),
        nats: natsServer,
        loadGenerator: Effect.succeed([process.pid]),
        provider: Effect.succeed([upstream.pid]),
        ...(parts === undefined
          ? {}
          : { api: Effect.succeed([parts.apiPid]), peers: Effect.succeed([parts.peers.pid]) })
      },
      backlog,
      peers: parts?.peers
    })
    progress(`gateway row, ${shape}: load for ${seconds} s`)
    const start = now()
    const { failed, requests } = yield* drive(pool, concurrency, callers, parts !== undefined, {
      until: start + seconds * 1000
    })
    const loadEnd = now()
    const done = yield* awaitCommitted(base + requests - failed)
    const checkpoints = (yield* committed) - base
    progress(`gateway row, ${shape}: ${checkpoints} committed; draining the deferred work`)
    const measured = yield* close(checkpoints, done)
    // Counted again once the deferred work is drained: a commit that stalled past `awaitCommitted`'s
    // 3 s and came later is late, not lost; what is still missing now was never recorded.
    const recorded = (yield* committed) - base
    const verdictRows = yield* sql<{ verdict: string; n: unknown }>`
      select verdict, count(*) as n from checkpoints group by verdict`
    const total = verdictRows.reduce((sum, row) => sum + Number(row.n), 0)
    return {
      shape,
      requests,
      requestRate: requests / ((loadEnd - start) / 1000),
      committedRate: checkpoints / ((done - start) / 1000),
      commitSeconds: (done - loadEnd) / 1000,
      failed,
      uncommitted: requests - failed - recorded,
      verdicts: Object.fromEntries(verdictRows.map((row) => [row.verdict, Number(row.n) / Math.max(1, total)])),
      measurement: measured,
      window: measured.window,
      cpu: measured.cpu,
      checkpoints
    }
  })

export const throughGateway = (shape: Shape): Effect.Effect<ThroughGatewayResult, unknown> =>
  profiled("gateway", shape, (dir) => run(shape, dir)).pipe(
    Effect.map(({ checkpoints: _, cpu: __, features, measurement, window: ___, ...result }): ThroughGatewayResult => ({
      ...result,
      measured: { ...measurement, features }
    }))
  )
