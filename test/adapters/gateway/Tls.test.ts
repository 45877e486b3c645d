/**
 * `GatewayServer.layer` with `tls`: HTTPS on the same handler with the same HTTP/1.1 keep-alive
 * settings, TLS 1.1 and plain HTTP refused, an SSE stream passed through byte for byte and event by
 * event, and `reloadTls` (what SIGHUP runs) swapping the certificate for the next connection.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { request } from "node:https"
import { writeFileSync } from "node:fs"
import { GatewayServer, layer as gatewayLayer } from "../../../adapters/gateway/GatewayServer.js"
import { Inspector } from "../../../adapters/gateway/Inspector.js"
import { makeCertificate, type TestCertificate, tempDir } from "../../support/TestCertificate.js"
import { plainHttpFails, servedFingerprint, tls11Refused } from "../../support/TlsClient.js"
import { deferred, type FakeUpstream, RecordingInspector, startUpstream } from "./Harness.js"

const tmp = tempDir()
let cert: TestCertificate
let upstream: FakeUpstream
let scope: Scope.CloseableScope
let gateway: GatewayServer["Type"]
const inspector = new RecordingInspector()

beforeAll(async () => {
  cert = makeCertificate(tmp.dir)
  upstream = await startUpstream()
  scope = await Effect.runPromise(Scope.make())
  const context = await Effect.runPromise(
    Layer.buildWithScope(
      gatewayLayer({
        port: 0,
        host: "127.0.0.1",
        upstreams: { anthropic: upstream.url, openai: upstream.url, gemini: upstream.url },
        tls: { certFile: cert.certFile, keyFile: cert.keyFile }
      }).pipe(Layer.provide(Layer.succeed(Inspector, inspector.service))),
      scope
    )
  )
  gateway = Context.get(context, GatewayServer)
})
afterAll(async () => {
  await Effect.runPromise(Scope.close(scope, Exit.void))
  await upstream.close()
  tmp.remove()
})

/** One HTTPS request trusting `ca`; `onData` sees each chunk as it arrives. */
const httpsCall = (
  path: string,
  ca: Buffer,
  init: { method?: string; body?: string; onData?: (text: string) => void } = {}
) =>
  new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
    const req = request(`${gateway.url}${path}`, { method: init.method ?? "GET", ca, agent: false }, (res) => {
      let body = ""
      res.setEncoding("utf8")
      res.on("data", (chunk: string) => {
        body += chunk
        init.onData?.(body)
      })
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body }))
    })
    req.on("error", reject)
    req.end(init.body)
  })

describe("the gateway over HTTPS", () => {
  it("announces an https URL and keeps the HTTP/1.1 keep-alive setting", () => {
    expect(gateway.url).toBe(`https://127.0.0.1:${gateway.port}`)
    expect(gateway.server.keepAliveTimeout).toBe(65_000)
  })

  it("answers /health/live and forwards a provider call", async () => {
    expect(await httpsCall("/health/live", cert.cert)).toMatchObject({ status: 200, body: '{"status":"ok"}' })
    upstream.handle = (_r, res) => res.end('{"id":"msg_1"}')
    const res = await httpsCall("/anthropic/v1/messages", cert.cert, { method: "POST", body: "{}" })
    expect(res).toMatchObject({ status: 200, body: '{"id":"msg_1"}' })
    expect(upstream.requests.at(-1)!.url).toBe("/v1/messages")
  })

  it("refuses a TLS 1.1 client and plain HTTP", async () => {
    await tls11Refused(gateway.port)
    await plainHttpFails(gateway.port)
  })

  it("streams SSE: the first event reaches the client before the upstream sends the second", async () => {
    const clientSawFirst = deferred()
    const first = 'data: {"choices":[{"delta":{"content":"a"}}]}\n\n'
    const second = 'data: {"choices":[{"delta":{"content":"b"}}]}\n\ndata: [DONE]\n\n'
    upstream.handle = (_r, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" })
      res.write(first)
      void clientSawFirst.promise.then(() => res.end(second))
    }
    const before = inspector.outcomes.length
    const res = await httpsCall("/openai/v1/chat/completions", cert.cert, {
      method: "POST",
      body: '{"stream":true}',
      onData: (text) => (text === first ? clientSawFirst.resolve() : undefined)
    })
    expect(res.status).toBe(200)
    expect(res.headers["content-type"]).toBe("text/event-stream")
    expect(res.body).toBe(first + second)
    const outcome = (await inspector.outcomeCount(before + 1)).at(-1)!
    expect(outcome).toMatchObject({ kind: "complete", status: 200 })
    expect(Buffer.concat(inspector.chunks.at(-1)!).toString()).toBe(first + second)
  })

  it("reloadTls serves a rotated certificate to the next connection; a bad file keeps the current one", async () => {
    expect(await servedFingerprint(gateway.port, cert.cert)).toBe(cert.fingerprint256)
    const rotated = makeCertificate(tmp.dir) // same paths, new key and certificate
    await Effect.runPromise(gateway.reloadTls)
    expect(await servedFingerprint(gateway.port, rotated.cert)).toBe(rotated.fingerprint256)
    expect(await httpsCall("/health/live", rotated.cert)).toMatchObject({ status: 200 })
    await tls11Refused(gateway.port)

    writeFileSync(rotated.certFile, "-----BEGIN CERTIFICATE-----\ntruncated")
    const failed = await Effect.runPromise(Effect.flip(gateway.reloadTls))
    expect(failed.message).toContain(rotated.certFile)
    expect(await servedFingerprint(gateway.port, rotated.cert)).toBe(rotated.fingerprint256)
  })
})
