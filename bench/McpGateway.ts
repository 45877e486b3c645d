/**
 * `npm run bench:mcp [calls]` (issue 28 item 7): what Candor's MCP gateway adds to a `tools/call`
 * whose result is judged. The official SDK's server (Streamable HTTP, JSON answers, one session) on
 * loopback; the SDK's client calls one tool `calls` times (300 by default, after 50 to warm up)
 * directly, through the bare pass-through (bench/gateway/BarePassThrough.ts: node:http and undici,
 * no inspection, the floor of any proxy on this stack) and through the embedded gateway (in-process
 * bus and agent state, the `rules` judge, the agent in `enforce`: each answer held until judged).
 * Each call's result is a distinct benign text (~300 characters), so every call is judged, none
 * remembered. The three series' calls are interleaved (`ORDER`). Prints p50 and p99 of each, the
 * p50 each proxy adds, and Candor's own part (what it adds over the bare pass-through).
 * `npm run bench:mcp -- 300 observe`: the agent in `observe` (the hop alone, judging on the side).
 *
 * The gateway runs as `npm start` runs it, beside the agent and the server rather than on their
 * event loop: on a thread of its own (bench/McpGatewayThread.ts), its bus and agent state on another
 * (bench/McpBackendThread.ts), the thread bridge between them. The bare pass-through is a process of
 * its own; the client and the server share this thread, for every series. All on one machine:
 * compare figures of one run.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { once } from "node:events"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { performance } from "node:perf_hooks"
import { MessageChannel, type MessagePort, Worker } from "node:worker_threads"
import { BACKEND_YOUNG_GENERATION_MB } from "../src/NodeFlags.js"
import type { BackendThreadData } from "./McpBackendThread.js"

const CALLS = Number(process.argv[2] ?? 300)
/** `observe` to see the hop alone: the result passes at once and is judged on the side. */
const MODE = process.argv[3] === "observe" ? "observe" : "enforce"
const WARMUP = 50

const startServer = async () => {
  const transports = new Map<string, StreamableHTTPServerTransport>()
  let n = 0
  const http = createServer((req, res) => {
    const sid = req.headers["mcp-session-id"]
    let transport = typeof sid === "string" ? transports.get(sid) : undefined
    const handle = async () => {
      if (transport === undefined) {
        const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          enableJsonResponse: true,
          onsessioninitialized: (id) => void transports.set(id, created)
        })
        transport = created
        const server = new Server({ name: "bench", version: "1.0.0" }, { capabilities: { tools: {} } })
        server.setRequestHandler(ListToolsRequestSchema, () => Promise.resolve({ tools: [] }))
        server.setRequestHandler(CallToolRequestSchema, () =>
          Promise.resolve({
            content: [
              {
                type: "text",
                text: `Reading ${n++}: weather in Oslo 4°C, clear sky, wind 3 m/s from the north; humidity 61%, pressure 1021 hPa. Tomorrow: light snow in the morning, clearing by noon, highs of 2°C. Road conditions are good on the main routes; ferries run on their winter timetable.`
              }
            ]
          })
        )
        await server.connect(created)
      }
      await transport.handleRequest(req, res)
    }
    handle().catch(() => {
      if (!res.headersSent) res.writeHead(500).end()
    })
  })
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", () => resolve()))
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`, http }
}

const connect = async (url: string, headers: Record<string, string>) => {
  const client = new Client({ name: "bench", version: "1.0.0" })
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }))
  return client
}

const timedCall = async (client: Client) => {
  const start = performance.now()
  await client.callTool({ name: "weather", arguments: { city: "Oslo" } })
  return performance.now() - start
}

const percentiles = (times: Array<number>) => {
  times.sort((a, b) => a - b)
  return { p50: times[Math.floor(times.length * 0.5)]!, p99: times[Math.floor(times.length * 0.99)]! }
}

type Series = "direct" | "bare" | "candor"
const SERIES: ReadonlyArray<Series> = ["direct", "bare", "candor"]
/**
 * The order of the calls, repeated: a de Bruijn sequence of the three series, where each series
 * follows each one (itself included) exactly once per nine calls. A call's time depends on what ran
 * just before it (a thread woken from idle, caches), so no series always follows the same one.
 */
const ORDER: ReadonlyArray<Series> = [
  "direct",
  "direct",
  "bare",
  "bare",
  "candor",
  "candor",
  "direct",
  "candor",
  "bare"
]

/**
 * The three clients' calls interleaved in `ORDER`: a slow second of this shared machine lands on
 * every series alike. Each series' first WARMUP calls are not recorded.
 */
const measure = async (urls: Record<Series, string>, headers: Record<string, string>) => {
  const clients = {
    direct: await connect(urls.direct, {}),
    bare: await connect(urls.bare, {}),
    candor: await connect(urls.candor, headers)
  }
  const times: Record<Series, Array<number>> = { direct: [], bare: [], candor: [] }
  const calls: Record<Series, number> = { direct: 0, bare: 0, candor: 0 }
  for (let i = 0; i < (WARMUP + CALLS) * SERIES.length; i++) {
    const series = ORDER[i % ORDER.length]!
    const time = await timedCall(clients[series])
    if (calls[series]++ >= WARMUP) times[series].push(time)
  }
  for (const series of SERIES) await clients[series].close()
  return { direct: percentiles(times.direct), bare: percentiles(times.bare), candor: percentiles(times.candor) }
}

/** The bare pass-through (bench/gateway/BarePassThrough.ts) to the server's origin, in a process of its own. */
const startBare = async (origin: string) => {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", new URL("./gateway/BarePassThrough.ts", import.meta.url).pathname, origin],
    {
      stdio: ["ignore", "pipe", "inherit"]
    }
  )
  const [line] = (await once(child.stdout!, "data")) as [Buffer]
  return { origin: `http://127.0.0.1:${line.toString().trim()}`, stop: () => child.kill() }
}

/** A module run on a thread of its own, loaded through tsx as this module is; resolves with its first message. */
const startThread = async <A>(file: string, workerData: unknown, transferList: Array<MessagePort>) => {
  const module = new URL(file, import.meta.url).href
  const worker = new Worker(
    `import("tsx/esm/api").then((tsx) => tsx.tsImport(${JSON.stringify(module)}, ${JSON.stringify(module)}))`,
    // The young generation `npm start` gives its threads (src/NodeFlags.ts).
    { eval: true, workerData, transferList, resourceLimits: { maxYoungGenerationSizeMb: BACKEND_YOUNG_GENERATION_MB } }
  )
  const first = await new Promise<A & { error?: string }>((resolve) => worker.once("message", resolve))
  if (first.error !== undefined) throw new Error(`${file} did not start: ${first.error}`)
  return { first, stop: () => new Promise((resolve) => (worker.once("exit", resolve), worker.postMessage("stop"))) }
}

/**
 * The embedded gateway as `npm start` runs it: the gateway on one thread (bench/McpGatewayThread.ts),
 * the bus and agent state on another (bench/McpBackendThread.ts), the thread bridge between them.
 */
const startGateway = async (data: Omit<BackendThreadData, "port">) => {
  const bridge = new MessageChannel()
  const [gateway, backend] = await Promise.all([
    startThread<{ url: string }>("./McpGatewayThread.ts", { port: bridge.port1 }, [bridge.port1]),
    startThread<{ ready: true }>("./McpBackendThread.ts", { ...data, port: bridge.port2 }, [bridge.port2])
  ])
  return { url: gateway.first.url, stop: () => Promise.all([gateway.stop(), backend.stop()]) }
}

const main = async () => {
  const server = await startServer()
  const serverId = `mcp_${randomUUID()}`
  const token = `cmcp_${randomUUID()}`
  const gateway = await startGateway({ mode: MODE, serverUrl: server.url, serverId, token })
  const bare = await startBare(new URL(server.url).origin)
  const {
    bare: viaBare,
    candor,
    direct
  } = await measure(
    {
      direct: server.url,
      bare: `${bare.origin}${new URL(server.url).pathname}`,
      candor: `${gateway.url}/mcp/${serverId}`
    },
    { "x-candor-agent-token": token }
  )
  const ms = (n: number) => `${n.toFixed(3)} ms`
  const added = { bare: viaBare.p50 - direct.p50, candor: candor.p50 - direct.p50 }
  console.log(`tools/call, ${CALLS} calls after ${WARMUP} to warm up (rules judge, ${MODE}, JSON answers)`)
  console.log(`direct:            p50 ${ms(direct.p50)}  p99 ${ms(direct.p99)}`)
  console.log(`through bare:      p50 ${ms(viaBare.p50)}  p99 ${ms(viaBare.p99)}  added at p50 ${ms(added.bare)}`)
  console.log(`through Candor:    p50 ${ms(candor.p50)}  p99 ${ms(candor.p99)}  added at p50 ${ms(added.candor)}`)
  console.log(`Candor's own part: ${ms(added.candor - added.bare)} at p50 (over the bare pass-through)`)
  console.log(`added at p50:      ${ms(added.candor)} (target: at most 1 ms)`)
  bare.stop()
  await gateway.stop()
  server.http.closeAllConnections()
  server.http.close()
}

void main()
