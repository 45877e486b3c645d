/**
 * Incremental Server-Sent Events parser over bytes, following the WHATWG EventSource parsing rules
 * (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation).
 *
 * It runs on the gateway's side path for every streamed response, so it is linear in the input:
 * line ends are found with `indexOf` over each new chunk only, and a line that spans chunks is kept
 * as a list of pieces and joined once, when its end arrives (no re-scanning, no quadratic concat).
 *
 * Bounded: an event whose data grows past `maxEventChars` is dropped (counted in `oversized`), and
 * nothing of it is kept while the rest of it streams past.
 */

export interface SseEvent {
  /** The `event:` field, `"message"` when absent (as EventSource does). */
  readonly event: string
  /** The `data:` lines joined with `\n`. */
  readonly data: string
  /** The last event ID seen so far (it persists across events, per the HTML event-stream format), if any. */
  readonly id: string | undefined
}

export interface SseParser {
  /** Feed the next bytes; returns the events completed by them. */
  readonly push: (chunk: Uint8Array) => ReadonlyArray<SseEvent>
  /**
   * The stream ended. Unlike EventSource, which discards an event not followed by a blank line,
   * this dispatches it: a truncated stream's last complete `data:` line is still evidence of what
   * the model said (a payload cut mid-line fails to parse downstream and is counted there).
   */
  readonly end: () => ReadonlyArray<SseEvent>
  /** How many events were dropped for exceeding the size limit. */
  readonly oversized: () => number
}

/** 8 Mi UTF-16 code units, about 8 MiB of ASCII JSON: far above any real event, well below trouble. */
export const DEFAULT_MAX_EVENT_CHARS = 8 * 1024 * 1024

export const createSseParser = (options: { readonly maxEventChars?: number } = {}): SseParser => {
  const maxEventChars = options.maxEventChars ?? DEFAULT_MAX_EVENT_CHARS
  // The default decoder removes one BOM at the start of the stream, as the SSE spec requires, and
  // with `stream: true` holds back a code point split across chunks until its last byte arrives.
  const decoder = new TextDecoder("utf-8")

  let pieces: Array<string> = [] // the current, unfinished line
  let piecesLength = 0
  let skipLeadingLF = false // the previous chunk ended in `\r`: a `\n` first in the next one is the same line end
  let discardingLine = false // the current line already exceeded the limit: drop it up to its end

  let data: Array<string> = []
  let dataLength = 0
  let eventType = ""
  let lastId: string | undefined
  let dropping = false // the current event exceeded the limit: ignore its fields until the blank line
  let oversized = 0

  const dispatch = (out: Array<SseEvent>): void => {
    if (dropping) {
      oversized++
    } else if (data.length > 0) {
      out.push({ event: eventType === "" ? "message" : eventType, data: data.join("\n"), id: lastId })
    }
    data = []
    dataLength = 0
    eventType = ""
    dropping = false
  }

  const processLine = (line: string, out: Array<SseEvent>): void => {
    if (line.length === 0) return dispatch(out)
    if (line.charCodeAt(0) === 58 /* ":" comment */ || dropping) return
    const colon = line.indexOf(":")
    const field = colon < 0 ? line : line.slice(0, colon)
    let value = colon < 0 ? "" : line.slice(colon + 1)
    if (value.charCodeAt(0) === 32 /* one optional space */) value = value.slice(1)
    switch (field) {
      case "data":
        dataLength += value.length + 1
        if (dataLength > maxEventChars) {
          dropping = true
          data = []
          dataLength = 0
        } else {
          data.push(value)
        }
        return
      case "event":
        eventType = value
        return
      case "id":
        if (!value.includes("\0")) lastId = value
        return
      default:
        return // `retry` and unknown fields: nothing the gateway needs
    }
  }

  const feed = (text: string, out: Array<SseEvent>): void => {
    let pos = 0
    if (skipLeadingLF && text.length > 0) {
      if (text.charCodeAt(0) === 10) pos = 1
      skipLeadingLF = false
    }
    // Positions of the next `\n` and `\r`, refreshed only once passed, so each is scanned once.
    let nextLF = text.indexOf("\n", pos)
    let nextCR = text.indexOf("\r", pos)
    while (nextLF >= 0 || nextCR >= 0) {
      const end = nextLF < 0 ? nextCR : nextCR < 0 ? nextLF : Math.min(nextLF, nextCR)
      const tail = text.slice(pos, end)
      const line = piecesLength === 0 ? tail : pieces.join("") + tail
      const wasDiscarding = discardingLine
      pieces = []
      piecesLength = 0
      discardingLine = false
      if (!wasDiscarding) processLine(line, out)
      pos = end + 1
      if (end === nextCR) {
        if (pos === text.length) skipLeadingLF = true
        else if (text.charCodeAt(pos) === 10) pos++
      }
      if (nextLF >= 0 && nextLF < pos) nextLF = text.indexOf("\n", pos)
      if (nextCR >= 0 && nextCR < pos) nextCR = text.indexOf("\r", pos)
    }
    if (pos < text.length && !discardingLine) {
      const rest = text.slice(pos)
      piecesLength += rest.length
      if (piecesLength + dataLength > maxEventChars) {
        // A single line larger than the limit: forget it and the event it belongs to.
        pieces = []
        piecesLength = 0
        discardingLine = true
        dropping = true
        data = []
        dataLength = 0
      } else {
        pieces.push(rest)
      }
    }
  }

  return {
    push: (chunk) => {
      const out: Array<SseEvent> = []
      feed(decoder.decode(chunk, { stream: true }), out)
      return out
    },
    end: () => {
      const out: Array<SseEvent> = []
      feed(decoder.decode(), out)
      if (piecesLength > 0 && !discardingLine) processLine(pieces.join(""), out)
      pieces = []
      piecesLength = 0
      discardingLine = false
      if (data.length > 0 || dropping) dispatch(out)
      return out
    },
    oversized: () => oversized
  }
}
