/**
 * Reading a provider's answer off the response path: the (decoded) body copy to the adapter's JSON
 * or stream extractor, and whether anything of a model's answer went unread. What could not be read
 * is never a silent clear (issue 24): the answer is then `unanalysed` (`undecodable_encoding`,
 * `unparseable_body`) and the agent's failure policy gives its verdict (`UnanalysedJudgement.ts`).
 *
 * Only a success (2xx) in JSON or server-sent events (or with no content type) is a model's answer
 * the gateway must read. A provider's error (4xx, 5xx) holds no reasoning to judge, whatever its
 * body, and neither does a file or audio download (`application/octet-stream`, …): those are
 * recorded as before (a synthetic clear, `no_thinking_block`).
 */
import type { UnanalysedReason } from "../../core/schema/Verdict.js"
import type { ExchangeOutcome } from "./ExchangeOutcome.js"
import { withInferredThinking } from "../providers/Fallback.js"
import type { Extraction, ProviderAdapter, StreamExtraction } from "../providers/Provider.js"
import { parseJsonBody } from "./RequestBody.js"

/** The answer as the side path holds it. */
export interface Answer {
  /** The response had no length (chunked or SSE). */
  readonly stream: boolean
  /** The upstream's status; `undefined` when no response headers arrived. */
  readonly status: number | undefined
  /** The body, decoded when it was compressed. */
  readonly chunks: ReadonlyArray<Uint8Array>
  /** The body's content coding could not be decoded: the chunks are not its text. */
  readonly undecodable: boolean
  /** The response's `Content-Type`. */
  readonly contentType: string | undefined
}

export interface ReadAnswer {
  readonly extraction: Extraction | undefined
  /** Part or all of a model's answer could not be read: it must not be cleared on what was read. */
  readonly unanalysed: Extract<UnanalysedReason, "undecodable_encoding" | "unparseable_body"> | undefined
}

const OPEN_BRACE = 0x7b
const isSpace = (byte: number) => byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d
const BOM = [0xef, 0xbb, 0xbf] as const

/** Whether the first byte that is not white space (nor a byte order mark) is `{`. */
const opensAsObject = (chunks: ReadonlyArray<Uint8Array>): boolean => {
  let position = 0
  for (const chunk of chunks)
    for (const byte of chunk) {
      if (position < 3 && byte === BOM[position]) {
        position++
        continue
      }
      position = 3
      if (!isSpace(byte)) return byte === OPEN_BRACE
    }
  return false
}

const isSuccess = (status: number | undefined): boolean => status !== undefined && status >= 200 && status < 300

/** `application/json`, `…+json`, `text/event-stream` (parameters ignored). */
const isAnswerType = (contentType: string): boolean => {
  const type = contentType.split(";", 1)[0]!.trim().toLowerCase()
  return type === "application/json" || type.endsWith("+json") || type === "text/event-stream"
}

/** Nothing of an answer was recognised in the stream. */
const recognisedNothing = (x: StreamExtraction): boolean =>
  x.thinking === undefined &&
  !x.redactedThinking &&
  x.toolCalls.length === 0 &&
  x.outputText === "" &&
  x.model === undefined &&
  x.stopReason === undefined &&
  x.providerError === undefined &&
  !x.complete

/**
 * Events a stream skipped (JSON that did not parse, or over the size limit) are answer text that went
 * unread, unless they are the cut-off tail of a stream that ended early (then the answer is recorded
 * `partial`, with what came before).
 */
const skippedSomething = (x: StreamExtraction): boolean =>
  (x.malformedEvents ?? 0) + (x.oversizedEvents ?? 0) > 0 && (x.complete || recognisedNothing(x))

/**
 * The answer's extraction, and whether some of it could not be read. Without reasoning from the
 * provider, the visible answer's deliberation-like sentences stand in for it (the fallback, confidence 0.3).
 * Never throws, whatever the bytes.
 */
export const readAnswer = (adapter: ProviderAdapter, answer: Answer): ReadAnswer => {
  const declared = answer.contentType !== undefined
  const modelAnswer = isSuccess(answer.status) && (!declared || isAnswerType(answer.contentType))
  if (answer.undecodable) return { extraction: undefined, unanalysed: modelAnswer ? "undecodable_encoding" : undefined }
  if (answer.chunks.every((chunk) => chunk.byteLength === 0)) {
    // An empty body is nothing lost, unless it claims to be JSON or events (then it is a broken one).
    return { extraction: undefined, unanalysed: modelAnswer && declared ? "unparseable_body" : undefined }
  }
  // A body that opens as a JSON object is a whole answer even when it came chunked, without a length
  // (providers behind proxies often answer so); events and Gemini's JSON-array stream go piece by piece.
  if (answer.stream && !opensAsObject(answer.chunks)) {
    const extractor = adapter.streamExtractor()
    for (const chunk of answer.chunks) extractor.push(chunk)
    const extraction = extractor.finish()
    return {
      extraction: withInferredThinking(extraction),
      unanalysed: modelAnswer && skippedSomething(extraction) ? "unparseable_body" : undefined
    }
  }
  const body = parseJsonBody(answer.chunks.length === 1 ? answer.chunks[0]! : Buffer.concat(answer.chunks))
  if (body === undefined) return { extraction: undefined, unanalysed: modelAnswer ? "unparseable_body" : undefined }
  return { extraction: withInferredThinking(adapter.extractJson(body)), unanalysed: undefined }
}

/**
 * The exchange's outcome as recorded: a body that ended cleanly but whose stream never reached its
 * terminal event is `partial` (the proxy cannot know it; the parser does).
 */
export const recordedOutcome = (outcome: ExchangeOutcome, read: ReadAnswer): ExchangeOutcome => {
  const extraction = read.extraction
  return outcome.kind === "complete" &&
    extraction !== undefined &&
    "complete" in extraction &&
    extraction.complete === false
    ? { ...outcome, kind: "partial" }
    : outcome
}
