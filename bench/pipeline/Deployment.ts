/**
 * One deployment per bench row, torn down with the row's scope: a NATS prefix of its own on the
 * shared server (streams and KV buckets deleted afterwards), a throwaway PostgreSQL database or an
 * in-memory PGlite, and the workers that commit what the bench publishes.
 *
 * Workers are either a child process (`node bin/candor.js serve --role worker`, configured through
 * its environment as an operator would run it, partitions leased in NATS KV) or, for PGlite (a
 * database only one process can open) and for profiling, `runWorkers` in the bench's own process.
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
import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { formatSigningKey, generateSigningKey } from "../../core/Signing.js"
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
import { removeNatsResources } from "../../test/adapters/bus/NatsSupport.js"
import { freePort } from "../../test/support/NatsServer.js"
import { throwawayDatabase } from "../../test/support/Postgres.js"
import * as SecretKeys from "../../adapters/keys/SecretKeys.js"
import { settings } from "./Settings.js"

export type Backend = "postgres" | "pglite"
export type WorkerMode = "process" | "inline"

export const natsUrl = (): string => process.env.TEST_NATS_URL ?? "nats://127.0.0.1:4222"

export interface Memory {
  readonly rss: number
  readonly heapUsed: number
  /** Heap used after a full collection: what is really retained. */
  readonly heapLive: number
}

export interface Deployment {
  readonly backend: Backend
  readonly worker: WorkerMode
  readonly prefix: string
  readonly partitions: number
  /** A bus of the bench's own (its own NATS connection), to publish with. */
  readonly bus: Bus["Type"]
  /** Checkpoints committed so far: the sum of the chain heads' positions. */
  readonly committed: Effect.Effect<number, unknown>
  /** The chain positions (numbers of committed checkpoints) of these agents, or of all when none are named. */
  readonly heads: (
    agentIds?: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyArray<{ readonly agent_id: string; readonly position: number }>, unknown>
  /** The worker's memory now (inline: this whole process, publisher included; live heap only with --expose-gc). */
  readonly memory: Effect.Effect<Memory>
  /** CPU time the worker process has used so far, ms (inline: this whole process). */
  readonly cpuMs: Effect.Effect<number>
}

export interface DeploymentOptions {
  readonly backend: Backend
  readonly worker: WorkerMode
  readonly partitions: number
  /** `--cpu-prof` into this directory (process workers; written when the worker stops). */
  readonly cpuProfileDir?: string | undefined
}

const bin = fileURLToPath(new URL("../../bin/candor.js", import.meta.url))
const probe = fileURLToPath(new URL("./MemoryProbe.mjs", import.meta.url))
const LOG_ORIGIN = "candor.bench"

/** utime + stime of a process, from /proc (clock ticks of 10 ms). */
export const procCpuMs = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12])) * 10
}

/**
 * CPU ms used so far by every process named `command` (`postgres`, `nats-server`): the servers'
 * share of a checkpoint. Backends that exit between two readings take their time with them, but
 * the bench's connections and the worker's pool live for the whole row.
 */
export const serverCpuMs = (command: string): number => {
  let total = 0
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
      if (stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")) === command) total += procCpuMs(Number(pid))
    } catch {
      // gone meanwhile
    }
  }
  return total
}

const selfMemory = Effect.sync((): Memory => {
  const before = process.memoryUsage()
  ;(globalThis as { gc?: () => void }).gc?.()
  return { rss: before.rss, heapUsed: before.heapUsed, heapLive: process.memoryUsage().heapUsed }
})
const selfCpuMs = Effect.sync(() => {
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1000
})

const quiet = Logger.minimumLogLevel(LogLevel.Warning)

/**
 * `candor serve --role <role>` (a worker unless said otherwise) as a child; stopped with SIGTERM (so
 * a CPU profile is written) when the scope closes. Ready once its health endpoint answers (on
 * `healthPort` when it sets GATEWAY_PORT itself, else on PORT).
 */
export const startWorkerProcess = (
  env: Record<string, string>,
  cpuProfileDir: string | undefined,
  role: "worker" | "gateway" = "worker",
  healthPort?: number
) =>
  Effect.gen(function* () {
    const port = yield* Effect.promise(freePort)
    const dataDir = mkdtempSync(join(tmpdir(), "candor-bench-"))
    const args = [
      "--expose-gc",
      "--import",
      probe,
      ...(cpuProfileDir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${cpuProfileDir}`])
    ]
    const inherited = Object.fromEntries(
      Object.entries(process.env).filter(
        ([key]) => !/^(DATABASE_URL|NATS_URL|CANDOR_\w+|SIGNING_KEY|PORT|HOST)$/.test(key)
      )
    )
    const child = yield* Effect.acquireRelease(
      Effect.sync(() =>
        spawn(process.execPath, [...args, bin, "serve", "--role", role], {
          env: {
            ...inherited,
            ...env,
            HOST: "127.0.0.1",
            PORT: String(port),
            CANDOR_DATA_DIR: dataDir,
            LOG_LEVEL: "warn"
          },
          stdio: ["ignore", "pipe", "pipe"]
        })
      ),
      (child) =>
        Effect.async<void>((resume) => {
          if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
          child.once("exit", () => resume(Effect.void))
          child.kill("SIGTERM")
        }).pipe(
          Effect.timeout("20 seconds"),
          Effect.catchAll(() => Effect.sync(() => child.kill("SIGKILL"))),
          Effect.zipRight(Effect.sync(() => rmSync(dataDir, { recursive: true, force: true })))
        )
    )
    const samples: Array<(memory: Memory) => void> = []
    const lines: Array<string> = []
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on("line", (line) => {
        if (line.startsWith(`{"bench_memory"`)) {
          const { bench_memory } = JSON.parse(line) as { bench_memory: Memory }
          samples.shift()?.(bench_memory)
        } else if (lines.push(line) > 200) lines.shift()
      })
    }
    // The worker logs nothing at warning level when all is well; ready once its health endpoint answers.
    const deadline = Date.now() + 60_000
    for (;;) {
      if (child.exitCode !== null) return yield* Effect.fail(new Error(`worker exited:\n${lines.join("\n")}`))
      const ok = yield* Effect.promise(() =>
        fetch(`http://127.0.0.1:${healthPort ?? port}/health/live`).then(
          (r) => r.ok,
          () => false
        )
      )
      if (ok) break
      if (Date.now() > deadline) return yield* Effect.fail(new Error(`worker not ready:\n${lines.join("\n")}`))
      yield* Effect.sleep("100 millis")
    }
    const pid = child.pid!
    const memory = Effect.async<Memory>((resume) => {
      samples.push((m) => resume(Effect.succeed(m)))
      child.kill("SIGUSR2")
    })
    return { pid, memory, cpuMs: Effect.sync(() => procCpuMs(pid)), output: () => [...lines] }
  })

/** A NATS prefix of its own (`<tag><8 hex>`), its streams and KV buckets deleted when the scope closes. */
export const benchPrefix = (tag: string): Effect.Effect<string, never, Scope.Scope> =>
  Effect.gen(function* () {
    const prefix = `${tag}${randomBytes(4).toString("hex")}`
    yield* Effect.addFinalizer(() =>
      removeNatsResources(prefix).pipe(
        Effect.provide(NatsConnection.layer(natsUrl(), { name: "candor-bench-cleanup" })),
        Effect.timeout("10 seconds"),
        Effect.ignore
      )
    )
    return prefix
  })

export const deploy = (options: DeploymentOptions): Effect.Effect<Deployment, unknown, Scope.Scope> =>
  Effect.gen(function* () {
    const { backend, partitions } = options
    const prefix = yield* benchPrefix("bench")
    const url = natsUrl()
    const key = generateSigningKey()
    const publisher = yield* Layer.build(
      Bus.layerJetStream({
        prefix,
        partitions,
        ...(settings.publishBatchEvents === undefined ? {} : { publishBatchEvents: settings.publishBatchEvents })
      }).pipe(Layer.provide(NatsConnection.layer(url, { name: "candor-bench" })))
    )
    const bus = Context.get(publisher, Bus)

    let sql: SqlClient.SqlClient
    let memory = selfMemory
    let cpuMs = selfCpuMs
    if (options.worker === "process") {
      if (backend !== "postgres") return yield* Effect.fail(new Error("a worker process needs PostgreSQL"))
      const databaseUrl = Redacted.value(yield* throwawayDatabase)
      const worker = yield* startWorkerProcess(
        {
          DATABASE_URL: databaseUrl,
          NATS_URL: url,
          CANDOR_NATS_PREFIX: prefix,
          CANDOR_PARTITIONS: String(partitions),
          CANDOR_LOG_ORIGIN: LOG_ORIGIN,
          SIGNING_KEY: formatSigningKey(key)
        },
        options.cpuProfileDir
      )
      memory = worker.memory
      cpuMs = worker.cpuMs
      // The worker has migrated the database by the time it serves.
      const client = yield* Layer.build(
        PgClient.layer({ url: Redacted.make(databaseUrl), applicationName: "candor-bench" })
      )
      sql = Context.get(client, SqlClient.SqlClient)
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
    return { backend, worker: options.worker, prefix, partitions, bus, committed, heads, memory, cpuMs }
  })
