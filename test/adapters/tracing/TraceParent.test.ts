import { describe, expect, it } from "@effect/vitest"
import { formatTraceParent, parseTraceParent } from "../../../adapters/tracing/TraceParent.js"

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
const SPAN = "00f067aa0ba902b7"

describe("traceparent", () => {
  it("reads the W3C example and writes it back", () => {
    const parent = parseTraceParent(`00-${TRACE}-${SPAN}-01`)
    expect(parent).toMatchObject({ _tag: "ExternalSpan", traceId: TRACE, spanId: SPAN, sampled: true })
    expect(formatTraceParent(parent!)).toBe(`00-${TRACE}-${SPAN}-01`)
    expect(parseTraceParent(`00-${TRACE}-${SPAN}-00`)?.sampled).toBe(false)
  })

  it("a later version's extra fields are ignored, version 00's are not allowed", () => {
    expect(parseTraceParent(`01-${TRACE}-${SPAN}-01-whatever`)?.traceId).toBe(TRACE)
    expect(parseTraceParent(`00-${TRACE}-${SPAN}-01-whatever`)).toBeUndefined()
  })

  it("anything malformed starts a new trace instead (undefined), never an error", () => {
    for (const bad of [
      undefined,
      ["a", "b"],
      "",
      `ff-${TRACE}-${SPAN}-01`,
      `00-${"0".repeat(32)}-${SPAN}-01`,
      `00-${TRACE}-${"0".repeat(16)}-01`,
      `00-${TRACE.toUpperCase()}-${SPAN}-01`,
      `00-${TRACE}-${SPAN}`,
      `00-${TRACE}-${SPAN}-1`,
      "x".repeat(10_000)
    ])
      expect(parseTraceParent(bad)).toBeUndefined()
  })
})
