import { describe, expect, it } from "@effect/vitest"
import { createSseParser, type SseEvent } from "../../../adapters/providers/Sse.js"
import { bytes, splitAt } from "./Helpers.js"

const parseChunks = (chunks: ReadonlyArray<Uint8Array>, maxEventChars?: number) => {
  const parser = createSseParser(maxEventChars === undefined ? {} : { maxEventChars })
  const events: Array<SseEvent> = []
  for (const chunk of chunks) events.push(...parser.push(chunk))
  events.push(...parser.end())
  return { events, oversized: parser.oversized() }
}
const parse = (text: string, maxEventChars?: number) => parseChunks([bytes(text)], maxEventChars)

describe("SSE parser", () => {
  it("reads event, data with and without the space, id, and skips comments", () => {
    const { events } = parse(": keep-alive\nevent: a\ndata: one\nid: 7\n\nevent:b\ndata:two\n\n")
    expect(events).toEqual([
      { event: "a", data: "one", id: "7" },
      { event: "b", data: "two", id: "7" } // the last event ID persists
    ])
  })

  it("strips exactly one leading space and joins multi-line data with \\n", () => {
    const { events } = parse("data:  two spaces\ndata\ndata: x\n\n")
    expect(events).toEqual([{ event: "message", data: " two spaces\n\nx", id: undefined }])
  })

  it("treats LF, CRLF and CR alike, also mixed", () => {
    const expected = [
      { event: "message", data: "a", id: undefined },
      { event: "e", data: "b\nc", id: undefined }
    ]
    for (const text of [
      "data: a\n\nevent: e\ndata: b\ndata: c\n\n",
      "data: a\r\n\r\nevent: e\r\ndata: b\r\ndata: c\r\n\r\n",
      "data: a\r\revent: e\rdata: b\rdata: c\r\r",
      "data: a\r\n\revent: e\ndata: b\r\ndata: c\r\n\n"
    ]) {
      expect(parse(text).events).toEqual(expected)
    }
  })

  it("a CR ending one chunk and an LF starting the next are one line end", () => {
    const data = bytes("data: a\r\n\r\ndata: b\r\n\r\n")
    for (let i = 1; i < data.length; i++) {
      expect(parseChunks(splitAt(data, [i])).events.map((e) => e.data)).toEqual(["a", "b"])
    }
    // every byte its own chunk
    expect(parseChunks(splitAt(data, [...data.keys()])).events.map((e) => e.data)).toEqual(["a", "b"])
  })

  it("ignores events without data, and a field with a colon in its value keeps the rest", () => {
    const { events } = parse('event: ping\n\nid: 1\n\ndata: {"a":"b:c"}\n\n')
    expect(events).toEqual([{ event: "message", data: '{"a":"b:c"}', id: "1" }])
  })

  it("drops a UTF-8 BOM at the stream start only, even when split", () => {
    const data = bytes("\uFEFFdata: x\n\n")
    expect(data[0]).toBe(0xef)
    for (let i = 0; i < 4; i++)
      expect(parseChunks(splitAt(data, [i])).events).toEqual([{ event: "message", data: "x", id: undefined }])
  })

  it("decodes a code point split across chunks at every byte", () => {
    const text = "data: 思考 🤔 emoji\n\n"
    const data = bytes(text)
    for (let i = 1; i < data.length; i++) {
      expect(parseChunks(splitAt(data, [i])).events[0]?.data).toBe("思考 🤔 emoji")
    }
  })

  it("dispatches a last event that lacks its blank line at end of stream", () => {
    expect(parse("data: a\n\ndata: b\n").events.map((e) => e.data)).toEqual(["a", "b"])
    expect(parse("data: a\n\ndata: partial").events.map((e) => e.data)).toEqual(["a", "partial"])
  })

  it("drops an event over the size limit, counts it, and keeps parsing", () => {
    const big = "x".repeat(100)
    const { events, oversized } = parse(`data: ${big}\ndata: ${big}\n\ndata: small\n\n`, 150)
    expect(events.map((e) => e.data)).toEqual(["small"])
    expect(oversized).toBe(1)
  })

  it("drops a single line over the limit that arrives in many chunks without keeping it", () => {
    const data = bytes(`data: ${"y".repeat(1000)}\n\ndata: after\n\n`)
    const chunks = splitAt(
      data,
      Array.from({ length: 100 }, (_, i) => i * 10)
    )
    const { events, oversized } = parseChunks(chunks, 200)
    expect(events.map((e) => e.data)).toEqual(["after"])
    expect(oversized).toBe(1)
  })

  it("is linear on a long stream of small chunks", () => {
    const event = `data: ${JSON.stringify({ delta: "token ".repeat(5) })}\n\n`
    const data = bytes(event.repeat(20_000))
    const started = performance.now()
    const { events } = parseChunks(
      splitAt(
        data,
        Array.from({ length: data.length / 7 }, (_, i) => i * 7)
      )
    )
    expect(events.length).toBe(20_000)
    expect(performance.now() - started).toBeLessThan(2_000)
  })
})
