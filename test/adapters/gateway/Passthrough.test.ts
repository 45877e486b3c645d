/**
 * The gateway forwards bytes: what reaches the upstream is what the client sent (minus hop-by-hop and
 * x-candor-* headers), and what reaches the client is what the upstream sent, compressed or not.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { randomBytes } from "node:crypto"
import { gunzipSync, gzipSync } from "node:zlib"
import {
  call,
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
  gateway = await startGateway(upstream.url, inspector.service, { maxRequestBytes: 8 * 1024 * 1024 })
})
afterAll(async () => {
  await gateway.close()
  await upstream.close()
})

/** Header pairs of a raw list, names lowercased, in order. */
const pairs = (raw: ReadonlyArray<string>) => {
  const out: Array<[string, string]> = []
  for (let i = 0; i < raw.length; i += 2) out.push([raw[i]!.toLowerCase(), raw[i + 1]!])
  return out
}

describe("request forwarding", () => {
  it("sends method, path, query, body and end-to-end headers unchanged; drops hop-by-hop and x-candor-*", async () => {
    const body = Buffer.from(JSON.stringify({ model: "claude-x", messages: [{ role: "user", content: "hé ✓" }] }))
    upstream.handle = (_r, res) => res.end("{}")
    await call(`${gateway.url}/anthropic/v1/messages?beta=true&x=%20a`, {
      method: "POST",
      headers: {
        "x-api-key": "sk-ant-secret",
        "anthropic-version": "2023-06-01",
        "content-type": "application/json",
        "x-candor-agent": "fleet-7",
        "x-candor-session": "s-1",
        connection: "keep-alive, x-drop-me",
        "x-drop-me": "1",
        te: "trailers",
        "proxy-authorization": "Basic abc",
        "x-repeated": ["a", "b"]
      },
      body
    })
    const got = upstream.requests.at(-1)!
    expect(got.method).toBe("POST")
    expect(got.url).toBe("/v1/messages?beta=true&x=%20a")
    expect(got.body.equals(body)).toBe(true)
    const headers = pairs(got.rawHeaders)
    const names = headers.map(([n]) => n)
    expect(headers).toEqual(
      expect.arrayContaining([
        ["x-api-key", "sk-ant-secret"],
        ["anthropic-version", "2023-06-01"],
        ["content-type", "application/json"],
        ["x-repeated", "a"],
        ["x-repeated", "b"],
        ["content-length", String(body.byteLength)]
      ])
    )
    for (const dropped of ["x-candor-agent", "x-candor-session", "x-drop-me", "te", "proxy-authorization"]) {
      expect(names).not.toContain(dropped)
    }
    expect(headers.find(([n]) => n === "host")![1]).toBe(new URL(upstream.url).host)
  })

  it("maps each prefix to the provider's path: openai keeps /v1, gemini keeps :action and ?key", async () => {
    upstream.handle = (_r, res) => res.end("{}")
    await call(`${gateway.url}/openai/v1/chat/completions`, { method: "POST", body: "{}" })
    expect(upstream.requests.at(-1)!.url).toBe("/v1/chat/completions")
    await call(`${gateway.url}/gemini/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse&key=AIza`, {
      method: "POST",
      body: "{}"
    })
    expect(upstream.requests.at(-1)!.url).toBe("/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse&key=AIza")
    await call(`${gateway.url}/anthropic?x=1`)
    expect(upstream.requests.at(-1)!.url).toBe("/?x=1")
  })

  it("forwards a 5 MB request body intact", async () => {
    const body = randomBytes(5 * 1024 * 1024)
    upstream.handle = (r, res) => res.end(String(r.body.byteLength))
    const res = await call(`${gateway.url}/openai/v1/files`, { method: "POST", body })
    expect(res.body.toString()).toBe(String(body.byteLength))
    expect(upstream.requests.at(-1)!.body.equals(body)).toBe(true)
  })
})

describe("response pass-through", () => {
  it("returns status, end-to-end headers and JSON bytes unchanged, plus the overhead header", async () => {
    const json = Buffer.from('{"id":"msg_1",  "content":[{"type":"text","text":"hi"}]}\n')
    upstream.handle = (_r, res) => {
      res.writeHead(200, {
        "content-type": "application/json",
        "content-length": json.byteLength,
        "request-id": "req_1",
        "set-cookie": ["a=1", "b=2"]
      })
      res.end(json)
    }
    const res = await call(`${gateway.url}/anthropic/v1/messages`, { method: "POST", body: "{}" })
    expect(res.status).toBe(200)
    expect(res.body.equals(json)).toBe(true)
    expect(res.headers["request-id"]).toBe("req_1")
    expect(res.headers["set-cookie"]).toEqual(["a=1", "b=2"])
    expect(res.headers["content-length"]).toBe(String(json.byteLength))
    expect(Number(res.headers["x-candor-overhead-ms"])).toBeGreaterThanOrEqual(0)
    expect(res.headers["x-accel-buffering"]).toBeUndefined() // only streams get it
  })

  it("passes an upstream 5xx through unchanged", async () => {
    const body = Buffer.from('{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}')
    upstream.handle = (_r, res) => {
      res.writeHead(529, "Site Overloaded", { "content-type": "application/json", "retry-after": "3" })
      res.end(body)
    }
    const res = await call(`${gateway.url}/anthropic/v1/messages`, { method: "POST", body: "{}" })
    expect(res.status).toBe(529)
    expect(res.headers["retry-after"]).toBe("3")
    expect(res.body.equals(body)).toBe(true)
  })

  it("returns a 5 MB response body byte for byte", async () => {
    const big = randomBytes(5 * 1024 * 1024)
    upstream.handle = (_r, res) => {
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": big.byteLength })
      res.end(big)
    }
    const res = await call(`${gateway.url}/openai/v1/files/f/content`)
    expect(res.body.equals(big)).toBe(true)
  })

  it("passes gzip bodies still compressed; the side copy is decoded", async () => {
    const json = JSON.stringify({ choices: [{ message: { content: "x".repeat(10_000) } }] })
    const gz = gzipSync(json)
    upstream.handle = (r, res) => {
      expect(r.req.headers["accept-encoding"]).toBe("gzip, br")
      res.writeHead(200, {
        "content-type": "application/json",
        "content-encoding": "gzip",
        "content-length": gz.byteLength
      })
      res.end(gz)
    }
    const before = inspector.outcomes.length
    const res = await call(`${gateway.url}/openai/v1/chat/completions`, {
      method: "POST",
      headers: { "accept-encoding": "gzip, br" },
      body: "{}"
    })
    expect(res.headers["content-encoding"]).toBe("gzip")
    expect(res.body.equals(gz)).toBe(true)
    expect(gunzipSync(res.body).toString()).toBe(json)
    const outcomes = await inspector.outcomeCount(before + 1)
    expect(outcomes.at(-1)!.kind).toBe("complete")
    expect(Buffer.concat(inspector.chunks.at(-1)!).toString()).toBe(json)
  })
})

describe("routing", () => {
  it("a whole first segment names the provider; the rest (at least `/`) is the provider's own path", async () => {
    const providers: Array<string> = []
    const routed = await startGateway(upstream.url, {
      ...inspector.service,
      beforeRequest: (request) => {
        providers.push(request.provider)
        return inspector.service.beforeRequest(request)
      }
    })
    try {
      upstream.handle = (_r, res) => res.end("{}")
      const before = upstream.requests.length
      for (const path of [
        "/anthropic/v1/messages",
        "/openai/v1/chat/completions",
        "/gemini/v1beta/models/g:streamGenerateContent",
        "/openai",
        "/openai?x=1"
      ]) {
        expect((await call(`${routed.url}${path}`, { method: "POST", body: "{}" })).status).toBe(200)
      }
      expect(providers).toEqual(["anthropic", "openai", "gemini", "openai", "openai"])
      expect(upstream.requests.slice(before).map((r) => r.url)).toEqual([
        "/v1/messages",
        "/v1/chat/completions",
        "/v1beta/models/g:streamGenerateContent",
        "/",
        "/?x=1"
      ])
      for (const path of ["/openaix/v1", "/v1/messages", "/constructor/x", "/__proto__/x"]) {
        expect((await call(`${routed.url}${path}`, { method: "POST", body: "{}" })).status).toBe(404)
      }
      expect(upstream.requests.length).toBe(before + 5)
    } finally {
      await routed.close()
    }
  })
})

describe("gateway answers", () => {
  it("404 JSON for an unknown prefix, /health/live 200, 413 for a too-large body", async () => {
    const unknown = await call(`${gateway.url}/mistral/v1/chat`)
    expect(unknown.status).toBe(404)
    expect(JSON.parse(unknown.body.toString())).toHaveProperty("error")
    // Whole segments only, and only the three names (not any property of an object).
    for (const path of ["/openaix/v1/chat", "/constructor/x"])
      expect((await call(`${gateway.url}${path}`)).status).toBe(404)
    const live = await call(`${gateway.url}/health/live`)
    expect(live.status).toBe(200)
    expect(JSON.parse(live.body.toString())).toEqual({ status: "ok" })
    const before = upstream.requests.length
    const big = await call(`${gateway.url}/anthropic/v1/messages`, {
      method: "POST",
      body: Buffer.alloc(9 * 1024 * 1024)
    })
    expect(big.status).toBe(413)
    expect(JSON.parse(big.body.toString())).toEqual({ error: "request body too large" })
    expect(upstream.requests.length).toBe(before)
    for (const r of [unknown, live, big]) expect(r.headers["x-candor-overhead-ms"]).toBeDefined()
  })
})
