/**
 * NATS for integration tests: the shared server at TEST_NATS_URL, isolated per test by a unique
 * CANDOR_NATS_PREFIX whose streams and KV buckets are deleted afterwards, and a private server
 * (the apt `nats-server` binary on a free port) for tests that must stop and restart one.
 */
import { jetstreamManager } from "@nats-io/jetstream"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { NatsConnection } from "../../../adapters/bus/NatsConnection.js"

export const testNatsUrl = (): string => process.env.TEST_NATS_URL ?? "nats://127.0.0.1:4222"

/** A prefix no other test run uses: letters and digits, as CANDOR_NATS_PREFIX allows. */
export const uniquePrefix = (label: string): string => `t${label}${randomBytes(5).toString("hex")}`

export const NatsTest: Layer.Layer<NatsConnection, never> = NatsConnection.layer(testNatsUrl(), {
  name: "candor-test"
}).pipe(Layer.orDie)

/** Deletes the streams and KV buckets named after `prefix` (`<PREFIX>_…`, `KV_<prefix>-…`). */
export const removeNatsResources = (prefix: string): Effect.Effect<void, never, NatsConnection> =>
  Effect.gen(function* () {
    const nc = yield* NatsConnection
    yield* Effect.promise(async () => {
      const jsm = await jetstreamManager(nc)
      const names: Array<string> = []
      for await (const name of jsm.streams.names()) names.push(name)
      const ours = names.filter((n) => n.startsWith(`${prefix.toUpperCase()}_`) || n.startsWith(`KV_${prefix}-`))
      await Promise.all(ours.map((n) => jsm.streams.delete(n)))
    })
  })

/** NATS on the shared server that removes the prefix's streams and buckets when released. */
export const natsForPrefix = (prefix: string): Layer.Layer<NatsConnection> =>
  Layer.scopedDiscard(Effect.addFinalizer(() => removeNatsResources(prefix))).pipe(Layer.provideMerge(NatsTest))

/** Polls `condition` until it holds or `timeoutMs` passes (then fails with `what`). */
export const waitUntil = <E, R>(
  what: string,
  condition: Effect.Effect<boolean, E, R>,
  timeoutMs = 15_000
): Effect.Effect<void, E | Error, R> =>
  Effect.gen(function* () {
    const deadline = Date.now() + timeoutMs
    while (!(yield* condition)) {
      if (Date.now() > deadline) return yield* Effect.fail(new Error(`timed out waiting for ${what}`))
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 25)))
    }
  })

const freePort = (): Promise<number> =>
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

export interface PrivateNatsServer {
  readonly url: string
  readonly stop: Effect.Effect<void>
  readonly start: Effect.Effect<void>
}

/** A JetStream server of our own (file storage in a temp dir), stopped and removed with the scope. */
export const privateNatsServer = Effect.gen(function* () {
  const port = yield* Effect.promise(freePort)
  const dir = mkdtempSync(join(tmpdir(), "candor-nats-"))
  let child: ChildProcess | undefined
  const start = Effect.async<void, Error>((resume) => {
    const p = spawn("nats-server", ["-js", "-a", "127.0.0.1", "-p", String(port), "-sd", dir])
    child = p
    let output = ""
    p.stderr.on("data", (d: Buffer) => {
      output += d.toString()
      if (output.includes("Server is ready")) resume(Effect.void)
    })
    p.once("exit", (code) => resume(Effect.fail(new Error(`nats-server exited (${code}): ${output}`))))
  })
  const stop = Effect.async<void>((resume) => {
    const p = child
    child = undefined
    if (p === undefined || p.exitCode !== null) return resume(Effect.void)
    p.once("exit", () => resume(Effect.void))
    p.kill("SIGTERM")
  })
  yield* Effect.acquireRelease(start, () =>
    stop.pipe(Effect.zipRight(Effect.sync(() => rmSync(dir, { recursive: true, force: true }))))
  )
  return { url: `nats://127.0.0.1:${port}`, stop, start: Effect.orDie(start) } satisfies PrivateNatsServer
})
