/**
 * The floor of this stack, for `npm run bench:gateway`: a bare node:http server that forwards every
 * request to the fake upstream through an undici `Pool` and streams the body both ways, with no
 * inspection, no routing table, no header filtering beyond what HTTP requires. Whatever Candor adds
 * over this process is Candor's own cost; what this process adds over a direct call is Node's and undici's.
 *
 * Run as its own process (never sharing an event loop with the load generator): the upstream origin is
 * the first argument, and the bound port is printed on the first line of stdout.
 *
 * `/anthropic/*` and `/openai/*` lose their first segment, so the bench can call it with the same
 * paths as Candor.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Pool } from "undici"

const origin = process.argv[2]
if (origin === undefined) throw new Error("usage: BarePassThrough.ts <upstream origin>")
const pool = new Pool(origin, { pipelining: 1, keepAliveTimeout: 30_000 })

/** Hop-by-hop (RFC 9110 §7.6.1) and what undici sets itself: the minimum any proxy must drop. */
const DROPPED = new Set(["connection", "keep-alive", "transfer-encoding", "host", "content-length", "upgrade", "te"])

const forwardedHeaders = (raw: ReadonlyArray<string>): Array<string> => {
  const out: Array<string> = []
  for (let i = 0; i + 1 < raw.length; i += 2) if (!DROPPED.has(raw[i]!.toLowerCase())) out.push(raw[i]!, raw[i + 1]!)
  return out
}

const clientHeaders = (headers: IncomingHttpHeaders): IncomingHttpHeaders => {
  const out: IncomingHttpHeaders = {}
  for (const name in headers) if (!DROPPED.has(name)) out[name] = headers[name]
  return out
}

const pathOf = (url: string): string => url.replace(/^\/(anthropic|openai|gemini)(?=\/)/, "")

const handler = (req: IncomingMessage, res: ServerResponse): void => {
  pool.stream(
    {
      path: pathOf(req.url ?? "/"),
      method: (req.method ?? "GET") as "POST",
      headers: forwardedHeaders(req.rawHeaders),
      // The request body streams to the upstream as it arrives.
      body: req.method === "GET" || req.method === "HEAD" ? null : req
    },
    ({ statusCode, headers }) => {
      res.writeHead(statusCode, clientHeaders(headers))
      // SSE clients wait for the headers before the first event; other headers leave with the first chunk.
      if (String(headers["content-type"]).startsWith("text/event-stream")) res.flushHeaders()
      return res // undici pipes the body into the client's response, with backpressure
    },
    (error) => {
      if (error === null) return
      if (res.headersSent) res.destroy()
      else {
        res.writeHead(502, { "content-type": "application/json" })
        res.end('{"error":"upstream failed"}')
      }
    }
  )
}

const server = createServer({ keepAliveTimeout: 65_000 }, handler)
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`)
})
