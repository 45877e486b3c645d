/**
 * One deployment per bench row, torn down with the row's scope: a NATS prefix of its own on the
 * shared server (streams and KV buckets deleted afterwards), a throwaway PostgreSQL database or an
 * in-memory PGlite, the workers that commit what the bench publishes and, in the realistic shape
 * (bench/pipeline/Shape.ts), the API, the peers and the organizations and agents set up through the
 * API (bench/pipeline/Realistic.ts), with the events their gateway publishes as the row's events.
 *
 * Workers are either a child process (`node bin/candor.js serve --role worker`, configured through
 * its environment as an operator would run it, partitions leased in NATS KV) or, for PGlite (a
 * database only one process can open), `runWorkers` in the bench's own process.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import { join } from "node:path"
import { generateSigningKey } from "../../core/Signing.js"
import { Bus } from "../../adapters/bus/Bus.js"
import { NatsConnection } from "../../adapters/bus/NatsConnection.js"
import { AgentState } from "../../adapters/bus/AgentState.js"
import { SigningKeys } from "../../adapters/keys/SigningKeys.js"
import * as PgliteClient from "../../adapters/store/PgliteClient.js"
import * as EventFeedStore from "../../adapters/bus/EventFeedStore.js"
import * as GovernanceLog from "../../adapters/store/GovernanceLog.js"
import * as SqlStore from "../../adapters/store/SqlStore.js"
import * as StoreDatabase from "../../adapters/store/StoreDatabase.js"
import { PartitionOwnership } from "../../adapters/bus/PartitionOwnership.js"
import { runWorkers } from "../../streams/PartitionWorkers.js"
import { throwawayDatabase } from "../../test/support/Postgres.js"
import * as SecretKeys from "../../adapters/keys/SecretKeys.js"
import { type Backlog, backlogProbe } from "./Backlogs.js"
import { benchPrefix, type Memory, natsUrl, startWorkerProcess } from "./CandorProcess.js"
import type { Peers } from "./Children.js"
import { listeningPid, postgresPids } from "./ProcessCpu.js"
import { LOG_ORIGIN, realisticEvents, setUpRealistic, sharedSettings, storeEnv } from "./Realistic.js"
import type { Shape } from "./Shape.js"
import { settings } from "./Settings.js"
import { bareSource, type EventSource } from "./Templates.js"

export { natsUrl } from "./CandorProcess.js"

export type Backend = "postgres" | "pglite"
export type WorkerMode = "process" | "inline"

export interface Deployment {
  readonly backend: Backend
  readonly worker: WorkerMode
  readonly shape: Shape
  readonly prefix: string
  readonly partitions: number
  /** A bus of the bench's own (its own NATS connection), to publish with. */
  readonly bus: Bus["Type"]
  /** The row's events: its agents, round-robin, in its shape. */
  readonly source: EventSource
  /** Events published into the deployment while it was set up (the realistic shape's captured answers). */
  readonly published: number
  /** Checkpoints committed so far: the sum of the chain heads' positions. */
  readonly committed: Effect.Effect<number, unknown>
  /** The chain positions (numbers of committed checkpoints) of these agents, or of all when none are named. */
  readonly heads: (
    agentIds?: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyArray<{ readonly agent_id: string; readonly position: number }>, unknown>
  /** The worker's memory now (inline: this whole process, publisher included; live heap only with --expose-gc). */
  readonly memory: Effect.Effect<Memory>
  /** The API process's memory, when the deployment runs one (the realistic shape). */
  readonly apiMemory: Effect.Effect<Memory> | undefined
  /** CPU time the worker process has used so far, ms (inline: this whole process). */
  readonly cpuMs: Effect.Effect<number>
  /** The processes whose CPU a row counts, by name (bench/pipeline/ProcessCpu.ts `startMeter`). */
  readonly processes: Readonly<Record<string, Effect.Effect<ReadonlyArray<number>, unknown>>>
  /** The deferred work (outbox, webhook fan-out, reputation) a row waits out (bench/pipeline/Backlogs.ts). */
  readonly backlog: Effect.Effect<Backlog, unknown>
  /** The realistic shape's webhook receivers and live stream client. */
  readonly peers: Peers | undefined
}

export interface DeploymentOptions {
  readonly backend: Backend
  readonly worker: WorkerMode
  readonly partitions: number
  readonly shape: Shape
  /** The row's agents: how many, and (bare) the label of their ids. */
  readonly agents: { readonly label: string; readonly count: number }
  /** `--cpu-prof` of the worker (and API) processes into `<dir>/worker` (`<dir>/api`), written as they stop. */
  readonly profileDir?: string | undefined
}

const selfMemory = Effect.sync((): Memory => {
  const before = process.memoryUsage()
  ;(globalThis as { gc?: () => void }).gc?.()
  return {
    rss: before.rss,
    heapUsed: before.heapUsed,
    heapLive: process.memoryUsage().heapUsed,
    heapTotal: before.heapTotal,
    external: before.external
  }
})
const selfCpuMs = Effect.sync(() => {
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1000
})

const quiet = Logger.minimumLogLevel(LogLevel.Warning)

/** The agents of a bare row: `agt-<label>-<i>`, unclaimed. */
export const agentIds = (label: string, count: number) => Array.from({ length: count }, (_, i) => `agt-${label}-${i}`)

/** The run's nats-server: the process listening on NATS_URL's port (found once). */
let natsPid: number | undefined
export const natsServer = Effect.sync((): ReadonlyArray<number> => {
  natsPid ??= listeningPid(Number(new URL(natsUrl().split(",")[0]!.trim()).port || 4222))
  return natsPid === undefined ? [] : [natsPid]
})

export const deploy = (options: DeploymentOptions): Effect.Effect<Deployment, unknown, Scope.Scope> =>
  Effect.gen(function* () {
    const { backend, partitions, shape } = options
    if (shape === "realistic" && (backend !== "postgres" || options.worker !== "process"))
      return yield* Effect.fail(new Error("the realistic shape needs PostgreSQL and a worker process"))
    const prefix = yield* benchPrefix("bench")
    const url = natsUrl()
    const key = generateSigningKey()
    const publisher = yield* Layer.build(
      Bus.layerJetStream({
        prefix,
        partitions,
        ...(settings.publishBatchEvents === undefined ? {} : { publishBatchEvents: settings.publishBatchEvents })
      }).pipe(Layer.provideMerge(NatsConnection.layer(url, { name: "candor-bench" })))
    )
    const bus = Context.get(publisher, Bus)
    const nc = Context.get(publisher, NatsConnection)

    let sql: SqlClient.SqlClient
    let memory = selfMemory
    let cpuMs = selfCpuMs
    let source = bareSource(agentIds(options.agents.label, options.agents.count))
    const processes: Record<string, Effect.Effect<ReadonlyArray<number>, unknown>> = {
      bench: Effect.succeed([process.pid]),
      nats: natsServer
    }
    let peers: Peers | undefined
    let apiMemory: Effect.Effect<Memory> | undefined
    let published = 0
    if (options.worker === "process") {
      if (backend !== "postgres") return yield* Effect.fail(new Error("a worker process needs PostgreSQL"))
      const databaseUrl = Redacted.value(yield* throwawayDatabase)
      const shared = sharedSettings(databaseUrl, url, prefix, partitions)
      const worker = yield* startWorkerProcess(
        storeEnv(shared),
        options.profileDir === undefined ? undefined : join(options.profileDir, "worker")
      )
      memory = worker.memory
      cpuMs = worker.cpuMs
      processes.worker = Effect.succeed([worker.pid])
      // The worker has migrated the database by the time it serves.
      const client = yield* Layer.build(
        PgClient.layer({ url: Redacted.make(databaseUrl), applicationName: "candor-bench" })
      )
      sql = Context.get(client, SqlClient.SqlClient)
      if (shape === "realistic") {
        const parts = yield* setUpRealistic(shared, options.agents.count, options.profileDir)
        processes.api = Effect.succeed([parts.apiPid])
        apiMemory = parts.apiMemory
        processes.peers = Effect.succeed([parts.peers.pid])
        peers = parts.peers
        ;({ source, published } = yield* realisticEvents(shared, nc, parts))
      }
    } else {
      const storeLayer =
        backend === "postgres"
          ? Layer.unwrapScoped(
              Effect.map(throwawayDatabase, (databaseUrl) =>
                StoreDatabase.layer({ databaseUrl: Option.some(databaseUrl), dataDir: "unused" }).pipe(
                  Layer.provide(SecretKeys.layerEphemeral)
                )
              )
            )
          : SqlStore.layer.pipe(
              Layer.provide(SecretKeys.layerEphemeral),
              Layer.provideMerge(StoreDatabase.migrated(PgliteClient.layer()))
            )
      const workers = Layer.scopedDiscard(runWorkers({ logOrigin: LOG_ORIGIN, subjectPrefix: prefix })).pipe(
        Layer.provide(
          Layer.mergeAll(
            Bus.layerJetStream({ prefix, partitions }).pipe(
              Layer.provide(NatsConnection.layer(url, { name: "candor-bench-worker" }))
            ),
            AgentState.layerMemory,
            PartitionOwnership.layerAll(partitions)
          )
        ),
        Layer.provide(GovernanceLog.layer({ logOrigin: LOG_ORIGIN })),
        Layer.provide(EventFeedStore.layer()),
        Layer.provideMerge(SigningKeys.fromKey(key)),
        Layer.provideMerge(storeLayer),
        Layer.provide(quiet)
      )
      sql = Context.get(yield* Layer.build(workers), SqlClient.SqlClient)
    }

    const committed = Effect.map(
      sql<{ n: unknown }>`select coalesce(sum(position), 0) as n from chain_heads`,
      ([row]) => Number(row?.n ?? 0)
    )
    const heads = (agentIds?: ReadonlyArray<string>) =>
      Effect.map(
        agentIds === undefined
          ? sql<{ agent_id: string; position: unknown }>`select agent_id, position from chain_heads`
          : sql<{ agent_id: string; position: unknown }>`
              select agent_id, position from chain_heads
              where agent_id in (select jsonb_array_elements_text(${JSON.stringify(agentIds)}::jsonb))`,
        (rows) => rows.map((row) => ({ agent_id: row.agent_id, position: Number(row.position) }))
      )
    if (backend === "postgres") processes.postgres = postgresPids(sql)
    return {
      backend,
      worker: options.worker,
      shape,
      prefix,
      partitions,
      bus,
      source,
      published,
      committed,
      heads,
      memory,
      apiMemory,
      cpuMs,
      processes,
      backlog: backlogProbe(sql, nc, prefix),
      peers
    }
  })
