/**
 * A real MCP server on loopback for the gateway's tests: the official SDK's `Server` behind its
 * Streamable HTTP transport (stateful: one transport per session, `Mcp-Session-Id`), answering in
 * SSE by default or in JSON (`json: true`). Its tools are whatever `tools` holds when a list is
 * asked for (a test changes a definition between two lists); every call that reaches it is counted
 * by tool name, so a test can prove a refused call never did; `results` sets what a tool answers.
 * `answers` records the bytes it answered.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from "@modelcontextprotocol/sdk/types.js"
import { randomUUID } from "node:crypto"
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

export interface FakeMcpServer {
  readonly url: string
  /** The tools listed now (change an entry to change a definition). */
  tools: Array<Tool>
  /** Calls that reached the server, by tool name, with their arguments. */
  readonly calls: Array<{ readonly name: string; readonly arguments: unknown }>
  /** Requests that reached it (method, and whether an agent token came along: it never should). */
  readonly requests: Array<{
    readonly method: string
    readonly tokenSeen: boolean
    readonly headers: IncomingMessage["headers"]
  }>
  /** The bytes of each answer, as written. */
  readonly answers: Array<Buffer>
  /** A tool's result text, by tool name (`ran {name}` for a tool not named here). */
  readonly results: Record<string, string>
  /** A log message a tool sends (a notification in the call's stream) before its result, by tool name. */
  readonly notes: Record<string, string>
  close(): Promise<void>
}

export const startFakeMcpServer = async (options: { readonly json?: boolean } = {}): Promise<FakeMcpServer> => {
  const transports = new Map<string, StreamableHTTPServerTransport>()
  const fake: FakeMcpServer = {
    url: "",
    tools: [],
    calls: [],
    requests: [],
    answers: [],
    results: {},
    notes: {},
    close: () => Promise.resolve()
  }
  const build = () => {
    const server = new Server({ name: "fake", version: "1.0.0" }, { capabilities: { tools: {}, logging: {} } })
    server.setRequestHandler(ListToolsRequestSchema, () => Promise.resolve({ tools: fake.tools }))
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      fake.calls.push({ name: request.params.name, arguments: request.params.arguments })
      const note = fake.notes[request.params.name]
      if (note !== undefined)
        await extra.sendNotification({ method: "notifications/message", params: { level: "info", data: note } })
      const text = fake.results[request.params.name] ?? `ran ${request.params.name}`
      return { content: [{ type: "text" as const, text }] }
    })
    return server
  }
  const recordAnswer = (res: ServerResponse) => {
    const chunks: Array<Buffer> = []
    const write = res.write.bind(res) as (chunk: unknown, ...rest: Array<unknown>) => boolean
    const end = res.end.bind(res) as (...args: Array<unknown>) => ServerResponse
    res.write = ((chunk: unknown, ...rest: Array<unknown>) => {
      if (chunk !== undefined && chunk !== null) chunks.push(Buffer.from(chunk as string))
      return write(chunk, ...rest)
    }) as typeof res.write
    res.end = ((...args: Array<unknown>) => {
      const first = args[0]
      if (first !== undefined && typeof first !== "function") chunks.push(Buffer.from(first as string))
      fake.answers.push(Buffer.concat(chunks))
      return end(...args)
    }) as typeof res.end
  }
  const http: HttpServer = createServer((req, res) => {
    fake.requests.push({
      method: req.method ?? "",
      tokenSeen: req.headers["x-candor-agent-token"] !== undefined,
      headers: req.headers
    })
    recordAnswer(res)
    const sid = req.headers["mcp-session-id"]
    let transport = typeof sid === "string" ? transports.get(sid) : undefined
    const handle = async () => {
      if (transport === undefined) {
        const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          enableJsonResponse: options.json === true,
          onsessioninitialized: (id) => void transports.set(id, created)
        })
        transport = created
        await build().connect(created)
      }
      await transport.handleRequest(req, res)
    }
    handle().catch(() => {
      if (!res.headersSent) res.writeHead(500).end()
    })
  })
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", () => resolve()))
  return Object.assign(fake, {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections()
        http.close(() => resolve())
      })
  })
}
