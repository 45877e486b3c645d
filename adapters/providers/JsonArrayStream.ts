/**
 * Incremental reader of a streamed JSON array of objects (`[{…},\n{…}\n]`): what Gemini's
 * `streamGenerateContent` sends without `?alt=sse`. Each top-level element is handed out as soon as
 * its closing brace arrives. A top-level object (an error body instead of an array) is handed out
 * the same way.
 *
 * It tracks only string/escape state and brace depth, one character at a time over the decoded
 * text (linear; no re-parse of earlier input). Elements over the size limit are dropped and counted.
 */
import { parseJson } from "./Extraction.js"
import { DEFAULT_MAX_EVENT_CHARS } from "./Sse.js"

export interface JsonArrayReader {
  readonly push: (chunk: Uint8Array) => void
  readonly end: () => void
  /** The closing `]` of the top-level array (or `}` of a top-level object) was seen. */
  readonly closed: () => boolean
  readonly malformed: () => number
  readonly oversized: () => number
}

export const jsonArrayReader = (
  onElement: (value: unknown) => void,
  options: { readonly maxElementChars?: number } = {}
): JsonArrayReader => {
  const maxElementChars = options.maxElementChars ?? DEFAULT_MAX_EVENT_CHARS
  const decoder = new TextDecoder("utf-8")
  let depth = 0 // brackets and braces open, top level included
  let elementDepth = -1 // the depth at which an element starts: 1 inside `[`, 0 for a bare object
  let inString = false
  let escaped = false
  let pieces: Array<string> = [] // the current element, when one is open
  let length = 0
  let capturing = false
  let dropping = false
  let closed = false
  let malformed = 0
  let oversized = 0

  const emit = (text: string): void => {
    const parsed = parseJson(text)
    if (parsed.ok) onElement(parsed.value)
    else malformed++
  }

  const feed = (text: string): void => {
    let start = capturing ? 0 : -1 // where the open element's text begins in this chunk
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (inString) {
        if (escaped) escaped = false
        else if (c === 92 /* \ */) escaped = true
        else if (c === 34 /* " */) inString = false
        continue
      }
      if (c === 34) {
        inString = true
      } else if (c === 123 /* { */ || c === 91 /* [ */) {
        if (elementDepth < 0) elementDepth = c === 91 ? 1 : 0
        if (depth === elementDepth && c === 123) {
          capturing = true
          dropping = false
          start = i
        }
        depth++
      } else if (c === 125 /* } */ || c === 93 /* ] */) {
        depth--
        if (capturing && depth === elementDepth) {
          if (!dropping) emit(pieces.join("") + text.slice(start, i + 1))
          pieces = []
          length = 0
          capturing = false
          start = -1
        }
        if (depth === 0) closed = true
      }
    }
    if (capturing && !dropping && start >= 0) {
      const rest = text.slice(start)
      length += rest.length
      if (length > maxElementChars) {
        dropping = true
        oversized++
        pieces = []
        length = 0
      } else {
        pieces.push(rest)
      }
    }
  }

  return {
    push: (chunk) => feed(decoder.decode(chunk, { stream: true })),
    end: () => {
      feed(decoder.decode())
      if (capturing && !dropping) malformed++ // an element cut off by the end of the stream
      capturing = false
      pieces = []
    },
    closed: () => closed,
    malformed: () => malformed,
    oversized: () => oversized
  }
}
