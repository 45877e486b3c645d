/**
 * Reads JSON-RPC messages out of an MCP server's answer on the side, while its bytes go to the
 * client unchanged (docs/mcp.md): a JSON body, or server-sent events whose `data` lines each carry
 * one message. Bounded memory: a message (a JSON body, one event's data) larger than `maxBytes` is
 * not kept; it is counted as unreadable (`onUnreadable`) and the stream goes on. Linear in the bytes:
 * each byte is looked at once for line ends, and a message is parsed once, when complete.
 * The proxy makes a reader only for an answer it has a reason to read (a `tools/list` to pin, a
 * `tools/call` whose result a later checkpoint may judge); every other answer is passed unread.
 */
import { StringDecoder } from "node:string_decoder"

export interface MessageSink {
  /** A complete message, parsed (any JSON value). */
  readonly onMessage: (message: unknown) => void
  /** A message that could not be read: over the size bound, or not JSON. */
  readonly onUnreadable: (reason: "too_large" | "not_json") => void
}

export interface MessageReader {
  readonly push: (chunk: Uint8Array) => void
  readonly end: () => void
}

const parse = (text: string, sink: MessageSink) => {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return sink.onUnreadable("not_json")
  }
  sink.onMessage(value)
}

/** A JSON body: kept whole up to `maxBytes`, parsed at its end. */
export const jsonReader = (maxBytes: number, sink: MessageSink): MessageReader => {
  const chunks: Array<Buffer> = []
  let size = 0
  let over = false
  return {
    push: (chunk) => {
      if (over) return
      size += chunk.byteLength
      if (size > maxBytes) {
        over = true
        chunks.length = 0
        return
      }
      chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength))
    },
    end: () => {
      if (over) return sink.onUnreadable("too_large")
      if (size === 0) return
      parse(Buffer.concat(chunks, size).toString("utf8"), sink)
    }
  }
}

/**
 * Server-sent events (WHATWG HTML, "event stream interpretation"): lines end in LF, CR or CRLF; a
 * `data:` field's value (one leading space removed) joins the event's data with LF; a blank line ends
 * the event. Other fields (`id`, `event`, `retry`) and comments are not needed here.
 */
export const sseReader = (maxBytes: number, sink: MessageSink): MessageReader => {
  const decoder = new StringDecoder("utf8")
  let line = ""
  let lineOver = false
  let data: Array<string> = []
  let dataSize = 0
  let dataOver = false
  let hasData = false
  let lastWasCr = false

  const dispatch = () => {
    if (dataOver) sink.onUnreadable("too_large")
    else if (hasData) parse(data.join("\n"), sink)
    data = []
    dataSize = 0
    dataOver = false
    hasData = false
  }

  const endLine = () => {
    if (lineOver) {
      // A line past the bound: if it was data, the event is unreadable; anything else is dropped.
      dataOver = dataOver || line.startsWith("data")
    } else if (line === "") dispatch()
    else if (line.startsWith("data")) {
      const colon = line.indexOf(":")
      const name = colon < 0 ? line : line.slice(0, colon)
      if (name === "data") {
        let value = colon < 0 ? "" : line.slice(colon + 1)
        if (value.startsWith(" ")) value = value.slice(1)
        hasData = true
        dataSize += value.length + 1
        if (dataSize > maxBytes) {
          dataOver = true
          data = []
        } else if (!dataOver) data.push(value)
      }
    }
    line = ""
    lineOver = false
  }

  const feed = (text: string) => {
    let start = 0
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (c !== 10 && c !== 13) continue
      if (c === 10 && lastWasCr && i === 0) {
        // The LF of a CRLF whose CR ended the previous chunk: that line has ended already.
        lastWasCr = false
        start = 1
        continue
      }
      append(text.slice(start, i))
      endLine()
      lastWasCr = false
      if (c === 13) {
        if (i + 1 === text.length) lastWasCr = true
        else if (text.charCodeAt(i + 1) === 10) i++
      }
      start = i + 1
    }
    if (start < text.length) {
      lastWasCr = false
      append(text.slice(start))
    }
  }

  const append = (part: string) => {
    if (lineOver) return
    if (line.length + part.length > maxBytes + 16) {
      lineOver = true
      // Its first characters only: enough to tell a data line (its event is then unreadable).
      line = (line + part.slice(0, 16)).slice(0, 16)
      return
    }
    line += part
  }

  return {
    push: (chunk) => feed(decoder.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength))),
    end: () => {
      feed(decoder.end())
      // A stream cut without its final blank line: the event is incomplete, not dispatched (as browsers do).
    }
  }
}
