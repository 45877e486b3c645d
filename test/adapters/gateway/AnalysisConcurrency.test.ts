/**
 * The Inspector's analysis path under a judge that answers only when the test releases it: judge
 * calls run concurrently up to the bound and never beyond, one agent's events are published in
 * response order whichever call finishes first, a full queue records its longest tenant's oldest
 * exchange unanalysed and counts it (the metric that `/metrics` shows), a newcomer beside a flooder
 * gets a slot at once, a judge past its deadline leaves an unanalysed checkpoint. The Inspector is
 * driven directly, as the proxy drives it.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as MetricLabel from "effect/MetricLabel"
import * as TestClock from "effect/TestClock"
import * as Queue from "effect/Queue"
import { createHash } from "node:crypto"
import { AnalysisModel, type AnalysisResult } from "../../../adapters/analysis/AnalysisModel.js"
import { AgentState } from "../../../adapters/bus/AgentState.js"
import { Bus } from "../../../adapters/bus/Bus.js"
import * as GatewayInspector from "../../../adapters/gateway/GatewayInspector.js"
import { Inspector } from "../../../adapters/gateway/Inspector.js"
import { exchangesUnanalysed } from "../../../adapters/metrics/GatewayMetrics.js"
import { fromSnapshot, render } from "../../../adapters/metrics/Prometheus.js"
import { FakeAdapters } from "./Fakes.js"
import * as Schema from "effect/Schema"
import { GatewayEvent } from "../../../core/schema/Event.js"

/** What the workers do with a published event. */
const decodeEvent = Schema.decodeUnknownSync(GatewayEvent)

const clear: AnalysisResult = {
  concerns: [],
  reasoning_summary: "benign",
  llm_verdict: undefined,
  analysis_model: "blocking",
  analysis_duration_ms: 1,
  thinking_tokens_original: 1,
  thinking_tokens_analyzed: 1,
  truncated: false,
  raw_analysis: "{}",
  cross_validation_warnings: [],
  values_checked: []
}

interface Call {
  readonly thinking: string
  readonly release: Deferred.Deferred<void>
}

/** A judge whose every call waits until the test releases it; `started` hands the test each call. */
const blockingJudge = Effect.gen(function* () {
  const started = yield* Queue.unbounded<Call>()
  const stats = { inFlight: 0, maxInFlight: 0 }
  const judge: AnalysisModel["Type"] = {
    name: "blocking",
    analyze: (request) =>
      Effect.gen(function* () {
        const release = yield* Deferred.make<void>()
        stats.inFlight++
        stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight)
        yield* Queue.offer(started, { thinking: request.thinking, release })
        yield* Deferred.await(release)
        stats.inFlight--
        return clear
      })
  }
  return { judge, started, stats }
})

/** A gateway Inspector over the blocking judge, with the bus's events subscribed. */
const setup = (options: Partial<GatewayInspector.GatewayInspectorOptions>) =>
  Effect.gen(function* () {
    const { judge, started, stats } = yield* blockingJudge
    const context = yield* Layer.build(
      GatewayInspector.layer(options).pipe(
        Layer.provideMerge(
          Layer.mergeAll(AgentState.layerMemory, Bus.layerMemory, FakeAdapters, Layer.succeed(AnalysisModel, judge))
        )
      )
    )
    const inspector = Context.get(context, Inspector)
    const events = yield* Context.get(context, Bus).subscribe("candor.events.")
    /** One finished, non-streaming exchange of the agent with key `key`, its thinking `think`. */
    const respond = (key: string, think: string) =>
      Effect.gen(function* () {
        const decision = yield* inspector.beforeRequest({
          provider: "anthropic",
          url: new URL("http://upstream.test/v1/messages"),
          headers: { "x-api-key": key },
          body: Buffer.from(JSON.stringify({ model: "m" }))
        })
        if (!("context" in decision)) return yield* Effect.dieMessage("request refused")
        const body = Buffer.from(JSON.stringify({ model: "m", content: [{ type: "thinking", thinking: think }] }))
        const observer = inspector.onResponse(decision.context, { status: 200, headers: {}, stream: false })
        observer.chunk(body)
        observer.end({ kind: "complete", status: 200, bytes: body.byteLength, cause: undefined })
      })
    const nextEvent = Effect.map(events.take, (message) => decodeEvent(message.payload))
    return { started, stats, respond, nextEvent }
  })

const hashOf = (text: string) => createHash("sha256").update(text).digest("hex")

/** Lets every other fiber run as far as it can (no timer involved). */
const settle = Effect.repeatN(Effect.yieldNow(), 200)

describe("GatewayInspector analysis concurrency", () => {
  it.scoped("judges up to `concurrency` exchanges at once across agents, and never more", () =>
    Effect.gen(function* () {
      const bound = 4
      const { respond, nextEvent, started, stats } = yield* setup({ concurrency: bound })
      const agents = 10
      // The responses all return while every judge call is still pending: nothing waits on analysis.
      for (let i = 0; i < agents; i++) yield* respond(`sk-agent-${i}`, `thinking of agent ${i}`)
      const running: Array<Call> = []
      for (let i = 0; i < bound; i++) running.push(yield* Queue.take(started))
      yield* settle
      expect(stats.inFlight).toBe(bound)
      expect(yield* Queue.size(started)).toBe(0) // the fifth waits for a slot

      // Each released call frees one slot for exactly one more.
      for (let i = bound; i < agents; i++) {
        yield* Deferred.succeed(running.shift()!.release, undefined)
        running.push(yield* Queue.take(started))
        yield* settle
        expect(stats.inFlight).toBe(bound)
      }
      for (const call of running) yield* Deferred.succeed(call.release, undefined)
      const published = new Set<string>()
      for (let i = 0; i < agents; i++) published.add((yield* nextEvent).checkpoint.thinking_block_hash)
      expect(published).toEqual(new Set(Array.from({ length: agents }, (_, i) => hashOf(`thinking of agent ${i}`))))
      expect(stats.maxInFlight).toBe(bound)
    })
  )

  it.scoped("publishes one agent's events in response order even when its later judge call finishes first", () =>
    Effect.gen(function* () {
      const { respond, nextEvent, started } = yield* setup({ concurrency: 3 })
      yield* respond("sk-ordered", "first response")
      yield* respond("sk-ordered", "second response")
      yield* respond("sk-other", "another agent")
      // All three calls are in flight together (each tenant its share, then the free slot).
      const calls = new Map<string, Call>()
      for (let i = 0; i < 3; i++) {
        const call = yield* Queue.take(started)
        calls.set(call.thinking, call)
      }
      expect([...calls.keys()].sort()).toEqual(["another agent", "first response", "second response"])
      // The agent's second response is judged first: it waits for its predecessor, without its slot.
      yield* Deferred.succeed(calls.get("second response")!.release, undefined)
      yield* Deferred.succeed(calls.get("another agent")!.release, undefined)
      // The other agent is not held up; the second response waits for the first.
      expect((yield* nextEvent).checkpoint.thinking_block_hash).toBe(hashOf("another agent"))
      yield* Deferred.succeed(calls.get("first response")!.release, undefined)
      expect((yield* nextEvent).checkpoint.thinking_block_hash).toBe(hashOf("first response"))
      expect((yield* nextEvent).checkpoint.thinking_block_hash).toBe(hashOf("second response"))
    })
  )

  it.scoped(
    "a full queue records its longest tenant's oldest exchange unanalysed (over_share): counted, never dropped",
    () =>
      Effect.gen(function* () {
        const { respond, nextEvent, started } = yield* setup({ concurrency: 1, queueCapacity: 2 })
        const overShare = [MetricLabel.make("reason", "over_share")]
        const before = (yield* Metric.value(Metric.taggedWithLabels(exchangesUnanalysed, overShare))).count
        yield* respond("sk-flood", "in flight")
        const first = yield* Queue.take(started) // holds the only slot
        yield* respond("sk-flood", "queued one")
        yield* respond("sk-flood", "queued two")
        yield* respond("sk-flood", "queued three")
        yield* Deferred.succeed(first.release, undefined)
        // In response order: the judged one, the one given up (no judge, the failure policy's clear), then the rest.
        const events = [yield* nextEvent]
        for (const thinking of ["queued two", "queued three"]) {
          const call = yield* Queue.take(started)
          expect(call.thinking).toBe(thinking)
          yield* Deferred.succeed(call.release, undefined)
        }
        events.push(yield* nextEvent, yield* nextEvent, yield* nextEvent)
        expect(events.map((e) => e.checkpoint.thinking_block_hash)).toEqual([
          hashOf("in flight"),
          "none",
          hashOf("queued two"),
          hashOf("queued three")
        ])
        expect(events[1]!.checkpoint).toMatchObject({
          verdict: "clear",
          synthetic: true,
          synthetic_reason: "unanalysed",
          analysis_metadata: { unanalysed_reason: "over_share", analysis_model: "none" }
        })
        expect((yield* Metric.value(Metric.taggedWithLabels(exchangesUnanalysed, overShare))).count).toBe(before + 1)
        const text = render(fromSnapshot(yield* Metric.snapshot))
        expect(text).toContain("# TYPE candor_gateway_exchanges_unanalysed_total counter")
        expect(text).toContain(`candor_gateway_exchanges_unanalysed_total{reason="over_share"} ${before + 1}\n`)
        yield* settle
        expect(yield* Queue.size(started)).toBe(0) // the one given up was never judged
      })
  )

  it.scoped("a tenant beside a flooder whose calls hang gets a judge slot at once, from the reserve", () =>
    Effect.gen(function* () {
      const { respond, nextEvent, started } = yield* setup({ concurrency: 4 })
      for (let i = 0; i < 10; i++) yield* respond("sk-flooder", `flood ${i}`)
      // The flooder alone holds three of the four slots; the fourth is kept for a newcomer.
      const flood: Array<Call> = []
      for (let i = 0; i < 3; i++) flood.push(yield* Queue.take(started))
      yield* settle
      expect(yield* Queue.size(started)).toBe(0)
      yield* respond("sk-victim", "victim thinking")
      const victim = yield* Queue.take(started)
      expect(victim.thinking).toBe("victim thinking")
      yield* Deferred.succeed(victim.release, undefined)
      expect((yield* nextEvent).checkpoint.thinking_block_hash).toBe(hashOf("victim thinking"))
      for (const call of flood) yield* Deferred.succeed(call.release, undefined)
    })
  )

  it.scoped(
    "a judge past ANALYSIS_TIMEOUT_MS: the exchange is unanalysed (judge_timeout) under the failure policy",
    () =>
      Effect.gen(function* () {
        const { respond, nextEvent, started } = yield* setup({ concurrency: 2, analysisTimeoutMs: 10_000 })
        yield* respond("sk-slow-judge", "never judged")
        yield* Queue.take(started) // the call hangs
        yield* TestClock.adjust("10 seconds")
        const event = yield* nextEvent
        expect(event.checkpoint).toMatchObject({
          verdict: "clear",
          thinking_block_hash: hashOf("never judged"),
          synthetic_reason: "unanalysed",
          analysis_metadata: { unanalysed_reason: "judge_timeout" }
        })
      })
  )
})
