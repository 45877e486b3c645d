/**
 * `candor serve --role worker` as a real child process (`node bin/candor.js`, no build step),
 * configured only through its environment, as an operator would run it. Tests stop it gracefully
 * (SIGTERM) or crash it (SIGKILL); whatever is still running when the scope closes is killed.
 */
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { freePort } from "./NatsServer.js"
import { untilListening } from "./UntilListening.js"

const bin = fileURLToPath(new URL("../../bin/candor.js", import.meta.url))

/** Lines of output kept for diagnostics: the newest ones. */
const KEEP_LINES = 5_000

/** Settings the worker would otherwise inherit from the test's own environment. */
const CANDOR_KEYS = /^(DATABASE_URL|NATS_URL|CANDOR_\w+|SIGNING_KEY|PORT|GATEWAY_PORT|HOST|LOG_LEVEL)$/

export interface WorkerProcessOptions {
  /** CANDOR_WORKER_ID: names the worker in the lease bucket. */
  readonly workerId: string
  readonly databaseUrl: string
  readonly natsUrl: string
  /** CANDOR_NATS_PREFIX */
  readonly prefix: string
  /** CANDOR_PARTITIONS */
  readonly partitions: number
  /** SIGNING_KEY (PEM): every worker of a deployment signs with the same key. */
  readonly signingKey: string
  /** CANDOR_SECRET_KEY: every worker of a deployment seals and opens stored fields with the same key. */
  readonly secretKey: string
  /** CANDOR_NATS_REPLICAS (unset: the default, 1). */
  readonly replicas?: number
  /**
   * How long it may take to serve (default 60 s). A start takes seconds on the loaded machine; the
   * bound is for a start that never comes, not a timing of the machine. (One of two workers started
   * together once printed nothing for 30 s: its count of the live workers waited on `kv.keys()`,
   * see JetStreamSetup.liveKeys. LOG_LEVEL=debug shows each startup step.)
   */
  readonly readyWithin?: Duration.DurationInput
}

export interface WorkerExit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

export interface WorkerProcess {
  readonly workerId: string
  readonly pid: number
  /** Its output so far (JSON log lines, newest last): for failure messages, never secrets. */
  readonly output: () => ReadonlyArray<string>
  /** SIGTERM, then waits for the exit: the graceful stop (leases released, connections drained). */
  readonly terminate: Effect.Effect<WorkerExit>
  /** SIGKILL, then waits for the exit: a crash, nothing released. */
  readonly kill: Effect.Effect<WorkerExit>
}

const exitOf = (child: ChildProcess): Effect.Effect<WorkerExit> =>
  Effect.async<WorkerExit>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      return resume(Effect.succeed({ code: child.exitCode, signal: child.signalCode }))
    }
    child.once("exit", (code, signal) => resume(Effect.succeed({ code, signal })))
  })

/** Spawns a worker and waits until it is serving (its "listening" line); killed when the scope closes. */
export const startWorker = (options: WorkerProcessOptions): Effect.Effect<WorkerProcess, Error, Scope.Scope> =>
  Effect.gen(function* () {
    const port = yield* Effect.promise(freePort)
    const dataDir = mkdtempSync(join(tmpdir(), `candor-${options.workerId}-`))
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([key]) => !CANDOR_KEYS.test(key)))
    const lines: Array<string> = []

    const child = yield* Effect.acquireRelease(
      Effect.sync(() =>
        spawn(process.execPath, [bin, "serve", "--role", "worker"], {
          env: {
            ...inherited,
            HOST: "127.0.0.1",
            PORT: String(port),
            CANDOR_DATA_DIR: dataDir,
            DATABASE_URL: options.databaseUrl,
            NATS_URL: options.natsUrl,
            CANDOR_NATS_PREFIX: options.prefix,
            CANDOR_PARTITIONS: String(options.partitions),
            CANDOR_WORKER_ID: options.workerId,
            SIGNING_KEY: options.signingKey,
            CANDOR_SECRET_KEY: options.secretKey,
            ...(options.replicas !== undefined && { CANDOR_NATS_REPLICAS: String(options.replicas) }),
            LOG_LEVEL: "info"
          },
          stdio: ["ignore", "pipe", "pipe"]
        })
      ),
      (child) =>
        Effect.sync(() => child.kill("SIGKILL")).pipe(
          Effect.zipRight(exitOf(child)),
          Effect.zipRight(Effect.sync(() => rmSync(dataDir, { recursive: true, force: true })))
        )
    )

    yield* untilListening(child, lines, {
      name: `worker ${options.workerId}`,
      timeout: options.readyWithin ?? "60 seconds",
      keep: KEEP_LINES
    })

    const signal = (name: NodeJS.Signals) =>
      Effect.suspend(() => {
        if (child.exitCode === null && child.signalCode === null) child.kill(name)
        return exitOf(child)
      })

    return {
      workerId: options.workerId,
      pid: child.pid!,
      output: () => [...lines],
      terminate: signal("SIGTERM"),
      kill: signal("SIGKILL")
    } satisfies WorkerProcess
  })
