/**
 * The per-client limit on unknown keys (issue 24): the client (adapters/http/ClientAddress.ts), the token bucket,
 * what makes a key known, and the limit through the real gateway on the test clock: a client
 * flooding with keys the provider refuses gets 429 `{error}` with `Retry-After` before the provider,
 * while a known key, an agent with settings and another client are never slowed by it.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import * as TestContext from "effect/TestContext"
import { request } from "node:http"
import { AgentState } from "../../../adapters/bus/AgentState.js"
import { Bus } from "../../../adapters/bus/Bus.js"
import { agentIdOf } from "../../../adapters/gateway/AgentIdentity.js"
import * as GatewayInspector from "../../../adapters/gateway/GatewayInspector.js"
import { Inspector } from "../../../adapters/gateway/Inspector.js"
import { ProviderAdapters } from "../../../adapters/gateway/ProviderAdapters.js"
import { UnknownKeys } from "../../../adapters/gateway/UnknownKeys.js"
import { parseTrustedProxies } from "../../../adapters/http/ClientAddress.js"
import { sha256Hex } from "../../../adapters/providers/Identity.js"
import { providerAdapters } from "../../../adapters/providers/Registry.js"
import { FakeJudge } from "./Fakes.js"
import { type FakeUpstream, type RawResponse, startGateway, startUpstream, type TestGateway } from "./Harness.js"

describe("UnknownKeys", () => {
  const limits = { perMinute: 60, burst: 2, knownKeys: 2, clients: 2 }

  it("a burst, then the rate; Retry-After is the wait for one token", () => {
    const keys = new UnknownKeys(limits)
    expect(keys.take("a", 0)).toBeUndefined()
    expect(keys.take("a", 0)).toBeUndefined()
    expect(keys.take("a", 0)).toBe(1)
    expect(keys.take("a", 999)).toBe(1)
    expect(keys.take("a", 1_000)).toBeUndefined()
    expect(keys.take("b", 1_000)).toBeUndefined() // another client has its own bucket
    const slow = new UnknownKeys({ ...limits, perMinute: 6, burst: 1 })
    expect(slow.take("a", 0)).toBeUndefined()
    expect(slow.take("a", 0)).toBe(10)
    expect(new UnknownKeys({ ...limits, perMinute: 0 }).take("a", 0)).toBeUndefined() // off
  })

  it("a key is known once the provider authenticates it (not 401, 403 or 5xx); bounded, most recent kept", () => {
    const keys = new UnknownKeys(limits)
    for (const status of [401, 403, 500, 502]) keys.noteAnswer("k1", status)
    expect(keys.isKnown("k1")).toBe(false)
    for (const [key, status] of [
      ["k1", 200],
      ["k2", 404],
      ["k3", 429]
    ] as const)
      keys.noteAnswer(key, status)
    expect([keys.isKnown("k1"), keys.isKnown("k2"), keys.isKnown("k3")]).toEqual([false, true, true])
  })

  it("keeps at most `clients` buckets: a dropped bucket is a full one", () => {
    const keys = new UnknownKeys({ ...limits, burst: 1 })
    expect(keys.take("a", 0)).toBeUndefined()
    expect(keys.take("b", 0)).toBeUndefined()
    expect(keys.take("c", 0)).toBeUndefined() // drops a's bucket
    expect(keys.take("a", 0)).toBeUndefined()
    expect(keys.take("a", 0)).toBe(1)
  })
})

describe("unknown keys at the gateway", () => {
  let scope: Scope.CloseableScope
  let upstream: FakeUpstream
  let gateway: TestGateway
  let state: AgentState["Type"]
  let clock: TestClock.TestClock

  beforeAll(async () => {
    scope = await Effect.runPromise(Scope.make())
    const testClock = TestClock.defaultTestClock.pipe(Layer.provide(TestContext.TestContext))
    clock = Context.get(await Effect.runPromise(Layer.buildWithScope(testClock, scope)), TestClock.TestClock)
    const inspector = GatewayInspector.layer({
      unknownKeys: { perMinute: 30, burst: 3, knownKeys: 100, clients: 100 },
      trustedProxies: Either.getOrThrow(parseTrustedProxies("127.0.0.9"))
    }).pipe(
      Layer.provideMerge(
        Layer.mergeAll(
          AgentState.layerMemory,
          Bus.layerMemory,
          Layer.succeed(ProviderAdapters, providerAdapters),
          FakeJudge
        )
      ),
      Layer.provide(Layer.setClock(clock))
    )
    const context = await Effect.runPromise(Layer.buildWithScope(inspector, scope))
    state = Context.get(context, AgentState)
    // The provider authenticates keys starting "sk-good", refuses every other.
    upstream = await startUpstream((r, res) => {
      const good = r.req.headers["x-api-key"]?.toString().startsWith("sk-good") === true
      const body = good
        ? JSON.stringify({ model: "claude-test", content: [{ type: "text", text: "ok" }] })
        : JSON.stringify({ type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } })
      res.writeHead(good ? 200 : 401, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
      res.end(body)
    })
    gateway = await startGateway(upstream.url, Context.get(context, Inspector))
  })
  afterAll(async () => {
    await gateway?.close()
    await upstream?.close()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  /** A request from `from` (a loopback address of this host: each is its own client). */
  const send = (key: string | undefined, from = "127.0.0.1", forwardedFor?: string) =>
    new Promise<RawResponse>((resolve, reject) => {
      const headers: Record<string, string> = { "content-type": "application/json" }
      if (key !== undefined) headers["x-api-key"] = key
      if (forwardedFor !== undefined) headers["x-forwarded-for"] = forwardedFor
      const req = request(
        `${gateway.url}/anthropic/v1/messages`,
        { method: "POST", headers, agent: false, localAddress: from },
        (res) => {
          const chunks: Array<Buffer> = []
          res.on("data", (c: Buffer) => chunks.push(c))
          res.on("end", () =>
            resolve({
              status: res.statusCode!,
              headers: res.headers,
              rawHeaders: res.rawHeaders,
              body: Buffer.concat(chunks),
              chunks
            })
          )
        }
      )
      req.on("error", reject)
      req.end(JSON.stringify({ model: "claude-test", messages: [] }))
    })

  it("limits a client's unknown keys (and keyless requests) with 429 and Retry-After, before the provider", async () => {
    const good = await send("sk-good-1", "127.0.0.4") // known from its answer on, from any client
    expect(good.status).toBe(200)
    const withSettings = "sk-bad-configured"
    await Effect.runPromise(state.update(agentIdOf(sha256Hex(withSettings), undefined), { mode: "nudge" }))

    expect((await send("sk-bad-1", "127.0.0.2")).status).toBe(401)
    expect((await send(undefined, "127.0.0.2")).status).toBe(401) // no key at all counts too
    expect((await send("sk-bad-2", "127.0.0.2")).status).toBe(401)
    const before = upstream.requests.length
    const limited = await send("sk-bad-3", "127.0.0.2")
    expect(limited.status).toBe(429)
    expect(limited.headers["retry-after"]).toBe("2")
    expect(Object.keys(JSON.parse(limited.body.toString()))).toEqual(["error"])
    expect((await send(undefined, "127.0.0.2")).status).toBe(429)
    // A refused key stays unknown: still limited.
    expect((await send("sk-bad-1", "127.0.0.2")).status).toBe(429)
    expect(upstream.requests.length).toBe(before)

    // Never limited: a key the provider authenticated, an agent Candor has settings for, another client.
    expect((await send("sk-good-1", "127.0.0.2")).status).toBe(200)
    expect((await send(withSettings, "127.0.0.2")).status).toBe(401)
    expect((await send("sk-bad-4", "127.0.0.3")).status).toBe(401)

    // Two seconds give one token back.
    await Effect.runPromise(clock.adjust("2 seconds"))
    expect((await send("sk-bad-5", "127.0.0.2")).status).toBe(401)
    expect((await send("sk-bad-6", "127.0.0.2")).status).toBe(429)
  })

  it("behind a trusted proxy (CANDOR_TRUSTED_PROXIES), each forwarded client has its own bucket; anyone else's X-Forwarded-For is ignored", async () => {
    const proxy = "127.0.0.9"
    for (const key of ["sk-bad-p1", "sk-bad-p2", "sk-bad-p3"])
      expect((await send(key, proxy, "198.51.100.1")).status).toBe(401)
    expect((await send("sk-bad-p4", proxy, "198.51.100.1")).status).toBe(429)
    // A forged entry to the left of what the proxy appended does not choose the bucket.
    expect((await send("sk-bad-p5", proxy, "198.51.100.2, 198.51.100.1")).status).toBe(429)
    expect((await send("sk-bad-p6", proxy, "198.51.100.2")).status).toBe(401)
    // Not a trusted proxy: its header is the client's own word, and the socket is the client.
    for (const forwarded of ["198.51.100.3", "198.51.100.4", "198.51.100.5"])
      expect((await send(`sk-bad-${forwarded}`, "127.0.0.10", forwarded)).status).toBe(401)
    expect((await send("sk-bad-q", "127.0.0.10", "198.51.100.6")).status).toBe(429)
  })
})
