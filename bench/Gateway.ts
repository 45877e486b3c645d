/**
 * `npm run bench:gateway`: what the gateway adds to a call, beside the peer (Portkey's open-source
 * gateway) and a direct call, interleaved in rounds in one run on this noisy shared machine.
 *
 * Processes: a fake provider (bench/gateway/FakeUpstream.ts), Candor as a gateway
 * (`candor serve --role gateway`: observe mode, `rules` judge, one event per response published to
 * NATS JetStream when a server answers at BENCH_NATS_URL / TEST_NATS_URL / nats://127.0.0.1:4222,
 * else to the in-process bus; the workers that commit them are other processes in a deployment and
 * are left out so their CPU is not charged to the gateway), the peer (installed on demand into bench/.peer, never a project
 * dependency), the bare pass-through (bench/gateway/BarePassThrough.ts: node:http + undici with no
 * inspection, the floor of this stack), and this load generator. Everything listens on 127.0.0.1.
 *
 * Per scenario (Anthropic / OpenAI format × JSON / SSE × concurrency 1 / 64) it prints latency p50/p99
 * and what each gateway adds to the direct call, time to first body byte for streams, requests/s, the
 * gateway's CPU time per request (from /proc, steadier than latency here), and whether the request and
 * response bytes arrived unchanged. Each scenario starts with BENCH_WARMUP_ROUNDS (default 1)
 * unrecorded rounds.
 *
 * BENCH_MODE picks the Candor deployments: `split` (the gateway role alone, above), `embedded`
 * (`candor serve` with no NATS_URL: every role in one process, bench/gateway/Embedded.ts; its CPU
 * covers all its threads, and after each load the bench waits until every checkpoint is committed
 * and reports how long that took), or `both` (the default).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { jetstreamManager } from "@nats-io/jetstream"
import { connect } from "@nats-io/transport-node"
import { Pool } from "undici"
import { embeddedCommand, settleEmbedded } from "./gateway/Embedded.js"
import { toolResultRequestBody } from "./gateway/ToolResultRequest.js"
import { SERVE_NODE_FLAGS } from "../src/NodeFlags.js"

const root = resolve(fileURLToPath(new URL("..", import.meta.url)))
const peerDir = join(root, "bench", ".peer")
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
/** Unrecorded rounds before each scenario's measured ones: JIT, pools and caches warm, so the first row is not skewed. */
const WARMUP_ROUNDS = Number(process.env.BENCH_WARMUP_ROUNDS ?? 1)
const PER_ROUND = { 1: Number(process.env.BENCH_C1 ?? 200), 64: Number(process.env.BENCH_C64 ?? 1600) } as const

type Format = "anthropic" | "openai"
type TargetName = "direct" | "bare" | "candor" | "embedded" | "peer"
const MODE = process.env.BENCH_MODE ?? "both"
if (!["split", "embedded", "both"].includes(MODE)) throw new Error("BENCH_MODE must be split, embedded or both")
interface Target {
  readonly name: TargetName
  readonly origin: string
  readonly path: (format: Format) => string
  readonly headers: (format: Format) => Record<string, string>
  readonly pid: number | undefined
}

const freePort = (): Promise<number> =>
  new Promise((ok, fail) => {
    const server = createServer()
    server.once("error", fail)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => ok(typeof address === "object" && address !== null ? address.port : 0))
    })
  })

const children: Array<ChildProcess> = []
process.on("exit", () => children.forEach((child) => child.kill("SIGTERM")))

const launch = (command: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = {}): ChildProcess => {
  const child = spawn(command, args, { cwd: root, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
  children.push(child)
  child.stderr?.on("data", () => {}) // drained, not shown: the peer is chatty
  return child
}

const firstLine = (child: ChildProcess): Promise<string> =>
  new Promise((ok, fail) => {
    let text = ""
    child.stdout?.on("data", (data: Buffer) => {
      text += data.toString("utf8")
      const end = text.indexOf("\n")
      if (end >= 0) ok(text.slice(0, end).trim())
    })
    child.once("exit", (code) => fail(new Error(`process exited with ${code} before it was ready`)))
  })

/** Polls a URL until it answers 200 (the servers announce readiness only this way), for at most 60 s. */
const waitFor = async (url: string): Promise<void> => {
  const deadline = Date.now() + 60_000
  for (;;) {
    try {
      if ((await fetch(url)).status === 200) return
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url} did not come up`)
    await new Promise((ok) => setTimeout(ok, 100))
  }
}

const installPeer = (): string => {
  const start = join(peerDir, "node_modules", "@portkey-ai", "gateway", "build", "start-server.js")
  if (existsSync(start)) return start
  mkdirSync(peerDir, { recursive: true })
  // @hono/node-server newer than 1.13.5 breaks the peer's streaming (a 500), hence the overrides.
  writeFileSync(
    join(peerDir, "package.json"),
    JSON.stringify({
      name: "candor-bench-peer",
      private: true,
      dependencies: { "@portkey-ai/gateway": "1.15.2" },
      overrides: { "@hono/node-server": "1.13.5", "@hono/node-ws": "1.2.0" }
    })
  )
  console.error("installing the peer (@portkey-ai/gateway 1.15.2) into bench/.peer …")
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: peerDir, stdio: "inherit" })
  return start
}

const cpuTicks = (pid: number | undefined): number => {
  if (pid === undefined) return 0
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return Number(fields[11]) + Number(fields[12]) // utime + stime, in clock ticks (1/100 s)
}

const requestBody = (format: Format, stream: boolean, toolResults = false): string =>
  toolResults
    ? toolResultRequestBody(stream)
    : format === "anthropic"
      ? JSON.stringify({
          model: "claude-bench",
          max_tokens: 256,
          messages: [{ role: "user", content: "Summarise the report." }],
          stream
        })
      : JSON.stringify({ model: "gpt-bench", messages: [{ role: "user", content: "Summarise the report." }], stream })

interface Sample {
  readonly total: number
  readonly firstByte: number
  readonly body: Buffer
  readonly requestIntact: boolean
}

const call = async (
  pool: Pool,
  target: Target,
  format: Format,
  body: string,
  extra: Record<string, string>
): Promise<Sample> => {
  const sent = createHash("sha256").update(body).digest("hex")
  const start = performance.now()
  const response = await pool.request({
    method: "POST",
    path: target.path(format),
    headers: { "content-type": "application/json", ...target.headers(format), ...extra },
    body
  })
  let firstByte = 0
  const parts: Array<Buffer> = []
  for await (const part of response.body) {
    if (firstByte === 0) firstByte = performance.now() - start
    parts.push(part as Buffer)
  }
  if (response.statusCode !== 200)
    throw new Error(
      `${target.name} answered ${response.statusCode}: ${Buffer.concat(parts).toString("utf8").slice(0, 200)}`
    )
  return {
    total: performance.now() - start,
    firstByte,
    body: Buffer.concat(parts),
    requestIntact: response.headers["x-request-sha256"] === sent
  }
}

const percentile = (values: ReadonlyArray<number>, p: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN
}

interface Tally {
  totals: Array<number>
  firstBytes: Array<number>
  wallMs: number
  requests: number
  ticks: number
  responseIntact: boolean
  requestIntact: boolean
}

const main = async () => {
  const upstream = launch(process.execPath, ["--import", "tsx", "bench/gateway/FakeUpstream.ts"])
  const upstreamPort = Number(await firstLine(upstream))
  const upstreamOrigin = `http://127.0.0.1:${upstreamPort}`

  const [apiPort, gatewayPort, peerPort] = [await freePort(), await freePort(), await freePort()]
  const nats = await benchNats()
  console.log(
    nats === undefined ? "events: in-process bus" : `events: NATS JetStream at ${nats.url}, prefix ${nats.prefix}`
  )
  const [embeddedApiPort, embeddedGatewayPort] = [await freePort(), await freePort()]
  const embeddedApi = `http://127.0.0.1:${embeddedApiPort}`
  const embedded =
    MODE === "split"
      ? undefined
      : (() => {
          const { args, env } = embeddedCommand({
            apiPort: embeddedApiPort,
            gatewayPort: embeddedGatewayPort,
            upstreamOrigin
          })
          return launch(process.execPath, args, env)
        })()
  if (embedded !== undefined) await waitFor(`${embeddedApi}/health/ready`)
  /** Responses the embedded gateway answered, each one checkpoint to commit. */
  let embeddedSent = 0
  const commitWaits: Array<string> = []
  const candor = launch(process.execPath, [...SERVE_NODE_FLAGS, "bin/candor.js", "serve", "--role", "gateway"], {
    ...(nats === undefined ? {} : { NATS_URL: nats.url, CANDOR_NATS_PREFIX: nats.prefix }),
    PORT: String(apiPort),
    GATEWAY_PORT: String(gatewayPort),
    HOST: "127.0.0.1",
    CANDOR_DATA_DIR: mkdtempSync(join(tmpdir(), "candor-bench-")),
    ANTHROPIC_BASE_URL: upstreamOrigin,
    OPENAI_BASE_URL: upstreamOrigin,
    LOG_LEVEL: "warn"
  })
  await waitFor(`http://127.0.0.1:${gatewayPort}/health/live`)
  // The floor: node:http + undici forwarding with no inspection (bench/gateway/BarePassThrough.ts).
  const bare = launch(process.execPath, ["--import", "tsx", "bench/gateway/BarePassThrough.ts", upstreamOrigin])
  const barePort = Number(await firstLine(bare))

  const peerStart = installPeer()
  const peer = launch(process.execPath, [
    "--import",
    join(root, "bench", "gateway", "PeerLoopback.mjs"),
    peerStart,
    `--port=${peerPort}`,
    "--headless"
  ])
  await waitFor(`http://127.0.0.1:${peerPort}/`)

  const auth = (format: Format): Record<string, string> =>
    format === "anthropic"
      ? { "x-api-key": "sk-ant-bench", "anthropic-version": "2023-06-01" }
      : { authorization: "Bearer sk-bench" }
  const allTargets: ReadonlyArray<Target> = [
    {
      name: "direct",
      origin: upstreamOrigin,
      path: (f) => (f === "anthropic" ? "/v1/messages" : "/v1/chat/completions"),
      headers: auth,
      pid: undefined
    },
    {
      name: "bare",
      origin: `http://127.0.0.1:${barePort}`,
      path: (f) => (f === "anthropic" ? "/anthropic/v1/messages" : "/openai/v1/chat/completions"),
      headers: auth,
      pid: bare.pid
    },
    {
      name: "candor",
      origin: `http://127.0.0.1:${gatewayPort}`,
      path: (f) => (f === "anthropic" ? "/anthropic/v1/messages" : "/openai/v1/chat/completions"),
      headers: auth,
      pid: candor.pid
    },
    {
      name: "embedded",
      origin: `http://127.0.0.1:${embeddedGatewayPort}`,
      path: (f) => (f === "anthropic" ? "/anthropic/v1/messages" : "/openai/v1/chat/completions"),
      headers: auth,
      pid: embedded?.pid
    },
    {
      name: "peer",
      origin: `http://127.0.0.1:${peerPort}`,
      path: (f) => (f === "anthropic" ? "/v1/messages" : "/v1/chat/completions"),
      headers: (f) => ({ ...auth(f), "x-portkey-provider": f, "x-portkey-custom-host": `${upstreamOrigin}/v1` }),
      pid: peer.pid
    }
  ]
  const targets = allTargets.filter((t) =>
    t.name === "embedded" ? MODE !== "split" : t.name === "candor" ? MODE !== "embedded" : true
  )

  const scenarios = [
    ...(["anthropic", "openai"] as const).flatMap((format) =>
      ([false, true] as const).flatMap((stream) =>
        ([1, 64] as const).map((concurrency) => ({ format, stream, concurrency, crlf: false, toolResults: false }))
      )
    ),
    { format: "anthropic" as const, stream: true, concurrency: 1 as const, crlf: true, toolResults: false },
    // A conversation resending three tool results (bench/gateway/ToolResultRequest.ts): issue 28's row.
    { format: "anthropic" as const, stream: false, concurrency: 1 as const, crlf: false, toolResults: true }
  ]

  console.log(
    `Node ${process.version}, ${ROUNDS} interleaved rounds after ${WARMUP_ROUNDS} warm-up, ${new Date().toISOString()}`
  )
  console.log("")
  console.log(
    "| scenario | target | p50 ms | p99 ms | added p50 | added p99 | first byte p50 | added first byte | req/s | gateway CPU µs/req | request bytes intact | response bytes intact |"
  )
  console.log("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
  for (const scenario of scenarios) {
    const body = requestBody(scenario.format, scenario.stream, scenario.toolResults)
    const extra: Record<string, string> = scenario.crlf ? { "x-bench-eol": "crlf" } : {}
    const tallies = new Map<TargetName, Tally>(
      targets.map((t) => [
        t.name,
        { totals: [], firstBytes: [], wallMs: 0, requests: 0, ticks: 0, responseIntact: true, requestIntact: true }
      ])
    )
    const pools = new Map(
      targets.map((t) => [t.name, new Pool(t.origin, { connections: scenario.concurrency, pipelining: 1 })])
    )
    let reference: Buffer | undefined
    const count = PER_ROUND[scenario.concurrency]
    for (let round = -WARMUP_ROUNDS; round < ROUNDS; round++) {
      const recorded = round >= 0
      // Rotate the order each round so that no target always runs first (warm caches, CPU boost).
      const order = targets.map((_, i) => targets[(((i + round) % targets.length) + targets.length) % targets.length]!)
      for (const target of order) {
        const tally = tallies.get(target.name)!
        const pool = pools.get(target.name)!
        await call(pool, target, scenario.format, body, extra) // warm the connection
        const ticks = cpuTicks(target.pid)
        const start = performance.now()
        let next = 0
        const worker = async () => {
          while (next < count) {
            next++
            const sample = await call(pool, target, scenario.format, body, extra)
            if (!recorded) continue
            tally.totals.push(sample.total)
            tally.firstBytes.push(sample.firstByte)
            if (target.name === "direct" && reference === undefined) reference = sample.body
            if (reference !== undefined && !sample.body.equals(reference)) tally.responseIntact = false
            if (!sample.requestIntact) tally.requestIntact = false
          }
        }
        await Promise.all(Array.from({ length: scenario.concurrency }, worker))
        const wallMs = performance.now() - start
        let ticksAfter = cpuTicks(target.pid)
        if (target.name === "embedded") {
          // The CPU counted is the load's and its checkpoints' commits (bench/gateway/Embedded.ts).
          embeddedSent += count + 1
          const settled = await settleEmbedded(embeddedApi, embeddedSent, () => cpuTicks(target.pid), ticks, count)
          ticksAfter = settled.ticksCommitted
          if (recorded && scenario.concurrency === 64)
            commitWaits.push(`${scenario.format} ${scenario.stream ? "SSE" : "JSON"} round ${round}: ${settled.line}`)
        }
        if (!recorded) continue
        tally.wallMs += wallMs
        tally.requests += count
        tally.ticks += ticksAfter - ticks
      }
    }
    await Promise.all([...pools.values()].map((pool) => pool.close()))
    const direct = tallies.get("direct")!
    const name = `${scenario.format} ${scenario.stream ? (scenario.crlf ? "SSE (CRLF)" : "SSE") : "JSON"}${scenario.toolResults ? " tool_result ×3" : ""} c=${scenario.concurrency}`
    for (const target of targets) {
      const t = tallies.get(target.name)!
      const p50 = percentile(t.totals, 50)
      const p99 = percentile(t.totals, 99)
      const fb = percentile(t.firstBytes, 50)
      const isDirect = target.name === "direct"
      const fmt = (n: number) => n.toFixed(2)
      console.log(
        `| ${name} | ${target.name} | ${fmt(p50)} | ${fmt(p99)} | ${isDirect ? "" : fmt(p50 - percentile(direct.totals, 50))} | ${isDirect ? "" : fmt(p99 - percentile(direct.totals, 99))} | ${scenario.stream ? fmt(fb) : ""} | ${scenario.stream && !isDirect ? fmt(fb - percentile(direct.firstBytes, 50)) : ""} | ${((t.requests / t.wallMs) * 1000).toFixed(0)} | ${isDirect ? "" : ((t.ticks * 10_000) / t.requests).toFixed(0)} | ${t.requestIntact ? "yes" : "NO"} | ${t.responseIntact ? "yes" : "NO"} |`
      )
    }
  }
  if (commitWaits.length > 0) {
    console.log("")
    console.log(
      "embedded, after each c=64 load: time until every checkpoint was committed (polling /metrics), then until the outbox was drained (proofs, webhook fan-out), and the CPU per request up to then:"
    )
    for (const line of commitWaits) console.log(`- ${line}`)
  }
  candor.kill()
  embedded?.kill()
  await nats?.cleanup()
  process.exit(0)
}

/** The NATS server for the gateway's events, with a prefix of its own and its streams deleted afterwards. */
const benchNats = async () => {
  const url = process.env.BENCH_NATS_URL ?? process.env.TEST_NATS_URL ?? "nats://127.0.0.1:4222"
  const nc = await connect({ servers: url, timeout: 2_000 }).catch(() => undefined)
  if (nc === undefined) return undefined
  const prefix = `bench${process.pid}`
  return {
    url,
    prefix,
    cleanup: async () => {
      const jsm = await jetstreamManager(nc)
      for await (const info of jsm.streams.list()) {
        if (info.config.name.toLowerCase().includes(prefix)) await jsm.streams.delete(info.config.name)
      }
      await nc.close()
    }
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
