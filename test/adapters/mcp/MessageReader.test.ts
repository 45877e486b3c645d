/**
 * JSON-RPC messages read on the side of an answer (adapters/mcp/MessageReader.ts): server-sent events
 * split anywhere (inside a line, between CR and LF, inside a UTF-8 character), several data lines,
 * and the bound: a message past it is unreadable, never half-parsed, and the stream goes on.
 */
import { describe, expect, it } from "vitest"
import { jsonReader, sseReader } from "../../../adapters/mcp/MessageReader.js"

const collect = () => {
  const messages: Array<unknown> = []
  const unreadable: Array<string> = []
  return {
    messages,
    unreadable,
    sink: { onMessage: (m: unknown) => messages.push(m), onUnreadable: (r: string) => unreadable.push(r) }
  }
}

describe("MessageReader", () => {
  it("reads SSE events whatever the chunking, CRLF and multi-byte characters included", () => {
    const text =
      'event: message\r\nid: 1\r\ndata: {"id":1,"result":{"t":"é"}}\r\n\r\n: comment\n\ndata: {"id":2,\ndata: "result":2}\n\n'
    const bytes = Buffer.from(text, "utf8")
    for (let size = 1; size <= bytes.length; size++) {
      const { messages, sink, unreadable } = collect()
      const reader = sseReader(1024, sink)
      for (let i = 0; i < bytes.length; i += size) reader.push(bytes.subarray(i, i + size))
      reader.end()
      expect(messages, `chunks of ${size}`).toEqual([
        { id: 1, result: { t: "é" } },
        { id: 2, result: 2 }
      ])
      expect(unreadable).toEqual([])
    }
  })

  it("an event past the bound is unreadable, and the next one is read", () => {
    const { messages, sink, unreadable } = collect()
    const reader = sseReader(64, sink)
    reader.push(Buffer.from(`data: {"id":1,"result":"${"x".repeat(500)}"}\n\ndata: {"id":2,"result":0}\n\n`))
    reader.end()
    expect(unreadable).toEqual(["too_large"])
    expect(messages).toEqual([{ id: 2, result: 0 }])
  })

  it("a JSON body is parsed at its end; past the bound or not JSON, unreadable", () => {
    const ok = collect()
    const reader = jsonReader(1024, ok.sink)
    reader.push(Buffer.from('{"id":1,'))
    reader.push(Buffer.from('"result":true}'))
    reader.end()
    expect(ok.messages).toEqual([{ id: 1, result: true }])
    const big = collect()
    const over = jsonReader(8, big.sink)
    over.push(Buffer.from('{"id":1,"result":true}'))
    over.end()
    expect(big.unreadable).toEqual(["too_large"])
    const bad = collect()
    const broken = jsonReader(1024, bad.sink)
    broken.push(Buffer.from("{nope"))
    broken.end()
    expect(bad.unreadable).toEqual(["not_json"])
  })
})
