/**
 * The bench's own child processes, each stopped when its scope closes: the fake provider
 * (bench/gateway/FakeUpstream.ts) and the realistic shape's peers (bench/pipeline/Peers.ts: the
 * webhook receivers and the live stream client). Each prints its port as its first line.
 */
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"

const upstreamScript = fileURLToPath(new URL("../gateway/FakeUpstream.ts", import.meta.url))
const peersScript = fileURLToPath(new URL("./Peers.ts", import.meta.url))

export interface Upstream {
  readonly pid: number
  readonly origin: string
}

/** The fake provider in a process of its own. */
export const startUpstream = Effect.acquireRelease(
  Effect.async<Upstream & { readonly kill: () => void }, Error>((resume) => {
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

export interface PeerCounts {
  /** Webhook deliveries received (POSTs answered 200). */
  readonly webhooks: number
  /** Events received on the live stream. */
  readonly stream: number
  /** Whether the live stream is still open. */
  readonly streamOpen: boolean
}

export interface Peers {
  readonly pid: number
  /** `http://127.0.0.1:<port>`: the receivers' origin (one path per organization). */
  readonly origin: string
  /** Opens the unfiltered live stream at `url` with `key`; resolves once its first heartbeat came. */
  readonly openStream: (url: string, key: string) => Effect.Effect<void, Error>
  readonly counts: Effect.Effect<PeerCounts>
}

/**
 * The webhook receivers and the live stream client (bench/pipeline/Peers.ts). Each command answers
 * one line, in order; the stream's answer comes once it is open, so nothing else is asked meanwhile.
 */
export const startPeers = Effect.gen(function* () {
  const child = yield* Effect.acquireRelease(
    Effect.sync(() =>
      spawn(process.execPath, ["--import", "tsx", peersScript], { stdio: ["pipe", "pipe", "inherit"] })
    ),
    (child) => Effect.sync(() => child.kill("SIGTERM"))
  )
  // Who gets the next line: the port first, then each command's answer in turn.
  const readers: Array<(line: string | undefined) => void> = []
  const unread: Array<string> = []
  createInterface({ input: child.stdout! }).on("line", (line) => {
    const reader = readers.shift()
    if (reader === undefined) unread.push(line.trim())
    else reader(line.trim())
  })
  child.once("exit", () => readers.splice(0).forEach((reader) => reader(undefined)))
  /** Sends `command` (none: only reads) and reads the line that answers it. */
  const ask = (command?: string) =>
    Effect.async<string, Error>((resume) => {
      if (command === undefined && unread.length > 0) return resume(Effect.succeed(unread.shift()!))
      readers.push((line) =>
        resume(line === undefined ? Effect.fail(new Error("the peers process exited")) : Effect.succeed(line))
      )
      if (command !== undefined) child.stdin!.write(`${command}\n`)
    })
  const port = yield* ask()
  return {
    pid: child.pid!,
    origin: `http://127.0.0.1:${port}`,
    openStream: (url, key) =>
      Effect.flatMap(ask(`stream ${url} ${key}`), (line) =>
        line === "stream 200" ? Effect.void : Effect.fail(new Error(`live stream: ${line}`))
      ),
    counts: Effect.map(Effect.orDie(ask("count")), (line) => JSON.parse(line) as PeerCounts)
  } satisfies Peers
})
