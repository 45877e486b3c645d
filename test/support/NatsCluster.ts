/**
 * A NATS cluster of the test's own: three `nats-server` processes with JetStream on loopback, each on
 * free client and route ports with its own storage directory, routed to the other two under one
 * cluster name. Ready once JetStream can place a stream on all three (a meta leader is elected and
 * every server has joined), so a test can create streams with three replicas at once.
 *
 * The binary is required, never optional: a missing one fails the test that asked for the cluster
 * (CI installs it at /usr/sbin/nats-server).
 */
import { jetstreamManager, StorageType } from "@nats-io/jetstream"
import { connect, type NatsConnection } from "@nats-io/transport-node"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { NATS_SERVER_BINARY, freePort } from "./NatsServer.js"

/** Lines of each server's log kept for a failure message. */
const KEEP_LINES = 200

export interface ClusterNode {
  /** The server name (`-n`): what JetStream reports as a stream's leader. */
  readonly name: string
  readonly url: string
  /** Whether its process is still running. */
  readonly alive: () => boolean
  /** Its log so far (newest last). */
  readonly log: () => ReadonlyArray<string>
  /** SIGKILL, resolving once the process has exited: nothing flushed, nothing handed over. */
  readonly kill: Effect.Effect<void>
}

export interface NatsCluster {
  readonly nodes: ReadonlyArray<ClusterNode>
  /** Every node's client URL, comma-separated: a NATS_URL that survives the loss of any one. */
  readonly url: string
  /** The node named `name` (a stream's leader, say). */
  readonly node: (name: string) => ClusterNode | undefined
}

interface Spawned {
  readonly child: ChildProcess
  readonly lines: Array<string>
}

const spawnNode = (name: string, args: ReadonlyArray<string>): Effect.Effect<Spawned, Error> =>
  Effect.async<Spawned, Error>((resume) => {
    const child = spawn(NATS_SERVER_BINARY, args, { stdio: ["ignore", "ignore", "pipe"] })
    const lines: Array<string> = []
    let ready = false
    let partial = ""
    child.stderr!.on("data", (data: Buffer) => {
      const text = partial + data.toString()
      const complete = text.split("\n")
      partial = complete.pop() ?? ""
      for (const line of complete) {
        lines.push(line)
        if (lines.length > KEEP_LINES) lines.shift()
        if (!ready && line.includes("Server is ready")) {
          ready = true
          resume(Effect.succeed({ child, lines }))
        }
      }
    })
    child.once("error", (error) => {
      // ENOENT: no binary at /usr/sbin/nats-server nor on the PATH. A failure, never a skip.
      if (!ready)
        resume(
          Effect.fail(
            new Error(
              `nats-server ${name} did not start (${NATS_SERVER_BINARY}: ${error.message}); the cluster tests need the nats-server binary (apt install nats-server)`
            )
          )
        )
    })
    child.once("exit", (code, signal) => {
      if (!ready)
        resume(
          Effect.fail(
            new Error(`nats-server ${name} exited (${code ?? signal}) before it was ready:\n${lines.join("\n")}`)
          )
        )
    })
  })

const exited = (child: ChildProcess): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
    child.once("exit", () => resume(Effect.void))
    child.kill("SIGKILL")
  })

/**
 * JetStream answers on every node, and a stream with one replica per server can be placed: the
 * meta group has its leader and all three peers. Checked through a client of each node, again
 * until it holds (a server just up may refuse a client, or not know the meta leader yet).
 */
const untilJetStreamReady = (urls: ReadonlyArray<string>) =>
  Effect.tryPromise({
    try: async () => {
      const connected = await Promise.allSettled(
        urls.map((url) => connect({ servers: url, name: "candor-test-cluster" }))
      )
      const clients = connected.flatMap((c) => (c.status === "fulfilled" ? [c.value] : []))
      try {
        for (const c of connected) if (c.status === "rejected") throw c.reason
        for (const nc of clients) await (await jetstreamManager(nc, { timeout: 1_000 })).getAccountInfo()
        const jsm = await jetstreamManager(clients[0]!, { timeout: 2_000 })
        const probe = `READY_${randomBytes(4).toString("hex")}`
        await jsm.streams.add({
          name: probe,
          subjects: [`ready.${probe}`],
          num_replicas: urls.length,
          storage: StorageType.Memory
        })
        await jsm.streams.delete(probe)
      } finally {
        await Promise.all(clients.map((nc: NatsConnection) => nc.close().catch(() => undefined)))
      }
    },
    catch: (cause) => (cause instanceof Error ? cause : new Error(String(cause)))
  }).pipe(Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.upTo("30 seconds"))))

/** Three servers, killed and their storage removed when the scope closes. */
export const natsCluster: Effect.Effect<NatsCluster, Error, Scope.Scope> = Effect.gen(function* () {
  const size = 3
  const clusterName = `candor-test-${randomBytes(4).toString("hex")}`
  const clientPorts = yield* Effect.promise(() => Promise.all(Array.from({ length: size }, freePort)))
  const routePorts = yield* Effect.promise(() => Promise.all(Array.from({ length: size }, freePort)))
  const routes = routePorts.map((port) => `nats://127.0.0.1:${port}`)

  const nodes = yield* Effect.forEach(
    Array.from({ length: size }, (_, i) => i),
    (i) =>
      Effect.gen(function* () {
        const name = `n${i}`
        const dir = yield* Effect.acquireRelease(
          Effect.sync(() => mkdtempSync(join(tmpdir(), `candor-nats-${name}-`))),
          (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
        )
        const { child, lines } = yield* Effect.acquireRelease(
          spawnNode(name, [
            "-js",
            "-n",
            name,
            "-a",
            "127.0.0.1",
            "-p",
            String(clientPorts[i]),
            "-sd",
            dir,
            "--cluster_name",
            clusterName,
            "-cluster",
            routes[i]!,
            "-routes",
            routes.filter((_, j) => j !== i).join(",")
          ]),
          ({ child }) => exited(child)
        )
        return {
          name,
          url: `nats://127.0.0.1:${clientPorts[i]}`,
          alive: () => child.exitCode === null && child.signalCode === null,
          log: () => [...lines],
          kill: exited(child)
        } satisfies ClusterNode
      }),
    { concurrency: "unbounded" }
  )
  yield* untilJetStreamReady(nodes.map((n) => n.url)).pipe(
    Effect.mapError(
      (cause) =>
        new Error(
          `the NATS cluster never became ready: ${cause.message}\n${nodes.map((n) => `--- ${n.name}\n${n.log().slice(-20).join("\n")}`).join("\n")}`
        )
    )
  )
  return {
    nodes,
    url: nodes.map((n) => n.url).join(","),
    node: (name) => nodes.find((n) => n.name === name)
  } satisfies NatsCluster
})
