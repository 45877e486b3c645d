/**
 * The side copy of a compressed body, decoded for parsing only. The client still receives the
 * compressed bytes exactly as the upstream sent them; here a zlib stream inflates a copy so the
 * provider parsers see text. Decoding runs on libuv's thread pool, off the main path.
 */
import * as zlib from "node:zlib"
import type { ExchangeOutcome, ResponseObserver } from "./ExchangeOutcome.js"

// Z_SYNC_FLUSH on finish: a stream cut short still yields everything decodable, rather than an error.
const gzipOptions = { finishFlush: zlib.constants.Z_SYNC_FLUSH }
const brotliOptions = { finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH }

const decoderFor = (encoding: string): zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | undefined => {
  switch (encoding.trim().toLowerCase()) {
    case "gzip":
    case "x-gzip":
      return zlib.createGunzip(gzipOptions)
    case "deflate":
      return zlib.createInflate(gzipOptions)
    case "br":
      return zlib.createBrotliDecompress(brotliOptions)
    default:
      return undefined
  }
}

/**
 * `inner` wrapped so that it receives decoded bytes, or `inner` itself for identity encodings.
 * An encoding we cannot decode (zstd, stacked codings) hands over nothing: parsing compressed bytes
 * would only produce noise, and the outcome still arrives.
 */
export const decodingObserver = (contentEncoding: string | undefined, inner: ResponseObserver): ResponseObserver => {
  if (contentEncoding === undefined || contentEncoding === "" || contentEncoding.toLowerCase() === "identity")
    return inner
  const decoder = contentEncoding.includes(",") ? undefined : decoderFor(contentEncoding)
  if (decoder === undefined) return { chunk: () => {}, end: inner.end }
  let outcome: ExchangeOutcome | undefined
  let ended = false
  const finish = () => {
    if (ended || outcome === undefined) return
    ended = true
    inner.end(outcome)
  }
  decoder.on("data", (bytes: Buffer) => inner.chunk(bytes))
  decoder.on("end", finish)
  decoder.on("error", () => {
    // A corrupt body: the client got it as sent; the side path reports what it had.
    decoder.destroy()
    finish()
  })
  decoder.on("close", finish)
  return {
    chunk: (bytes) => {
      if (!decoder.destroyed) decoder.write(bytes)
    },
    end: (o) => {
      outcome = o
      if (decoder.destroyed) finish()
      else decoder.end()
    }
  }
}
