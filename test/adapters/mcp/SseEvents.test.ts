/**
 * The SSE splitter (adapters/mcp/SseEvents.ts): events come out whole, byte for byte, whatever the
 * chunking and line ends; one over the bound comes out as `undefined`, and the next is read again.
 */
import { describe, expect, it } from "vitest"
import { messageEvent, sseEventSplitter } from "../../../adapters/mcp/SseEvents.js"
import { sseReader } from "../../../adapters/mcp/MessageReader.js"

const splitAll = (stream: string, chunk: number, max = 1024) => {
  const splitter = sseEventSplitter(max)
  const bytes = Buffer.from(stream)
  const out: Array<string | undefined> = []
  for (let i = 0; i < bytes.length; i += chunk)
    for (const event of splitter.push(bytes.subarray(i, i + chunk))) out.push(event?.toString())
  const rest = splitter.end()
  return { out, rest: rest?.toString() }
}

describe("sseEventSplitter", () => {
  it("splits on blank lines (LF, CR, CRLF), at any chunking, losing no byte", () => {
    const stream = 'event: message\ndata: {"id":1}\n\ndata: a\r\n\r\ndata: b\r\rid: 3\n'
    for (const chunk of [1, 2, 3, 7, 100]) {
      const { out, rest } = splitAll(stream, chunk)
      expect(out.slice(0, 3)).toEqual(['event: message\ndata: {"id":1}\n\n', "data: a\r\n\r", "\ndata: b\r\r"])
      expect(out.join("") + (rest ?? "")).toBe(stream)
      expect(rest).toBe("id: 3\n")
    }
  })

  it("an event over the bound is undefined; the next one is read", () => {
    const { out } = splitAll(`data: ${"x".repeat(100)}\n\ndata: small\n\n`, 5, 32)
    expect(out).toEqual([undefined, "data: small\n\n"])
  })
})

describe("messageEvent", () => {
  it("frames a message as one event that an SSE reader gives back as the same JSON, pretty-printed or not", () => {
    for (const json of [
      '{"jsonrpc":"2.0","id":1,"result":{}}',
      '{\r\n  "jsonrpc": "2.0",\n  "id": 2,\r  "result": {}\n}'
    ]) {
      const messages: Array<unknown> = []
      const reader = sseReader(1024, { onMessage: (m) => void messages.push(m), onUnreadable: () => {} })
      const event = messageEvent(Buffer.from(json))
      expect(event.toString().startsWith("event: message\ndata: ")).toBe(true)
      expect(event.toString().endsWith("\n\n")).toBe(true)
      reader.push(event)
      reader.end()
      expect(messages).toEqual([JSON.parse(json)])
    }
  })
})
