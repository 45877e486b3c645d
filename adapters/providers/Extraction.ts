/**
 * Small helpers shared by the provider adapters: reading untyped JSON without throwing, and
 * building an `Extraction`. Provider bodies are untrusted, so every read checks its type.
 */
import type { ExtractedThinking, ExtractedToolCall, Extraction, ThinkingSource, TokenUsage } from "./Provider.js"
import { createSseParser, type SseEvent } from "./Sse.js"

export type JsonRecord = Readonly<Record<string, unknown>>

export const isRecord = (value: unknown): value is JsonRecord =>
  typeof value === "object" && value !== null && !Array.isArray(value)

export const recordAt = (value: unknown, key: string): JsonRecord | undefined => {
  const v = isRecord(value) ? value[key] : undefined
  return isRecord(v) ? v : undefined
}

export const stringAt = (value: unknown, key: string): string | undefined => {
  const v = isRecord(value) ? value[key] : undefined
  return typeof v === "string" ? v : undefined
}

export const arrayAt = (value: unknown, key: string): ReadonlyArray<unknown> => {
  const v = isRecord(value) ? value[key] : undefined
  return Array.isArray(v) ? v : []
}

export const numberAt = (value: unknown, key: string): number | undefined => {
  const v = isRecord(value) ? value[key] : undefined
  return typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : undefined
}

/** `JSON.parse` that answers `undefined` instead of throwing. */
export const parseJson = (text: string): { readonly ok: true; readonly value: unknown } | { readonly ok: false } => {
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch {
    return { ok: false }
  }
}

/** Tool arguments arrive as JSON text; keep the parsed value, or the raw text when it does not parse. */
export const parseArguments = (text: string, fallback: unknown = {}): unknown => {
  if (text.trim() === "") return fallback
  const parsed = parseJson(text)
  return parsed.ok ? parsed.value : text
}

/** Error bodies are kept short: `type: message` where both exist, compact JSON otherwise. */
const MAX_ERROR_CHARS = 2000
export const errorText = (error: unknown): string => {
  // An OpenAI `error` stream event is itself `{type: "error", code, message}`: its code says more.
  const ownType = stringAt(error, "type")
  const type = (ownType === "error" ? undefined : ownType) ?? stringAt(error, "status") ?? stringAt(error, "code")
  const message = stringAt(error, "message")
  const text =
    typeof error === "string"
      ? error
      : type !== undefined && message !== undefined
        ? `${type}: ${message}`
        : (message ?? JSON.stringify(error) ?? "error")
  return text.length > MAX_ERROR_CHARS ? text.slice(0, MAX_ERROR_CHARS) : text
}

/** Separator between several reasoning blocks of one response (Mnemom's AIP implementation's choice). */
export const BLOCK_SEPARATOR = "\n\n---\n\n"

export const CONFIDENCE: Readonly<Record<ThinkingSource, number>> = {
  thinking_blocks: 1.0,
  reasoning_content: 0.9,
  reasoning_summary: 0.9,
  thought_parts: 0.9,
  fallback: 0.3
}

/** Reasoning texts of one response → the extracted thinking, `undefined` when all are empty. */
export const thinkingOf = (texts: ReadonlyArray<string>, source: ThinkingSource): ExtractedThinking | undefined => {
  const nonEmpty = texts.filter((t) => t.length > 0)
  return nonEmpty.length === 0
    ? undefined
    : { text: nonEmpty.join(BLOCK_SEPARATOR), source, confidence: CONFIDENCE[source] }
}

export interface ExtractionParts {
  readonly thinking?: ExtractedThinking | undefined
  /** Any encrypted/redacted reasoning seen; reported only when no readable reasoning came with it. */
  readonly sawRedacted?: boolean
  readonly toolCalls?: ReadonlyArray<ExtractedToolCall>
  readonly outputText?: string
  readonly model?: string | undefined
  readonly stopReason?: string | undefined
  readonly providerError?: string | undefined
  readonly usage?: TokenUsage | undefined
}

/** The token counts of a provider's usage object under its own names; `undefined` when it has neither. */
export const usageOf = (usage: unknown, input: string, output: string): TokenUsage | undefined => {
  const inputTokens = numberAt(usage, input)
  const outputTokens = numberAt(usage, output)
  return inputTokens === undefined && outputTokens === undefined ? undefined : { inputTokens, outputTokens }
}

/** A stream's usage so far with a later event's: each count the latest one given. */
export const laterUsage = (before: TokenUsage | undefined, after: TokenUsage | undefined): TokenUsage | undefined =>
  after === undefined
    ? before
    : {
        inputTokens: after.inputTokens ?? before?.inputTokens,
        outputTokens: after.outputTokens ?? before?.outputTokens
      }

export const makeExtraction = (parts: ExtractionParts): Extraction => ({
  thinking: parts.thinking,
  redactedThinking: (parts.sawRedacted ?? false) && parts.thinking === undefined,
  toolCalls: parts.toolCalls ?? [],
  outputText: parts.outputText ?? "",
  model: parts.model,
  stopReason: parts.stopReason,
  providerError: parts.providerError,
  // Only when known: an extraction without usage is the same object it always was.
  ...(parts.usage === undefined ? {} : { usage: parts.usage })
})

/**
 * SSE whose `data` is JSON: the shared front half of every streaming extractor. Malformed JSON is
 * skipped and counted, never thrown; `[DONE]` (OpenAI's terminator) is passed on as `undefined`.
 */
export interface JsonSseReader {
  readonly push: (chunk: Uint8Array) => void
  readonly end: () => void
  readonly malformed: () => number
  readonly oversized: () => number
}

export const jsonSseReader = (onEvent: (event: SseEvent, json: unknown) => void): JsonSseReader => {
  const parser = createSseParser()
  let malformed = 0
  const handle = (events: ReadonlyArray<SseEvent>): void => {
    for (const event of events) {
      if (event.data === "[DONE]") {
        onEvent(event, undefined)
        continue
      }
      const parsed = parseJson(event.data)
      if (parsed.ok) onEvent(event, parsed.value)
      else malformed++
    }
  }
  return {
    push: (chunk) => handle(parser.push(chunk)),
    end: () => handle(parser.end()),
    malformed: () => malformed,
    oversized: parser.oversized
  }
}
