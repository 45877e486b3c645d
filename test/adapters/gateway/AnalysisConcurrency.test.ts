/**
 * The Inspector's analysis path under a judge that answers only when the test releases it: judge
 * calls run concurrently up to the bound and never beyond, one agent's events are published in
 * response order whichever call finishes first, and a full queue drops and counts (the metric that
 * `/metrics` shows). The Inspector is driven directly, as the proxy drives it; no timers.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Queue from "effect/Queue"
import { createHash } from "node:crypto"
import { AnalysisModel, type AnalysisResult } from "../../../adapters/analysis/AnalysisModel.js"
import { AgentState } from "../../../adapters/bus/AgentState.js"
import { Bus } from "../../../adapters/bus/Bus.js"
import * as GatewayInspector from "../../../adapters/gateway/GatewayInspector.js"
import { Inspector } from "../../../adapters/gateway/Inspector.js"
import { exchangesDropped } from "../../../adapters/metrics/GatewayMetrics.js"
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
      const { respond, nextEvent, started } = yield* setup({ concurrency: 2 })
      yield* respond("sk-ordered", "first response")
      yield* respond("sk-ordered", "second response")
      yield* respond("sk-other", "another agent")
      // Both of the agent's calls are in flight together; the second is answered first.
      const first = yield* Queue.take(started)
      const second = yield* Queue.take(started)
      expect([first.thinking, second.thinking].sort()).toEqual(["first response", "second response"])
      const [earlier, later] = first.thinking === "first response" ? [first, second] : [second, first]
      yield* Deferred.succeed(later.release, undefined)
      // Judged, it waits for its predecessor without its judge slot: the other agent's call gets it.
      const other = yield* Queue.take(started)
      expect(other.thinking).toBe("another agent")
      yield* Deferred.succeed(other.release, undefined)
      // The other agent is not held up; the second response waits for the first.
      expect((yield* nextEvent).checkpoint.thinking_block_hash).toBe(hashOf("another agent"))
      yield* Deferred.succeed(earlier.release, undefined)
      expect((yield* nextEvent).checkpoint.thinking_block_hash).toBe(hashOf("first response"))
      expect((yield* nextEvent).checkpoint.thinking_block_hash).toBe(hashOf("second response"))
    })
  )

  it.scoped("drops and counts exchanges once the queue is full, and /metrics shows the count", () =>
    Effect.gen(function* () {
      const { respond, nextEvent, started } = yield* setup({ concurrency: 1, queueCapacity: 2 })
      const before = (yield* Metric.value(exchangesDropped)).count
      yield* respond("sk-flood", "in flight")
      const first = yield* Queue.take(started) // holds the only slot
      yield* respond("sk-flood", "queued one")
      yield* respond("sk-flood", "queued two")
      yield* respond("sk-flood", "dropped")
      expect((yield* Metric.value(exchangesDropped)).count).toBe(before + 1)
      const text = render(fromSnapshot(yield* Metric.snapshot))
      expect(text).toContain("# TYPE candor_gateway_exchanges_dropped_total counter")
      expect(text).toContain(`candor_gateway_exchanges_dropped_total ${before + 1}\n`)

      yield* Deferred.succeed(first.release, undefined)
      for (const thinking of ["queued one", "queued two"]) {
        const call = yield* Queue.take(started)
        expect(call.thinking).toBe(thinking)
        yield* Deferred.succeed(call.release, undefined)
      }
      const hashes = [yield* nextEvent, yield* nextEvent, yield* nextEvent].map((e) => e.checkpoint.thinking_block_hash)
      expect(hashes).toEqual(["in flight", "queued one", "queued two"].map(hashOf))
      yield* settle
      expect(yield* Queue.size(started)).toBe(0) // the dropped one was never judged
    })
  )
})
