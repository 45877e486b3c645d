/**
 * `candor serve` as a real child process (`node bin/candor.js`, no build step), configured only by
 * its environment as an operator runs it. Started with a fresh data dir and free ports; ready when
 * it logs "listening"; stopped (SIGTERM, then SIGKILL) and its data dir removed when the scope closes.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { freePort } from "../support/NatsServer.js"
import { untilListening } from "../support/UntilListening.js"

const bin = fileURLToPath(new URL("../../bin/candor.js", import.meta.url))

/** Settings the child would otherwise inherit from the test's own environment. */
const CANDOR_KEYS =
  /^(DATABASE_URL|NATS_URL|CANDOR_\w+|SIGNING_KEY|PORT|GATEWAY_PORT|HOST|LOG_LEVEL|ANTHROPIC_BASE_URL|TLS_\w+)$/

const inherited = () => Object.fromEntries(Object.entries(process.env).filter(([key]) => !CANDOR_KEYS.test(key)))

export interface ServeProcess {
  /** `http://127.0.0.1:<PORT>` (`https://` with TLS_CERT_FILE): health and, with the api role, the API. */
  readonly apiUrl: string
  /** `http://127.0.0.1:<GATEWAY_PORT>` (`https://` with TLS_CERT_FILE). */
  readonly gatewayUrl: string
  readonly port: number
  readonly gatewayPort: number
  /** Sends the process a signal (SIGHUP reloads the TLS certificate). */
  readonly signal: (signal: NodeJS.Signals) => void
  readonly dataDir: string
  /** Its log lines so far, for failure messages. */
  readonly output: () => ReadonlyArray<string>
}

const exited = (child: ChildProcess) =>
  Effect.async<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
    child.once("exit", () => resume(Effect.void))
  })

const stop = (child: ChildProcess) =>
  Effect.sync(() => child.kill("SIGTERM")).pipe(
    Effect.zipRight(exited(child).pipe(Effect.timeout("10 seconds"))),
    Effect.catchAll(() =>
      Effect.zipRight(
        Effect.sync(() => child.kill("SIGKILL")),
        exited(child)
      )
    )
  )

/** A fresh data dir, removed when the scope closes. */
export const temporaryDataDir: Effect.Effect<string, never, Scope.Scope> = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "candor-e2e-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

export const startServe = (
  options: {
    readonly role?: string
    readonly env?: Record<string, string>
    /** A data dir kept by the caller (a restart on the same data); default: a fresh one, removed at the end. */
    readonly dataDir?: string
  } = {}
): Effect.Effect<ServeProcess, Error, Scope.Scope> =>
  Effect.gen(function* () {
    const [port, gatewayPort] = yield* Effect.promise(() => Promise.all([freePort(), freePort()]))
    const dataDir = options.dataDir ?? (yield* temporaryDataDir)
    const lines: Array<string> = []
    const child = yield* Effect.acquireRelease(
      Effect.sync(() =>
        spawn(process.execPath, [bin, "serve", "--role", options.role ?? "all"], {
          env: {
            ...inherited(),
            HOST: "127.0.0.1",
            PORT: String(port),
            GATEWAY_PORT: String(gatewayPort),
            CANDOR_DATA_DIR: dataDir,
            LOG_LEVEL: "info",
            ...options.env
          },
          stdio: ["ignore", "pipe", "pipe"]
        })
      ),
      stop
    )
    yield* untilListening(child, lines, { name: "candor serve", timeout: "90 seconds" })
    const scheme = options.env?.["TLS_CERT_FILE"] === undefined ? "http" : "https"
    return {
      apiUrl: `${scheme}://127.0.0.1:${port}`,
      gatewayUrl: `${scheme}://127.0.0.1:${gatewayPort}`,
      port,
      gatewayPort,
      signal: (signal) => void child.kill(signal),
      dataDir,
      output: () => [...lines]
    }
  })

export interface CliRun {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs `candor <args>` with no Candor settings in its environment but `env`. */
export const runCandor = (args: ReadonlyArray<string>, env: Record<string, string> = {}): Effect.Effect<CliRun> =>
  Effect.async<CliRun>((resume) => {
    execFile(
      process.execPath,
      [bin, ...args],
      { env: { ...inherited(), ...env }, timeout: 90_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : null
        resume(Effect.succeed({ code, stdout, stderr }))
      }
    )
  })
