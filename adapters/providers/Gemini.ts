/**
 * Google Gemini API: `models/{model}:generateContent` and `:streamGenerateContent`.
 *
 * Thinking: `candidates[0].content.parts[]` with `thought: true` (confidence 0.9). In a stream each
 * chunk carries a fragment of the thought, so fragments are concatenated without a separator (and,
 * for consistency, so are several thought parts of one JSON body).
 *
 * A stream is SSE with `?alt=sse`, otherwise a JSON array sent in pieces. `streamExtractor` gets no
 * URL, so it looks at the first byte that is not whitespace or a BOM: `[` or `{` means the JSON array
 * (or a bare error object), anything else SSE.
 */
import {
  arrayAt,
  errorText,
  isRecord,
  jsonSseReader,
  makeExtraction,
  recordAt,
  stringAt,
  thinkingOf,
  type JsonRecord,
  laterUsage,
  usageOf
} from "./Extraction.js"
import { keyHashFrom } from "./Identity.js"
import { jsonArrayReader } from "./JsonArrayStream.js"
import type {
  CredentialCarrier,
  DeclaredTool,
  ExtractedToolCall,
  Extraction,
  ProviderAdapter,
  StreamExtractor,
  TokenUsage
} from "./Provider.js"
import { geminiMayCarry, geminiToolResults } from "./ToolResults.js"

/** Accumulates GenerateContentResponse objects: one for a JSON body, one per chunk for a stream. */
class GeminiState {
  private readonly thought: Array<string> = []
  private readonly text: Array<string> = []
  private readonly toolCalls: Array<ExtractedToolCall> = []
  model: string | undefined
  stopReason: string | undefined
  providerError: string | undefined
  usage: TokenUsage | undefined

  push(response: unknown): void {
    const error = recordAt(response, "error")
    if (error !== undefined) {
      this.providerError = errorText(error)
      return
    }
    this.model = stringAt(response, "modelVersion") ?? this.model
    this.usage = laterUsage(
      this.usage,
      usageOf(recordAt(response, "usageMetadata"), "promptTokenCount", "candidatesTokenCount")
    )
    const candidates = arrayAt(response, "candidates")
    const candidate = candidates.find((c) => (isRecord(c) ? (c["index"] ?? 0) : -1) === 0) ?? candidates[0]
    this.stopReason = stringAt(candidate, "finishReason") ?? this.stopReason
    // A prompt blocked by safety filters has no candidates, only `promptFeedback.blockReason`.
    this.stopReason ??= stringAt(recordAt(response, "promptFeedback"), "blockReason")
    for (const part of arrayAt(recordAt(candidate, "content"), "parts")) {
      if (!isRecord(part)) continue
      const call = recordAt(part, "functionCall")
      const text = stringAt(part, "text")
      if (call !== undefined) this.toolCalls.push({ name: stringAt(call, "name") ?? "", arguments: call["args"] ?? {} })
      else if (text !== undefined) (part["thought"] === true ? this.thought : this.text).push(text)
    }
  }

  extraction(): Extraction {
    return makeExtraction({
      thinking: thinkingOf([this.thought.join("")], "thought_parts"),
      toolCalls: this.toolCalls,
      outputText: this.text.join(""),
      model: this.model,
      stopReason: this.stopReason,
      providerError: this.providerError,
      usage: this.usage
    })
  }
}

/** A JSON body: one response, or (a buffered non-SSE stream) an array of them. */
const extractJson = (body: unknown): Extraction => {
  const state = new GeminiState()
  for (const response of Array.isArray(body) ? body : [body]) state.push(response)
  return state.extraction()
}

const isSpaceOrBom = (b: number): boolean =>
  b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09 || b === 0xef || b === 0xbb || b === 0xbf

interface ChunkReader {
  readonly push: (chunk: Uint8Array) => void
  readonly end: () => void
  readonly malformed: () => number
  readonly oversized: () => number
}

const streamExtractor = (): StreamExtractor => {
  const state = new GeminiState()
  let held: Array<Uint8Array> = [] // bytes before the format is known (whitespace only)
  let reader: ChunkReader | undefined
  let array: ReturnType<typeof jsonArrayReader> | undefined

  const choose = (chunk: Uint8Array): ChunkReader | undefined => {
    const first = chunk.find((b) => !isSpaceOrBom(b))
    if (first === undefined) return undefined
    if (first === 0x5b /* [ */ || first === 0x7b /* { */) return (array = jsonArrayReader((v) => state.push(v)))
    return jsonSseReader((_, v) => {
      if (v !== undefined) state.push(v)
    })
  }

  const push = (chunk: Uint8Array): void => {
    if (reader !== undefined) return reader.push(chunk)
    held.push(chunk)
    reader = choose(chunk)
    if (reader === undefined) return
    for (const c of held) reader.push(c)
    held = []
  }

  return {
    push,
    finish: () => {
      reader?.end()
      const extraction = state.extraction()
      // SSE has no terminal event: the last chunk carries `finishReason`. The array has its `]`.
      const complete =
        array !== undefined
          ? array.closed()
          : extraction.stopReason !== undefined || extraction.providerError !== undefined
      return {
        ...extraction,
        complete,
        malformedEvents: reader?.malformed() ?? 0,
        oversizedEvents: reader?.oversized() ?? 0
      }
    }
  }
}

/** `…/models/{model}:{method}`; tuned models (`tunedModels/x`) are named the same way. */
const MODEL_PATH = /\/(?:models|tunedModels)\/([^/:]+):([A-Za-z]+)/

/**
 * Appends a text part to `systemInstruction` (or `system_instruction`, the REST API accepts both
 * spellings and so keeps the caller's), so the caller's own parts stay first and unchanged.
 */
const injectNudge = (body: unknown, nudge: string): unknown => {
  if (!isRecord(body) || !Array.isArray(body["contents"])) return undefined
  const key =
    "systemInstruction" in body ? "systemInstruction" : "system_instruction" in body ? "system_instruction" : undefined
  const current = key === undefined ? undefined : body[key]
  if (current === undefined || current === null)
    return { ...body, [key ?? "systemInstruction"]: { parts: [{ text: nudge }] } }
  if (typeof current === "string") return { ...body, [key!]: `${current}\n\n${nudge}` }
  if (isRecord(current)) {
    const parts: ReadonlyArray<unknown> = Array.isArray(current["parts"]) ? current["parts"] : []
    return { ...body, [key!]: { ...(current as JsonRecord), parts: [...parts, { text: nudge }] } }
  }
  return undefined
}

const camelCase = (key: string): string => key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())

/**
 * `tools[].functionDeclarations[].name` (or `function_declarations`); each other member of a tool
 * is a built-in tool (`googleSearch`, `codeExecution`, `urlContext`, …), named by its key in
 * camelCase, since the REST API accepts both spellings.
 */
const declaredTools = (body: unknown): ReadonlyArray<DeclaredTool> => {
  const names: Array<DeclaredTool> = []
  for (const tool of arrayAt(body, "tools")) {
    if (!isRecord(tool)) continue
    for (const key of Object.keys(tool)) {
      if (key === "functionDeclarations" || key === "function_declarations") {
        for (const fn of arrayAt(tool, key)) {
          const name = stringAt(fn, "name")
          if (name !== undefined && name !== "") names.push({ name })
        }
      } else {
        names.push({ name: camelCase(key) })
      }
    }
  }
  return names
}

/**
 * An API key in `x-goog-api-key` or `?key=`, or an OAuth access token (Vertex-style clients, service
 * accounts) as `Authorization: Bearer` or `?access_token=`: Google's front end takes all four.
 */
const CREDENTIALS: ReadonlyArray<CredentialCarrier> = [
  { header: "x-goog-api-key" },
  { query: "key" },
  { header: "authorization", bearer: true },
  { query: "access_token" }
]

export const geminiAdapter: ProviderAdapter = {
  name: "gemini",
  credentials: CREDENTIALS,
  keyHash: (headers, url) => keyHashFrom(CREDENTIALS, headers, url),
  requestInfo: (_body, url) => {
    const match = MODEL_PATH.exec(url.pathname)
    return { model: match?.[1], stream: match?.[2] === "streamGenerateContent" }
  },
  declaredTools,
  extractJson,
  streamExtractor,
  injectNudge,
  toolResults: geminiToolResults,
  mayCarryToolResults: geminiMayCarry
}
