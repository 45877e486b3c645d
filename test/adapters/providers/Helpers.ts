/** Test helpers: feed a fixture to a stream extractor whole, split at given byte offsets, or with other line ends. */
import type { ProviderAdapter, StreamExtraction } from "../../../adapters/providers/Provider.js"

export const bytes = (text: string): Uint8Array => new TextEncoder().encode(text)

/** The fixture's bytes cut at the given offsets (sorted, deduplicated, in range). */
export const splitAt = (data: Uint8Array, offsets: ReadonlyArray<number>): Array<Uint8Array> => {
  const cuts = [...new Set(offsets.filter((o) => o > 0 && o < data.length))].sort((a, b) => a - b)
  const chunks: Array<Uint8Array> = []
  let start = 0
  for (const cut of cuts) {
    chunks.push(data.subarray(start, cut))
    start = cut
  }
  chunks.push(data.subarray(start))
  return chunks
}

export const runStream = (adapter: ProviderAdapter, chunks: ReadonlyArray<Uint8Array>): StreamExtraction => {
  const extractor = adapter.streamExtractor()
  for (const chunk of chunks) extractor.push(chunk)
  return extractor.finish()
}

export const runText = (adapter: ProviderAdapter, text: string): StreamExtraction => runStream(adapter, [bytes(text)])

export const crlf = (text: string): string => text.replaceAll("\n", "\r\n")
export const crOnly = (text: string): string => text.replaceAll("\n", "\r")

/** The extraction without the stream counters, to compare with a fixture's expectation. */
export const core = (x: StreamExtraction) => {
  const { malformedEvents: _m, oversizedEvents: _o, ...rest } = x
  return rest
}
