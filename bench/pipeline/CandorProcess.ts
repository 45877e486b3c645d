/**
 * `candor serve --role <role>` as the bench's child process, configured through its environment as
 * an operator runs it, and the NATS prefix of a row. Shared by every row's deployment.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { NatsConnection } from "../../adapters/bus/NatsConnection.js"
import { removeNatsResources } from "../../test/adapters/bus/NatsSupport.js"
import { freePort } from "../../test/support/NatsServer.js"
import { procCpuMs } from "./ProcessCpu.js"
import { SERVE_NODE_FLAGS } from "../../src/NodeFlags.js"

export const natsUrl = (): string => process.env.TEST_NATS_URL ?? "nats://127.0.0.1:4222"

export interface Memory {
  readonly rss: number
  readonly heapUsed: number
  /** Heap used after a full collection: what is really retained. */
  readonly heapLive: number
  /** What V8 has allocated for its heap (the young generation's semi-spaces included). */
  readonly heapTotal: number
  /** Memory outside V8's heap held by JavaScript objects (buffers). */
  readonly external: number
}

export type Role = "worker" | "gateway" | "api"

export interface CandorProcess {
  readonly pid: number
  /** Its PORT: health and metrics, and the management API on the api role. */
  readonly port: number
  /** Its memory now (through bench/pipeline/MemoryProbe.mjs). */
  readonly memory: Effect.Effect<Memory>
  readonly cpuMs: Effect.Effect<number>
  /** SIGKILL, then waits for the exit: a crash, nothing released. */
  readonly kill: Effect.Effect<void>
  /** Its last log lines, for failure messages. */
  readonly output: () => ReadonlyArray<string>
}

const bin = fileURLToPath(new URL("../../bin/candor.js", import.meta.url))
const probe = fileURLToPath(new URL("./MemoryProbe.mjs", import.meta.url))

/**
 * `candor serve --role <role>` (a worker unless said otherwise) as a child; stopped with SIGTERM (so
 * a CPU profile is written, with `cpuProfileDir`) when the scope closes. Ready once its health
 * endpoint answers (on `healthPort` when it sets GATEWAY_PORT itself, else on PORT).
 */
export const startWorkerProcess = (
  env: Record<string, string>,
  cpuProfileDir: string | undefined,
  role: Role = "worker",
  healthPort?: number
): Effect.Effect<CandorProcess, Error, Scope.Scope> =>
  Effect.gen(function* () {
    const port = yield* Effect.promise(freePort)
    const dataDir = mkdtempSync(join(tmpdir(), "candor-bench-"))
    const args = [
      ...SERVE_NODE_FLAGS,
      "--expose-gc",
      "--import",
      probe,
      ...(cpuProfileDir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${cpuProfileDir}`])
    ]
    const inherited = Object.fromEntries(
      Object.entries(process.env).filter(
        ([key]) =>
          !/^(DATABASE_URL|NATS_URL|CANDOR_\w+|SIGNING_KEY|PORT|HOST|GATEWAY_PORT|SERVICE_ROLE_KEY|AUTH_\w+)$/.test(key)
      )
    )
    const lines: Array<string> = []
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
          // BENCH_DEBUG: what it logged (warnings and errors) is shown as it stops.
          if (process.env.BENCH_DEBUG !== undefined && lines.length > 0)
            process.stderr.write(`--- ${role} ${child.pid}:\n${lines.join("\n")}\n`)
          if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
          child.once("exit", () => resume(Effect.void))
          child.kill("SIGTERM")
        }).pipe(
          Effect.timeout("30 seconds"),
          Effect.catchAll(() => Effect.sync(() => child.kill("SIGKILL"))),
          Effect.zipRight(Effect.sync(() => rmSync(dataDir, { recursive: true, force: true })))
        )
    )
    const samples: Array<(memory: Memory) => void> = []
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on("line", (line) => {
        if (line.startsWith(`{"bench_memory"`)) {
          const { bench_memory } = JSON.parse(line) as { bench_memory: Memory }
          samples.shift()?.(bench_memory)
        } else if (lines.push(line) > 200) lines.shift()
      })
    }
    // It logs nothing at warning level when all is well; ready once its health endpoint answers.
    const started = Date.now()
    let last = "no answer"
    for (;;) {
      if (child.exitCode !== null) return yield* Effect.fail(new Error(`${role} exited:\n${lines.join("\n")}`))
      const ok = yield* Effect.promise(() =>
        fetch(`http://127.0.0.1:${healthPort ?? port}/health/live`, { signal: AbortSignal.timeout(5_000) }).then(
          (r) => {
            last = `HTTP ${r.status}`
            return r.ok
          },
          (error: unknown) => {
            last = String(error)
            return false
          }
        )
      )
      if (ok) break
      if (Date.now() - started > 120_000)
        return yield* Effect.fail(
          new Error(
            `${role} not ready after ${((Date.now() - started) / 1000).toFixed(0)} s (pid ${child.pid}, ` +
              `port ${healthPort ?? port}, last health answer: ${last}):\n${lines.join("\n")}`
          )
        )
      yield* Effect.sleep("100 millis")
    }
    const pid = child.pid!
    const memory = Effect.async<Memory>((resume) => {
      samples.push((m) => resume(Effect.succeed(m)))
      child.kill("SIGUSR2")
    })
    const kill = Effect.async<void>((resume) => {
      if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
      child.once("exit", () => resume(Effect.void))
      child.kill("SIGKILL")
    })
    return { pid, port, memory, cpuMs: Effect.sync(() => procCpuMs(pid)), kill, output: () => [...lines] }
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
