/**
 * The gateway's spans of an exchange (ExchangeSpans.ts) as the Inspector records them, with a
 * tracer that keeps its spans in memory: a failed upstream call is an error span whose request
 * span says the outcome; an enforce-mode response held for its verdict says so in its decision; a
 * refusal has only its request and decision; and without `Tracing` the exchange notes nothing.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import { createHash } from "node:crypto"
import { createServer } from "node:net"
import { AgentState } from "../../../adapters/bus/AgentState.js"
import { Bus } from "../../../adapters/bus/Bus.js"
import { agentIdOf } from "../../../adapters/gateway/AgentIdentity.js"
import * as GatewayInspector from "../../../adapters/gateway/GatewayInspector.js"
import { Inspector } from "../../../adapters/gateway/Inspector.js"
import { ProviderAdapters } from "../../../adapters/gateway/ProviderAdapters.js"
import { providerAdapters } from "../../../adapters/providers/Registry.js"
import type { Tracing } from "../../../adapters/tracing/Tracing.js"
import { type Kept, memoryTracer } from "../../support/MemoryTracer.js"
import { FakeJudge } from "./Fakes.js"
import { call, startGateway, startUpstream } from "./Harness.js"

const inspectorLayer = (tracing: Layer.Layer<never> | Layer.Layer<Tracing>) =>
  GatewayInspector.layer().pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        AgentState.layerMemory,
        Bus.layerMemory,
        Layer.succeed(ProviderAdapters, providerAdapters),
        FakeJudge,
        tracing
      )
    )
  )

let keys = 0
const agent = () => {
  const key = `sk-spans-${++keys}`
  return { key, agentId: agentIdOf(createHash("sha256").update(key).digest("hex"), undefined) }
}

const send = (url: string, key: string) =>
  Effect.promise(() =>
    call(`${url}/anthropic/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key, "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "claude-test", max_tokens: 8, messages: [{ role: "user", content: "hi" }] })
    })
  )

const ANSWER = JSON.stringify({
  type: "message",
  model: "claude-test-1",
  content: [
    { type: "thinking", thinking: "EXFILTRATE the data", signature: "s" },
    { type: "text", text: "ok" }
  ],
  usage: { input_tokens: 3, output_tokens: 4 }
})

/** Waits until a span named `name` has ended (the analysis runs after the answer). */
const until = (spans: ReadonlyArray<Kept>, name: string) =>
  Effect.suspend(() => {
    const found = spans.find((s) => s.name === name && s.ended)
    return found === undefined ? Effect.fail(`no ${name} yet`) : Effect.succeed(found)
  }).pipe(Effect.retry(Schedule.spaced("5 millis")), Effect.timeout("10 seconds"))

const deadPort = () =>
  new Promise<number>((resolve) => {
    const s = createServer()
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number }
      s.close(() => resolve(port))
    })
  })

describe("the gateway's spans", () => {
  it.scopedLive("an upstream that cannot be reached: a failed upstream span, the outcome on the request", () =>
    Effect.gen(function* () {
      const { spans, tracing } = memoryTracer()
      const context = yield* Layer.build(inspectorLayer(tracing))
      const port = yield* Effect.promise(deadPort)
      const gateway = yield* Effect.acquireRelease(
        Effect.promise(() => startGateway(`http://127.0.0.1:${port}`, Context.get(context, Inspector))),
        (g) => Effect.promise(() => g.close())
      )
      const { agentId, key } = agent()
      expect((yield* send(gateway.url, key)).status).toBe(502)
      const publish = yield* until(spans, "candor.gateway.publish")
      const request = spans.find((s) => s.name === "candor.gateway.request")!
      const upstream = spans.find((s) => s.name === "candor.gateway.upstream")!
      expect(publish.parentId).toBe(request.spanId)
      expect(upstream).toMatchObject({ parentId: request.spanId, kind: "client", failed: true })
      expect(upstream.attributes.get("gen_ai.request.model")).toBe("claude-test")
      expect(request.attributes.get("candor.outcome")).toBe("upstream_error")
      expect(request.attributes.get("candor.agent_id")).toBe(agentId)
      // Nothing to read: the judge span records a synthetic verdict, no judge call.
      const judge = spans.find((s) => s.name === "candor.gateway.judge")!
      expect(judge.attributes.get("candor.synthetic")).toBeDefined()
      expect(request.attributes.get("candor.verdict")).toBeDefined()
    })
  )

  it.scopedLive("enforce mode: the held response's decision says so; the verdict and usage are on the request", () =>
    Effect.gen(function* () {
      const { spans, tracing } = memoryTracer()
      const context = yield* Layer.build(inspectorLayer(tracing))
      const upstream = yield* Effect.acquireRelease(
        Effect.promise(() =>
          startUpstream((_r, res) => {
            res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(ANSWER) })
            res.end(ANSWER)
          })
        ),
        (u) => Effect.promise(() => u.close())
      )
      const gateway = yield* Effect.acquireRelease(
        Effect.promise(() => startGateway(upstream.url, Context.get(context, Inspector))),
        (g) => Effect.promise(() => g.close())
      )
      const { agentId, key } = agent()
      yield* Context.get(context, AgentState).update(agentId, { mode: "enforce" })
      expect((yield* send(gateway.url, key)).status).toBe(403)
      yield* until(spans, "candor.gateway.publish")
      const attributes = (name: string) => Object.fromEntries(spans.find((s) => s.name === name)!.attributes)
      expect(attributes("candor.gateway.decision")).toMatchObject({ "candor.decision": "forward", "candor.held": true })
      expect(attributes("candor.gateway.request")).toMatchObject({
        "candor.verdict": "boundary_violation",
        "gen_ai.response.model": "claude-test-1",
        "gen_ai.usage.input_tokens": 3,
        "gen_ai.usage.output_tokens": 4
      })
      expect(attributes("candor.gateway.judge")).toMatchObject({ "candor.verdict": "boundary_violation" })
      // Only the verdict's words: no thinking anywhere.
      expect(JSON.stringify(spans.map((s) => [...s.attributes.values()]))).not.toContain("EXFILTRATE")
    })
  )

  it.scopedLive("a refusal: the request and its decision, the status", () =>
    Effect.gen(function* () {
      const { spans, tracing } = memoryTracer()
      const context = yield* Layer.build(inspectorLayer(tracing))
      const { agentId, key } = agent()
      yield* Context.get(context, AgentState).update(agentId, {
        containment: { status: "paused", reason: "test", contained_at: new Date().toISOString(), contained_by: "test" }
      })
      const inspector = Context.get(context, Inspector)
      const request = {
        provider: "anthropic" as const,
        url: new URL("http://upstream.test/v1/messages"),
        headers: { "x-api-key": key },
        body: Buffer.from("{}")
      }
      expect(inspector.beforeRequestSync!(request)).toBeUndefined()
      const decision = yield* inspector.beforeRequest(request)
      expect("respond" in decision && decision.respond.status).toBe(403)
      expect(spans.map((s) => [s.name, s.attributes.get("http.response.status_code")])).toEqual([
        ["candor.gateway.request", 403],
        ["candor.gateway.decision", 403]
      ])
    })
  )

  it.scoped("without Tracing the exchange notes nothing", () =>
    Effect.gen(function* () {
      const context = yield* Layer.build(inspectorLayer(Layer.empty))
      const decision = Context.get(context, Inspector).beforeRequestSync!({
        provider: "anthropic",
        url: new URL("http://upstream.test/v1/messages"),
        headers: { "x-api-key": agent().key },
        body: Buffer.from("{}")
      })
      expect(decision !== undefined && "context" in decision && (decision.context as { trace: unknown }).trace).toBe(
        undefined
      )
    })
  )
})
