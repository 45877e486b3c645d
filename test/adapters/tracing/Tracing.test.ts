/**
 * The exporter as a collector sees it: spans recorded through `Tracing` arrive at a loopback OTLP
 * receiver in the encoding asked for, on `/v1/traces`, with their parents, times, attributes and
 * resource; every OTEL_BSP_SCHEDULE_DELAY, and what is left when the layer closes.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import { type OtlpProtocol, Tracing, layer } from "../../../adapters/tracing/Tracing.js"
import { parseTraceParent } from "../../../adapters/tracing/TraceParent.js"
import { startOtlpReceiver } from "../../support/OtlpReceiver.js"

const receiver = Effect.acquireRelease(Effect.promise(startOtlpReceiver), (r) => Effect.promise(() => r.close()))

const tracingTo = (endpoint: string, protocol: OtlpProtocol, exportIntervalMs = 60_000) =>
  layer({
    url: `${endpoint}/v1/traces`,
    protocol,
    serviceName: "candor-test",
    serviceVersion: "9.9.9",
    attributes: { "candor.roles": "gateway" },
    exportIntervalMs,
    headers: { authorization: Redacted.make("Bearer collector-token") }
  })

/** A parent, a child of it under an outside parent's trace, one failed: then the layer closes (a flush). */
const recordSome = Effect.gen(function* () {
  const tracing = yield* Tracing
  const outside = parseTraceParent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
  const start = tracing.nowNs()
  const root = tracing.start("root", { parent: outside, kind: "server", startNs: start, attributes: { n: 3 } })
  tracing.record("child", {
    parent: root,
    startNs: start + 1_000n,
    endNs: start + 2_000n,
    failure: "timeout",
    attributes: { "gen_ai.request.model": "m", skipped: undefined, ok: true }
  })
  tracing.end(root, start + 5_000n)
})

describe("Tracing over OTLP/HTTP", () => {
  for (const [protocol, contentType] of [
    ["http/json", "application/json"],
    ["http/protobuf", "application/x-protobuf"]
  ] as const) {
    it.scopedLive(`${protocol}: spans, parents, times, attributes and resource reach the collector`, () =>
      Effect.gen(function* () {
        const otlp = yield* receiver
        yield* Effect.scoped(
          Layer.build(tracingTo(otlp.endpoint, protocol)).pipe(Effect.flatMap((ctx) => Effect.provide(recordSome, ctx)))
        )
        expect(otlp.exports.map((e) => [e.path, e.contentType.split(";")[0]])).toEqual([["/v1/traces", contentType]])
        const spans = otlp.spans()
        const root = spans.find((s) => s.name === "root")!
        const child = spans.find((s) => s.name === "child")!
        expect(root).toMatchObject({
          traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
          parentSpanId: "00f067aa0ba902b7",
          kind: 2,
          attributes: { n: 3 },
          resource: { "service.name": "candor-test", "service.version": "9.9.9", "candor.roles": "gateway" },
          status: 1
        })
        expect(root.endNs - root.startNs).toBe(5_000n)
        expect(child).toMatchObject({ traceId: root.traceId, parentSpanId: root.spanId, kind: 1, status: 2 })
        // (OtlpTracer adds labels of its own to a failed span.)
        expect(child.attributes).toMatchObject({ "gen_ai.request.model": "m", ok: true })
        expect(child.attributes).not.toHaveProperty("skipped")
        expect(child.startNs - root.startNs).toBe(1_000n)
        // The start is the wall clock's, in nanoseconds.
        expect(Number(root.startNs / 1_000_000n)).toBeGreaterThan(Date.now() - 60_000)
      })
    )
  }

  it.scopedLive("exports every OTEL_BSP_SCHEDULE_DELAY while running, not only at the end", () =>
    Effect.gen(function* () {
      const otlp = yield* receiver
      const ctx = yield* Layer.build(tracingTo(otlp.endpoint, "http/json", 20))
      yield* Effect.provide(recordSome, ctx)
      yield* Effect.sync(() => otlp.spans().length).pipe(
        Effect.repeat({ until: (n) => n === 2, schedule: Schedule.spaced("10 millis") }),
        Effect.timeout("10 seconds")
      )
      expect(
        otlp
          .spans()
          .map((s) => s.name)
          .sort()
      ).toEqual(["child", "root"])
    })
  )
})
