/**
 * Streams pass as they arrive: same bytes, no waiting for more, bounded memory under a slow reader,
 * and a side copy of every chunk.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { createHash } from "node:crypto"
import { request } from "node:http"
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
  gateway = await startGateway(upstream.url, inspector.service)
})
afterAll(async () => {
  await gateway.close()
  await upstream.close()
})

const SSE = { "content-type": "text/event-stream", "cache-control": "no-cache" }

describe("SSE pass-through", () => {
  it("returns a CRLF stream split mid-event byte for byte, with X-Accel-Buffering: no; the observer sees the same bytes", async () => {
    const stream =
      'event: message_start\r\ndata: {"type":"message_start"}\r\n\r\n' +
      'event: content_block_delta\r\ndata: {"type":"content_block_delta","delta":{"text":"é✓"}}\r\n\r\n' +
      'event: message_stop\r\ndata: {"type":"message_stop"}\r\n\r\n'
    const bytes = Buffer.from(stream)
    // Split inside an event, inside a CRLF, and inside a multi-byte character.
    const cuts = [17, 55, 56, bytes.indexOf("✓") + 1, bytes.byteLength - 3]
    upstream.handle = (_r, res) => {
      res.writeHead(200, SSE)
      let at = 0
      for (const cut of cuts) {
        res.write(bytes.subarray(at, cut))
        at = cut
      }
      res.end(bytes.subarray(at))
    }
    const before = inspector.outcomes.length
    const res = await call(`${gateway.url}/anthropic/v1/messages`, { method: "POST", body: '{"stream":true}' })
    expect(res.headers["x-accel-buffering"]).toBe("no")
    expect(res.headers["content-type"]).toBe("text/event-stream")
    expect(res.body.equals(bytes)).toBe(true)
    const outcome = (await inspector.outcomeCount(before + 1)).at(-1)!
    expect(outcome).toMatchObject({ kind: "complete", status: 200, bytes: bytes.byteLength })
    expect(Buffer.concat(inspector.chunks.at(-1)!).equals(bytes)).toBe(true)
  })

  it("delivers the first event before the upstream sends the second", async () => {
    const clientSawFirst = deferred()
    const first = 'data: {"choices":[{"delta":{"content":"a"}}]}\n\n'
    const second = 'data: {"choices":[{"delta":{"content":"b"}}]}\n\ndata: [DONE]\n\n'
    upstream.handle = (_r, res) => {
      res.writeHead(200, SSE)
      res.write(first)
      // The second event is only written once the client has the first: a buffering gateway deadlocks here.
      void clientSawFirst.promise.then(() => res.end(second))
    }
    const received = await new Promise<string>((resolve, reject) => {
      const req = request(`${gateway.url}/openai/v1/chat/completions`, { method: "POST", agent: false }, (res) => {
        let text = ""
        res.setEncoding("utf8")
        res.on("data", (chunk: string) => {
          text += chunk
          if (text === first) clientSawFirst.resolve()
        })
        res.on("end", () => resolve(text))
      })
      req.on("error", reject)
      req.end('{"stream":true}')
    })
    expect(received).toBe(first + second)
  })

  it("applies backpressure: a paused reader holds the upstream back while it produces 50 MB", async () => {
    const total = 50 * 1024 * 1024
    const piece = Buffer.alloc(64 * 1024, "data: x\n\n")
    let written = 0
    let blocked = deferred()
    let draining = false
    const hash = createHash("sha256")
    upstream.handle = (_r, res) => {
      res.writeHead(200, SSE)
      const pump = () => {
        while (written < total) {
          written += piece.byteLength
          hash.update(piece)
          if (!res.write(piece)) {
            draining = true
            blocked.resolve()
            res.once("drain", () => {
              draining = false
              pump()
            })
            return
          }
        }
        res.end()
      }
      pump()
    }
    const gatewayResponses: Array<import("node:http").ServerResponse> = []
    const onRequest = (_req: unknown, res: import("node:http").ServerResponse) => void gatewayResponses.push(res)
    gateway.server.on("request", onRequest)

    const clientHash = createHash("sha256")
    let received = 0
    const done = deferred()
    const req = request(`${gateway.url}/openai/v1/stream`, { agent: false }, (res) => {
      res.pause() // read nothing until the upstream has had to stop
      res.on("data", (c: Buffer) => {
        received += c.byteLength
        clientHash.update(c)
      })
      res.on("end", () => done.resolve())
      void (async () => {
        // Wait on the condition itself: the upstream blocked, and still blocked after the event loop
        // has turned many times (a buffering gateway would have drained it again by then).
        for (;;) {
          await blocked.promise
          for (let i = 0; i < 200 && draining; i++) await new Promise((r) => setImmediate(r))
          if (draining) break
          blocked = deferred()
        }
        expect(written).toBeLessThan(total / 2)
        const gatewayRes = gatewayResponses.at(-1)!
        expect(gatewayRes.writableLength).toBeLessThanOrEqual(2 * 1024 * 1024)
        res.resume()
      })()
    })
    req.end()
    await done.promise
    gateway.server.off("request", onRequest)
    expect(received).toBe(total)
    expect(clientHash.digest("hex")).toBe(hash.digest("hex"))
  })
})
