/**
 * The side copy of a compressed body, decoded for parsing only. The client still receives the
 * compressed bytes exactly as the upstream sent them; here a zlib stream (`ContentCoding.ts`, the
 * gateway's one decoder) inflates a copy so the provider parsers see text. Decoding runs on libuv's
 * thread pool, off the main path, and only for a compressed body.
 */
import { type Coding, codingOf, createDecoder, MAX_DECODED_BYTES } from "./ContentCoding.js"
import type { ExchangeOutcome, ResponseObserver } from "./ExchangeOutcome.js"

/** Everything of the body goes nowhere; the outcome arrives marked undecodable. */
const undecodableObserver = (inner: ResponseObserver): ResponseObserver => ({
  chunk: () => {},
  end: (outcome) => inner.end(outcome, true)
})

const decoding = (coding: Coding, inner: ResponseObserver): ResponseObserver => {
  let decoder: ReturnType<typeof createDecoder> | undefined
  let outcome: ExchangeOutcome | undefined
  let ended = false
  let failed = false
  let decoded = 0
  const finish = () => {
    if (ended || outcome === undefined) return
    ended = true
    inner.end(outcome, failed)
  }
  const start = (first: Uint8Array) => {
    const stream = createDecoder(coding, first)
    stream.on("data", (bytes: Buffer) => {
      decoded += bytes.byteLength
      if (decoded > MAX_DECODED_BYTES) {
        // Larger than any answer: a compression bomb or a body not worth judging; reading stops here.
        failed = true
        stream.destroy()
        return
      }
      inner.chunk(bytes)
    })
    stream.on("end", finish)
    stream.on("error", () => {
      // A corrupt body (or one past the output limit): the client got it as sent; the record says
      // it could not be read.
      failed = true
      stream.destroy()
      finish()
    })
    stream.on("close", finish)
    return stream
  }
  /** A lone first byte, kept until the second arrives: DEFLATE's two header bytes tell raw from wrapped. */
  let first: Uint8Array | undefined
  const write = (bytes: Uint8Array) => {
    decoder ??= start(bytes)
    if (!decoder.destroyed) decoder.write(bytes)
  }
  return {
    chunk: (bytes) => {
      if (decoder === undefined && (first !== undefined || bytes.byteLength < 2)) {
        first = first === undefined ? Buffer.from(bytes) : Buffer.concat([first, bytes])
        if (first.byteLength < 2) return
        bytes = first
        first = undefined
      }
      write(bytes)
    },
    end: (o) => {
      outcome = o
      if (first !== undefined) write(first)
      if (decoder === undefined || decoder.destroyed) finish()
      else decoder.end()
    }
  }
}

/**
 * `inner` wrapped so that it receives decoded bytes, or `inner` itself for identity encodings (the
 * usual, uncompressed answer costs nothing here). A coding the gateway cannot decode (zstd, stacked
 * codings) hands over nothing and reports the body undecodable: parsing compressed bytes would only
 * produce noise.
 */
export const decodingObserver = (contentEncoding: string | undefined, inner: ResponseObserver): ResponseObserver => {
  if (contentEncoding === undefined || contentEncoding === "") return inner
  const coding = codingOf(contentEncoding)
  if (coding === "identity") return inner
  if (coding === "unsupported") return undecodableObserver(inner)
  return decoding(coding, inner)
}
