/**
 * Property tests (fast-check, fixed seed, bounded runs) over every provider parser, through the path
 * the gateway takes (issue 24): a provider's JSON and SSE answers cut at random points, compressed or
 * not (cut before or after compressing), decoded as the held path decodes (`decodeBody`) or as the
 * observed path does (`decodingObserver`, in random chunks), read (`readAnswer`), judged by a judge
 * that clears everything (the worst case), recorded (`buildResponseEvent`, decoded as the workers
 * decode it). Never a throw, and never a silent clear for what could not be read: a clear that is
 * neither unanalysed nor partial read exactly what the whole answer holds.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import fc from "fast-check"
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from "node:zlib"
import type { AnalysisModel } from "../../../adapters/analysis/AnalysisModel.js"
import { defaultSettings } from "../../../adapters/bus/AgentState.js"
import { type Answer, readAnswer, recordedOutcome } from "../../../adapters/gateway/AnswerReading.js"
import { codingOf, decodeBody } from "../../../adapters/gateway/ContentCoding.js"
import { decodingObserver } from "../../../adapters/gateway/DecodingObserver.js"
import type { ExchangeOutcome } from "../../../adapters/gateway/ExchangeOutcome.js"
import { makeJudging } from "../../../adapters/gateway/Judging.js"
import { buildResponseEvent } from "../../../adapters/gateway/ResponseEvent.js"
import { anthropicAdapter } from "../../../adapters/providers/Anthropic.js"
import { geminiAdapter } from "../../../adapters/providers/Gemini.js"
import { openaiAdapter } from "../../../adapters/providers/OpenAi.js"
import type { Extraction, ProviderAdapter } from "../../../adapters/providers/Provider.js"
import { GatewayEvent } from "../../../core/schema/Event.js"
import * as A from "../providers/fixtures/Anthropic.js"
import * as G from "../providers/fixtures/Gemini.js"
import * as O from "../providers/fixtures/OpenAi.js"
import { fuzzParameters } from "../../support/Fuzz.js"

/** Every provider answer fixture: name, adapter, body, whether it streams. */
const FIXTURES: ReadonlyArray<readonly [string, ProviderAdapter, string, boolean]> = [
  ["anthropic json", anthropicAdapter, A.jsonTwoThinkingBlocks, false],
  ["anthropic json redacted", anthropicAdapter, A.jsonRedactedOnly, false],
  ["anthropic sse", anthropicAdapter, A.sseThinkingToolUse, true],
  ["anthropic sse redacted", anthropicAdapter, A.sseRedacted, true],
  ["anthropic sse error", anthropicAdapter, A.sseError, true],
  ["openai chat json", openaiAdapter, O.chatJsonReasoningTools, false],
  ["openai chat json plain", openaiAdapter, O.chatJsonPlain, false],
  ["openai chat sse", openaiAdapter, O.chatSseReasoningTool, true],
  ["openai responses json", openaiAdapter, O.responsesJson, false],
  ["openai responses json encrypted", openaiAdapter, O.responsesJsonEncrypted, false],
  ["openai responses sse", openaiAdapter, O.responsesSse, true],
  ["gemini json", geminiAdapter, G.jsonThoughts, false],
  ["gemini sse", geminiAdapter, G.sseThoughtsTool, true],
  ["gemini array stream", geminiAdapter, G.arrayStreamThoughtsTool, true]
]
const ANSWERS = new Map(FIXTURES.map((fixture) => [fixture[0], fixture]))
const ADAPTERS = { anthropic: anthropicAdapter, openai: openaiAdapter, gemini: geminiAdapter }

/** The content type the provider sends with a fixture. */
const contentTypeOf = (name: string, stream: boolean): string =>
  stream && !name.includes("array") ? "text/event-stream" : "application/json"

const CODINGS = ["identity", "gzip", "deflate", "raw deflate", "br"] as const
type Coding = (typeof CODINGS)[number]

const compress = (coding: Coding, bytes: Uint8Array): Uint8Array => {
  switch (coding) {
    case "identity":
      return bytes
    case "gzip":
      return gzipSync(bytes)
    case "deflate":
      return deflateSync(bytes)
    case "raw deflate":
      return deflateRawSync(bytes)
    case "br":
      return brotliCompressSync(bytes)
  }
}
const headerOf = (coding: Coding): string | undefined =>
  coding === "identity" ? undefined : coding === "raw deflate" ? "deflate" : coding

const splitAt = (data: Uint8Array, offsets: ReadonlyArray<number>): Array<Uint8Array> => {
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

const COMPLETE: ExchangeOutcome = { kind: "complete", status: 200, bytes: 0, cause: undefined }

/** The held path's reading: the whole body decoded at once. */
const heldAnswer = async (wire: Uint8Array, coding: Coding, stream: boolean, contentType: string): Promise<Answer> => {
  const decoded = await Effect.runPromise(decodeBody(codingOf(headerOf(coding)), wire))
  return {
    stream,
    status: 200,
    chunks: decoded === undefined ? [] : [decoded],
    undecodable: decoded === undefined,
    contentType
  }
}

/** The observed path's reading: the body in chunks through the decoding observer. */
const observedAnswer = (
  wire: Uint8Array,
  coding: Coding,
  stream: boolean,
  contentType: string,
  splits: ReadonlyArray<number>
) =>
  new Promise<Answer>((resolve) => {
    const chunks: Array<Uint8Array> = []
    const observer = decodingObserver(headerOf(coding), {
      chunk: (bytes) => void chunks.push(Buffer.from(bytes)),
      end: (_outcome, undecodable) =>
        resolve({ stream, status: 200, chunks, undecodable: undecodable === true, contentType })
    })
    for (const chunk of splitAt(wire, splits)) observer.chunk(chunk)
    observer.end({ ...COMPLETE, bytes: wire.byteLength })
  })

/** A judge that clears whatever it reads: the worst case for a silent clear. */
const clearingJudge: AnalysisModel["Type"] = {
  name: "clears-all",
  analyze: () =>
    Effect.succeed({
      concerns: [],
      reasoning_summary: "clear",
      llm_verdict: undefined,
      analysis_model: "clears-all",
      analysis_duration_ms: 0,
      thinking_tokens_original: 0,
      thinking_tokens_analyzed: 0,
      truncated: false,
      raw_analysis: "{}",
      cross_validation_warnings: [],
      values_checked: []
    })
}
const judging = makeJudging(clearingJudge, 10_000)
const decodeEvent = Schema.decodeUnknownSync(GatewayEvent)

/** The answer recorded as the gateway records it: the published event, decoded as the workers decode it. */
const record = async (adapter: ProviderAdapter, answer: Answer): Promise<GatewayEvent> => {
  const read = readAnswer(adapter, answer)
  const judgement = await Effect.runPromise(
    judging({ settings: defaultSettings, provider: adapter.name, tenant: "key:test", read })
  )
  const event = buildResponseEvent({
    agentId: "agt-property",
    cardId: undefined,
    sessionId: "sess-property",
    provider: adapter.name,
    outcome: recordedOutcome(COMPLETE, read),
    extraction: read.extraction,
    judgement,
    policy: undefined,
    now: new Date("2026-05-01T00:00:00.000Z")
  })
  return decodeEvent(JSON.parse(JSON.stringify(event)))
}

/** What a judge and the trace read of an answer. */
const judged = (extraction: Extraction | undefined) => ({
  thinking: extraction?.thinking?.text,
  tools: extraction?.toolCalls.map((call) => call.name) ?? []
})

/** Flagged: unanalysed, or a prefix of a stream (partial). Otherwise it must have read the whole answer. */
const flagged = (event: GatewayEvent): boolean =>
  event.checkpoint.synthetic_reason === "unanalysed" || event.checkpoint.analysis_metadata.partial === true

const RUNS = 250

describe("provider answers through the gateway's decode and read path (properties)", () => {
  it("cut at random points, compressed or not, held or observed: never a throw, never a silent clear", async () => {
    const wholes = new Map(
      FIXTURES.map(([name, adapter, text, stream]) => [
        name,
        judged(
          readAnswer(adapter, {
            stream,
            status: 200,
            chunks: [Buffer.from(text)],
            undecodable: false,
            contentType: contentTypeOf(name, stream)
          }).extraction
        )
      ])
    )
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ANSWERS.keys()),
        fc.constantFrom(...CODINGS),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.boolean(),
        fc.boolean(),
        fc.array(fc.integer({ min: 1, max: 4096 }), { maxLength: 8 }),
        async (name, coding, at, cutCompressed, held, splits) => {
          const [, adapter, text, stream] = ANSWERS.get(name)!
          const contentType = contentTypeOf(name, stream)
          const plain = Buffer.from(text)
          const compressed = compress(coding, plain)
          const wire = cutCompressed
            ? compressed.subarray(0, Math.floor(at * compressed.byteLength))
            : compress(coding, plain.subarray(0, Math.floor(at * plain.byteLength)))
          const answer = held
            ? await heldAnswer(wire, coding, stream, contentType)
            : await observedAnswer(wire, coding, stream, contentType, splits)
          const event = await record(adapter, answer)
          expect(event.checkpoint.verdict).toBe("clear") // the judge clears all, the failure policy opens
          if (!flagged(event)) expect(judged(readAnswer(adapter, answer).extraction)).toEqual(wholes.get(name))
        }
      ),
      fuzzParameters(RUNS)
    )
  })

  it("arbitrary bytes under any content coding: never a throw, always a decodable event", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("anthropic", "openai", "gemini" as const),
        fc.uint8Array({ maxLength: 2048 }),
        fc.constantFrom(undefined, "gzip", "deflate", "br", "zstd", "gzip, br", "identity"),
        fc.boolean(),
        fc.boolean(),
        fc.constantFrom(undefined, "application/json", "text/event-stream", "text/html"),
        async (provider, bytes, encoding, stream, held, contentType) => {
          const adapter = ADAPTERS[provider]
          const answer: Answer = held
            ? await Effect.runPromise(decodeBody(codingOf(encoding), bytes)).then((decoded) => ({
                stream,
                status: 200,
                chunks: decoded === undefined ? [] : [decoded],
                undecodable: decoded === undefined,
                contentType
              }))
            : await new Promise<Answer>((resolve) => {
                const chunks: Array<Uint8Array> = []
                const observer = decodingObserver(encoding, {
                  chunk: (b) => void chunks.push(Buffer.from(b)),
                  end: (_o, undecodable) =>
                    resolve({ stream, status: 200, chunks, undecodable: undecodable === true, contentType })
                })
                observer.chunk(bytes)
                observer.end(COMPLETE)
              })
          const event = await record(adapter, answer)
          // Unreadable bytes are flagged; only bytes that read as an answer may be a plain clear.
          if (!flagged(event)) expect(readAnswer(adapter, answer).unanalysed).toBeUndefined()
        }
      ),
      fuzzParameters(RUNS)
    )
  })
})
