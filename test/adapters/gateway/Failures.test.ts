/**
 * Failures are answered honestly and always reported: 502 for an unreachable upstream, 504 for a
 * silent one, a broken stream for an upstream that dies mid-body, an aborted upstream request when
 * the client leaves.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { request } from "node:http"
import { createServer } from "node:net"
import {
  call,
  deferred,
  type FakeUpstream,
  RecordingInspector,
  startGateway,
  startUpstream,
  type TestGateway
} from "./Harness.js"

let upstream: FakeUpstream
let gateway: TestGateway
let inspector: RecordingInspector

beforeAll(async () => {
  upstream = await startUpstream()
  inspector = new RecordingInspector()
  gateway = await startGateway(upstream.url, inspector.service, { timeouts: { headersMs: 300 } })
})
afterAll(async () => {
  await gateway.close()
  await upstream.close()
})

/** A port nothing listens on: bound, then released. */
const deadPort = () =>
  new Promise<number>((resolve) => {
    const s = createServer()
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number }
      s.close(() => resolve(port))
    })
  })

describe("upstream failures", () => {
  it("connection refused answers 502 {error} and reports upstream_error", async () => {
    const local = new RecordingInspector()
    const gw = await startGateway(`http://127.0.0.1:${await deadPort()}`, local.service)
    try {
      const res = await call(`${gw.url}/anthropic/v1/messages`, { method: "POST", body: "{}" })
      expect(res.status).toBe(502)
      expect(res.headers["content-type"]).toBe("application/json")
      expect(JSON.parse(res.body.toString()).error).toContain("ECONNREFUSED")
      expect(res.headers["x-candor-overhead-ms"]).toBeDefined()
      expect((await local.outcomeCount(1))[0]).toMatchObject({ kind: "upstream_error", cause: "ECONNREFUSED" })
    } finally {
      await gw.close()
    }
  })

  it("an upstream that never answers gets 504 {error} after the headers timeout, reported as timeout", async () => {
    const reached = deferred()
    upstream.handle = () => reached.resolve() // never responds
    const before = inspector.outcomes.length
    const res = await call(`${gateway.url}/openai/v1/chat/completions`, { method: "POST", body: "{}" })
    await reached.promise
    expect(res.status).toBe(504)
    expect(JSON.parse(res.body.toString()).error).toContain("timed out")
    expect((await inspector.outcomeCount(before + 1)).at(-1)).toMatchObject({ kind: "timeout" })
  })

  it("an upstream that dies mid-stream breaks the client's stream too and reports upstream_error", async () => {
    upstream.handle = (r, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" })
      res.write('data: {"type":"message_start"}\n\n', () => r.req.socket.destroy())
    }
    const before = inspector.outcomes.length
    const clientError = await new Promise<string>((resolve) => {
      const req = request(`${gateway.url}/anthropic/v1/messages`, { method: "POST", agent: false }, (res) => {
        res.on("data", () => {})
        res.on("end", () => resolve("clean end"))
        res.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message))
        res.on("aborted", () => resolve("aborted"))
      })
      req.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message))
      req.end("{}")
    })
    expect(clientError).not.toBe("clean end")
    const outcome = (await inspector.outcomeCount(before + 1)).at(-1)!
    expect(outcome.kind).toBe("upstream_error")
    expect(outcome.status).toBe(200)
    expect(outcome.bytes).toBeGreaterThan(0)
  })

  it("a client that leaves mid-stream aborts the upstream request and is reported as client_aborted", async () => {
    const upstreamClosed = deferred()
    upstream.handle = (r, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" })
      res.write('data: {"type":"message_start"}\n\n')
      res.on("close", () => upstreamClosed.resolve()) // the gateway's abort closes this socket
      void r
    }
    const before = inspector.outcomes.length
    const req = request(`${gateway.url}/anthropic/v1/messages`, { method: "POST", agent: false }, (res) => {
      res.once("data", () => req.destroy())
    })
    req.on("error", () => {})
    req.end("{}")
    await upstreamClosed.promise
    const outcome = (await inspector.outcomeCount(before + 1)).at(-1)!
    expect(outcome.kind).toBe("client_aborted")
    expect(outcome.bytes).toBeGreaterThan(0)
  })
})
