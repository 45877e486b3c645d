/**
 * `npm run bench:mcp [calls]` (issue 28 item 7): what Candor's MCP gateway adds to a `tools/call`
 * whose result is judged. The official SDK's server (Streamable HTTP, JSON answers, one session) on
 * loopback; the SDK's client calls one tool `calls` times (300 by default, after 50 to warm up)
 * directly, then through the embedded gateway (in-process bus and agent state, the `rules` judge,
 * the agent in `enforce`: each answer held until judged). Each call's result is a distinct benign
 * text (~300 characters), so every call is judged, none remembered. The two series' calls
 * alternate. Prints p50 and p99 of each and the p50 added. `npm run bench:mcp -- 300 observe`: the
 * agent in `observe` (the hop alone, judging on the side).
 *
 * The gateway runs on a thread of its own (bench/McpGatewayThread.ts), as a deployment runs it
 * beside the agent and the server rather than on their event loop; the client and the server share
 * this one, for both series. All on one machine: compare figures of one run.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { randomUUID } from "node:crypto"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { performance } from "node:perf_hooks"
import { Worker } from "node:worker_threads"
import type { GatewayThreadData } from "./McpGatewayThread.js"

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

/**
 * The two clients' calls interleaved (direct, through, through, direct, …): a slow second of this
 * shared machine lands on both series alike, where one series after the other would give it to one.
 */
const measure = async (directUrl: string, throughUrl: string, headers: Record<string, string>) => {
  const direct = await connect(directUrl, {})
  const through = await connect(throughUrl, headers)
  const directTimes: Array<number> = []
  const throughTimes: Array<number> = []
  for (let i = 0; i < WARMUP + CALLS; i++) {
    const first = i % 2 === 0
    const a = await timedCall(first ? direct : through)
    const b = await timedCall(first ? through : direct)
    if (i < WARMUP) continue
    directTimes.push(first ? a : b)
    throughTimes.push(first ? b : a)
  }
  await direct.close()
  await through.close()
  return { direct: percentiles(directTimes), through: percentiles(throughTimes) }
}

/** The gateway on a thread of its own (bench/McpGatewayThread.ts), loaded through tsx as this module is. */
const startGateway = async (data: GatewayThreadData) => {
  const module = new URL("./McpGatewayThread.ts", import.meta.url).href
  const worker = new Worker(
    `import("tsx/esm/api").then((tsx) => tsx.tsImport(${JSON.stringify(module)}, ${JSON.stringify(module)}))`,
    { eval: true, workerData: data }
  )
  const started = await new Promise<{ url?: string; error?: string }>((resolve) => worker.once("message", resolve))
  if (started.url === undefined) throw new Error(`the gateway did not start: ${started.error}`)
  return {
    url: started.url,
    stop: () => new Promise((resolve) => (worker.once("exit", resolve), worker.postMessage("stop")))
  }
}

const main = async () => {
  const server = await startServer()
  const serverId = `mcp_${randomUUID()}`
  const token = `cmcp_${randomUUID()}`
  const gateway = await startGateway({ mode: MODE, serverUrl: server.url, serverId, token })
  const { direct, through } = await measure(server.url, `${gateway.url}/mcp/${serverId}`, {
    "x-candor-agent-token": token
  })
  const ms = (n: number) => `${n.toFixed(3)} ms`
  console.log(`tools/call, ${CALLS} calls after ${WARMUP} to warm up (rules judge, ${MODE}, JSON answers)`)
  console.log(`direct:          p50 ${ms(direct.p50)}  p99 ${ms(direct.p99)}`)
  console.log(`through Candor:  p50 ${ms(through.p50)}  p99 ${ms(through.p99)}`)
  console.log(`added at p50:    ${ms(through.p50 - direct.p50)} (target: at most 1 ms)`)
  await gateway.stop()
  server.http.closeAllConnections()
  server.http.close()
}

void main()
