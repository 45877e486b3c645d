/**
 * Traces (docs/tracing.md): the spans of every hop of a request, exported over OTLP through
 * `@effect/opentelemetry`'s exporter (an HttpClient POST of batched spans, no OpenTelemetry SDK).
 *
 * The tracer is a service of its own, present only when OTEL_EXPORTER_OTLP_ENDPOINT is set, rather
 * than the fibers' tracer (`Layer.setTracer`): installed there it would trace every SQL statement,
 * API request and background poll, and the hops Candor promises would drown in them. Code on a hop
 * asks for `Tracing` once, when its layer is built; without it, it builds nothing, generates no id
 * and takes no timestamp it would not take anyway. With it, spans are built by hand from
 * timestamps: the gateway's synchronous fast path runs no fiber to hang an `Effect.withSpan` on, and
 * a batch's consume, attest and commit are one pass over many events, each with its own trace.
 *
 * Attributes are chosen by the callers, and never carry prompts, thinking or answer text, keys or
 * header values: a failed span says what kind of failure it was, never an error's message.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as OtlpSerialization from "@effect/opentelemetry/OtlpSerialization"
import * as OtlpTracer from "@effect/opentelemetry/OtlpTracer"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as Tracer from "effect/Tracer"

/** OTEL_EXPORTER_OTLP_PROTOCOL values Candor exports with (gRPC is not offered). */
export type OtlpProtocol = "http/protobuf" | "http/json"

export interface TracingOptions {
  /** Where spans are POSTed: the traces endpoint itself (`…/v1/traces`). */
  readonly url: string
  readonly protocol: OtlpProtocol
  /** The resource's `service.name`. */
  readonly serviceName: string
  readonly serviceVersion?: string | undefined
  /** Further resource attributes (the process's roles). */
  readonly attributes?: Readonly<Record<string, string>> | undefined
  /** How often buffered spans are sent (OTEL_BSP_SCHEDULE_DELAY). */
  readonly exportIntervalMs: number
  /** Headers of every export (OTEL_EXPORTER_OTLP_HEADERS: a collector's credentials). */
  readonly headers?: Readonly<Record<string, Redacted.Redacted>> | undefined
}

export interface SpanStart {
  readonly parent?: Tracer.AnySpan | undefined
  readonly kind?: Tracer.SpanKind | undefined
  /** Epoch nanoseconds (`epochNs` of a `process.hrtime.bigint()` reading, or `nowNs()`). */
  readonly startNs: bigint
  readonly attributes?: Readonly<Record<string, unknown>> | undefined
}

export interface SpanRecorder {
  /** Starts a span at `startNs` (possibly in the past): end it with `end`. */
  readonly start: (name: string, options: SpanStart) => Tracer.Span
  /** Ends a span at `endNs`; with `failure` (a kind such as `timeout`, never a message) its status is an error. */
  readonly end: (span: Tracer.Span, endNs: bigint, failure?: string | undefined) => void
  /** A span already over: started and ended at once. */
  readonly record: (
    name: string,
    options: SpanStart & { readonly endNs: bigint; readonly failure?: string | undefined }
  ) => Tracer.Span
  /** Epoch nanoseconds of a `process.hrtime.bigint()` reading (the clock the gateway already reads). */
  readonly epochNs: (hrtime: bigint) => bigint
  /** Epoch nanoseconds now. */
  readonly nowNs: () => bigint
}

/** Present when traces are exported; absent (the default), nothing is traced. */
export class Tracing extends Context.Tag("candor/adapters/tracing/Tracing")<Tracing, SpanRecorder>() {}

/** The recorder when the process exports traces, else `undefined`: read once, when a layer is built. */
export const tracingOption: Effect.Effect<SpanRecorder | undefined> = Effect.map(
  Effect.serviceOption(Tracing),
  Option.getOrUndefined
)

/** A failed span's error: its kind only (OtlpTracer exports the message as the status and exception event). */
class SpanFailure extends Error {
  override readonly name = "SpanFailure"
  constructor(kind: string) {
    super(kind)
    this.stack = `SpanFailure: ${kind}`
  }
}

/** A recorder over any Effect tracer (the OTLP one in production; tests may pass their own). */
export const makeRecorder = (tracer: Tracer.Tracer): SpanRecorder => {
  // process.hrtime is monotonic with no epoch: one offset, read once, turns its readings into epoch time.
  const offset = BigInt(Date.now()) * 1_000_000n - process.hrtime.bigint()
  const epochNs = (hrtime: bigint) => hrtime + offset
  const start = (name: string, options: SpanStart): Tracer.Span => {
    const span = tracer.span(
      name,
      options.parent === undefined ? Option.none() : Option.some(options.parent),
      Context.empty(),
      [],
      options.startNs,
      options.kind ?? "internal"
    )
    if (options.attributes !== undefined)
      for (const key in options.attributes) {
        const value = options.attributes[key]
        if (value !== undefined) span.attribute(key, value)
      }
    return span
  }
  const end = (span: Tracer.Span, endNs: bigint, failure?: string | undefined) =>
    span.end(endNs, failure === undefined ? Exit.void : Exit.fail(new SpanFailure(failure)))
  return {
    start,
    end,
    record: (name, options) => {
      const span = start(name, options)
      end(span, options.endNs < options.startNs ? options.startNs : options.endNs, options.failure)
      return span
    },
    epochNs,
    nowNs: () => epochNs(process.hrtime.bigint())
  }
}

/**
 * Exports over OTLP/HTTP for the life of the layer; its release sends what is still buffered
 * (within a few seconds), so the last spans of a stopping process are not lost.
 */
export const layer = (options: TracingOptions): Layer.Layer<Tracing> =>
  Layer.scoped(
    Tracing,
    Effect.map(
      OtlpTracer.make({
        url: options.url,
        resource: {
          serviceName: options.serviceName,
          serviceVersion: options.serviceVersion,
          attributes: { ...options.attributes }
        },
        headers:
          options.headers === undefined
            ? undefined
            : Object.fromEntries(Object.entries(options.headers).map(([name, value]) => [name, Redacted.value(value)])),
        exportInterval: Duration.millis(options.exportIntervalMs),
        shutdownTimeout: Duration.seconds(3)
      }),
      makeRecorder
    )
  ).pipe(
    Layer.provide(options.protocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf),
    Layer.provide(FetchHttpClient.layer)
  )
