/**
 * A tracer that keeps its spans in memory, behind the same `Tracing` service the OTLP exporter
 * provides: what a span was named, whose child it is, its kind and attributes, whether it ended and
 * failed. For tests of the code that records spans, without a collector.
 */
import * as Context from "effect/Context"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import { makeRecorder, Tracing } from "../../adapters/tracing/Tracing.js"

export interface Kept {
  readonly name: string
  readonly spanId: string
  readonly traceId: string
  readonly parentId: string | undefined
  readonly kind: Tracer.SpanKind
  readonly attributes: Map<string, unknown>
  failed: boolean
  ended: boolean
}

/** A tracer keeping every span it made, in memory. */
export const memoryTracer = () => {
  const spans: Array<Kept> = []
  let ids = 0
  const tracer = Tracer.make({
    span: (name, parent, _context, _links, startTime, kind) => {
      const parentSpan = Option.getOrUndefined(parent)
      const kept: Kept = {
        name,
        spanId: String(++ids).padStart(16, "0"),
        traceId: parentSpan?.traceId ?? String(ids).padStart(32, "0"),
        parentId: parentSpan?.spanId,
        kind,
        attributes: new Map(),
        failed: false,
        ended: false
      }
      spans.push(kept)
      const status = { _tag: "Started", startTime } as const
      return {
        _tag: "Span",
        name,
        spanId: kept.spanId,
        traceId: kept.traceId,
        parent,
        context: Context.empty(),
        status,
        attributes: kept.attributes,
        links: [],
        sampled: true,
        kind,
        end: (_end, exit) => {
          kept.ended = true
          kept.failed = Exit.isFailure(exit)
        },
        attribute: (key, value) => void kept.attributes.set(key, value),
        event: () => {},
        addLinks: () => {}
      }
    },
    context: (f) => f()
  })
  const recorder = makeRecorder(tracer)
  return { spans, recorder, tracing: Layer.succeed(Tracing, recorder) }
}
