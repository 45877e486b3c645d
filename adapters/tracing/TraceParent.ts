/**
 * The W3C Trace Context `traceparent` header (https://www.w3.org/TR/trace-context/): how a span's
 * context crosses a process or thread boundary. The gateway reads the agent's (its spans then
 * continue the agent's trace) and the bus carries the gateway's beside each event, outside the
 * event's data (adapters/bus/BusContract.ts `PublishOptions.traceparent`), so that the workers'
 * spans join the request's trace without a byte of the signed, recorded event changing.
 */
import * as Tracer from "effect/Tracer"

/** The header's name, as HTTP and NATS headers carry it. */
export const TRACEPARENT = "traceparent"

const PATTERN = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/
const ZERO_TRACE = "0".repeat(32)
const ZERO_SPAN = "0".repeat(16)

/**
 * The parent a `traceparent` names, or `undefined` when the value is absent or malformed (a bad
 * header starts a new trace, as the specification says, rather than failing anything). Version
 * `ff` and all-zero ids are invalid; a later version's extra fields are ignored.
 */
export const parseTraceParent = (value: unknown): Tracer.ExternalSpan | undefined => {
  if (typeof value !== "string" || value.length > 256) return undefined
  const match = PATTERN.exec(value.trim())
  if (match === null) return undefined
  const [, version, traceId, spanId, flags, rest] = match
  if (version === "ff" || (version === "00" && rest !== undefined)) return undefined
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined
  return Tracer.externalSpan({ traceId: traceId!, spanId: spanId!, sampled: (parseInt(flags!, 16) & 1) === 1 })
}

/** The header naming `span` as the parent of what follows (always sampled: Candor records every span it makes). */
export const formatTraceParent = (span: { readonly traceId: string; readonly spanId: string }): string =>
  `00-${span.traceId}-${span.spanId}-01`
