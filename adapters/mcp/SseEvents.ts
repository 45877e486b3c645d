/**
 * Splits a server-sent event stream into its events' raw bytes (WHATWG HTML, "event stream
 * interpretation": lines end in LF, CR or CRLF; a blank line ends an event), so the MCP proxy can
 * hold the one event that answers a `tools/call` until its result is judged and pass every other
 * event as it comes, byte for byte. Bounded: an event longer than `maxBytes` is not kept; its bytes
 * are dropped and `onEvent` receives `undefined` for it when it ends (the caller decides what an
 * unreadable event means). Linear: each byte is looked at once.
 */

export interface SseEventSplitter {
  /** The complete events in this chunk, in order: raw bytes, or `undefined` for one over the bound. */
  readonly push: (chunk: Uint8Array) => ReadonlyArray<Buffer | undefined>
  /** What is left of an unfinished event at the stream's end (passed on as it is: it dispatches nothing). */
  readonly end: () => Buffer | undefined
}

const LF = 10
const CR = 13

export const sseEventSplitter = (maxBytes: number): SseEventSplitter => {
  let held: Array<Buffer> = []
  let size = 0
  let over = false
  /** Whether the previous byte ended a line (the next line end then ends the event). */
  let atLineStart = true
  let lastWasCr = false

  const take = (part: Buffer) => {
    if (over) return
    if (size + part.byteLength > maxBytes) {
      over = true
      held = []
      return
    }
    held.push(part)
    size += part.byteLength
  }

  const finish = (): Buffer | undefined => {
    const event = over ? undefined : Buffer.concat(held, size)
    held = []
    size = 0
    over = false
    return event
  }

  return {
    push: (chunk) => {
      const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
      const events: Array<Buffer | undefined> = []
      let start = 0
      for (let i = 0; i < bytes.length; i++) {
        const c = bytes[i]!
        if (c !== LF && c !== CR) {
          atLineStart = false
          lastWasCr = false
          continue
        }
        if (c === LF && lastWasCr) {
          // The LF of a CRLF: its line has ended already.
          lastWasCr = false
          continue
        }
        lastWasCr = c === CR
        if (!atLineStart) {
          atLineStart = true
          continue
        }
        // A blank line: the event ends with this byte (a CRLF's LF, if any, starts the next one,
        // where it is an empty line that dispatches nothing).
        take(bytes.subarray(start, i + 1))
        start = i + 1
        events.push(finish())
      }
      if (start < bytes.length) take(bytes.subarray(start))
      return events
    },
    end: () => {
      const rest = finish()
      return rest === undefined || rest.byteLength === 0 ? undefined : rest
    }
  }
}

/**
 * One JSON-RPC message as an SSE `message` event, the way Streamable HTTP servers send them: a JSON
 * text that spans lines (a pretty-printed answer) becomes one `data:` line per line, which the
 * client joins back with LF (WHATWG HTML, "dispatch the event"), so the message is the same JSON.
 */
export const messageEvent = (json: Buffer): Buffer => {
  const text = json.toString("utf8")
  const lines = /[\r\n]/.test(text) ? text.split(/\r\n|\r|\n/).join("\ndata: ") : text
  return Buffer.from(`event: message\ndata: ${lines}\n\n`)
}
