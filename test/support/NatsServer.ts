/**
 * A NATS server of the test's own (the apt `nats-server` binary, JetStream on, a free port, file
 * storage in a temp dir), for tests that stop and restart NATS without disturbing the shared server
 * other test files use. `stop` then `start` is a restart on the same port and storage, so the
 * streams, consumers and KV buckets come back as the server left them.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { createServer } from "node:net"
import { join } from "node:path"

/** A TCP port nothing listens on right now (the OS picks it), for servers that need a fixed one. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() =>
        typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port"))
      )
    })
  })

/** The apt package's binary (CI), else whatever `nats-server` the PATH has. */
export const NATS_SERVER_BINARY = existsSync("/usr/sbin/nats-server") ? "/usr/sbin/nats-server" : "nats-server"

export interface NatsServerProcess {
  readonly url: string
  /** Starts the server (again) on the same port and storage dir; resolves once it accepts clients. */
  readonly start: Effect.Effect<void, Error>
  /** SIGTERM (a clean shutdown), resolving once the process has exited. */
  readonly stop: Effect.Effect<void>
  /** SIGKILL, resolving once the process has exited. */
  readonly kill: Effect.Effect<void>
}

/** Started, and stopped (its storage removed) when the scope closes. */
export const natsServer: Effect.Effect<NatsServerProcess, Error, Scope.Scope> = Effect.gen(function* () {
  const port = yield* Effect.promise(freePort)
  const dir = mkdtempSync(join(tmpdir(), "candor-nats-"))
  let child: ChildProcess | undefined

  const start = Effect.async<void, Error>((resume) => {
    const p = spawn(NATS_SERVER_BINARY, ["-js", "-a", "127.0.0.1", "-p", String(port), "-sd", dir], {
      stdio: ["ignore", "ignore", "pipe"]
    })
    child = p
    let output = ""
    let ready = false
    p.stderr!.on("data", (data: Buffer) => {
      if (ready) return
      output += data.toString()
      if (output.includes("Server is ready")) {
        ready = true
        resume(Effect.void)
      }
    })
    p.once("exit", (code, signal) => {
      if (!ready)
        resume(Effect.fail(new Error(`nats-server exited (${code ?? signal}) before it was ready: ${output}`)))
    })
  })

  const signal = (name: NodeJS.Signals) =>
    Effect.async<void>((resume) => {
      const p = child
      child = undefined
      if (p === undefined || p.exitCode !== null || p.signalCode !== null) return resume(Effect.void)
      p.once("exit", () => resume(Effect.void))
      p.kill(name)
    })

  yield* Effect.acquireRelease(start, () =>
    signal("SIGKILL").pipe(Effect.zipRight(Effect.sync(() => rmSync(dir, { recursive: true, force: true }))))
  )
  return { url: `nats://127.0.0.1:${port}`, start, stop: signal("SIGTERM"), kill: signal("SIGKILL") }
})
