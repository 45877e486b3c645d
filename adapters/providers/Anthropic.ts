/**
 * Anthropic Messages API (`POST /v1/messages`), JSON and SSE.
 *
 * Thinking: `thinking` blocks (confidence 1.0), several joined with "\n\n---\n\n".
 * `redacted_thinking` blocks carry only ciphertext: they set `redactedThinking` (when no readable
 * thinking came with them) and their data is never read. A `thinking` block with empty text (the
 * API's "omitted" display) but a signature counts the same way; a signature's content is never read.
 */
import {
  arrayAt,
  errorText,
  isRecord,
  makeExtraction,
  numberAt,
  parseArguments,
  recordAt,
  stringAt,
  thinkingOf,
  jsonSseReader,
  laterUsage,
  usageOf
} from "./Extraction.js"
import { keyHashFrom } from "./Identity.js"
import type {
  CredentialCarrier,
  DeclaredTool,
  ExtractedToolCall,
  Extraction,
  ProviderAdapter,
  StreamExtractor,
  TokenUsage
} from "./Provider.js"
import { anthropicMayCarry, anthropicToolResults } from "./ToolResults.js"

interface Block {
  type: string
  text: string // thinking text, answer text, or the tool input's partial JSON
  name: string
  input: unknown // the tool input from content_block_start (normally `{}`)
  signed: boolean // a thinking block's signature arrived: the block is finished, even if its text is empty
}

/** Blocks, in index order, to an extraction: the same code for JSON bodies and finished streams. */
const fromBlocks = (
  blocks: ReadonlyArray<Block>,
  meta: {
    model: string | undefined
    stopReason: string | undefined
    providerError: string | undefined
    usage?: TokenUsage | undefined
  }
): Extraction => {
  const thinking: Array<string> = []
  const text: Array<string> = []
  const toolCalls: Array<ExtractedToolCall> = []
  let sawRedacted = false
  for (const block of blocks) {
    switch (block.type) {
      case "thinking":
        if (block.text === "" && block.signed) sawRedacted = true // "omitted" display: reasoning hidden
        thinking.push(block.text)
        break
      case "redacted_thinking":
        sawRedacted = true
        break
      case "tool_use":
      case "server_tool_use":
        toolCalls.push({ name: block.name, arguments: parseArguments(block.text, block.input) })
        break
      case "text":
        text.push(block.text)
        break
    }
  }
  return makeExtraction({
    thinking: thinkingOf(thinking, "thinking_blocks"),
    sawRedacted,
    toolCalls,
    outputText: text.join(""),
    ...meta
  })
}

const blockOf = (value: unknown): Block => {
  const type = stringAt(value, "type") ?? ""
  const input = isRecord(value) ? value["input"] : undefined
  return {
    type,
    text:
      type === "thinking"
        ? (stringAt(value, "thinking") ?? "")
        : type === "text"
          ? (stringAt(value, "text") ?? "")
          : "",
    name: stringAt(value, "name") ?? "",
    input: input ?? {},
    signed: (stringAt(value, "signature") ?? "") !== ""
  }
}

const extractJson = (body: unknown): Extraction => {
  if (stringAt(body, "type") === "error") {
    return makeExtraction({ providerError: errorText(recordAt(body, "error") ?? body) })
  }
  return fromBlocks(arrayAt(body, "content").map(blockOf), {
    model: stringAt(body, "model"),
    stopReason: stringAt(body, "stop_reason"),
    providerError: undefined,
    usage: usageOf(recordAt(body, "usage"), "input_tokens", "output_tokens")
  })
}

const streamExtractor = (): StreamExtractor => {
  const blocks = new Map<number, Block>()
  let model: string | undefined
  let stopReason: string | undefined
  let providerError: string | undefined
  let usage: TokenUsage | undefined
  let complete = false

  const reader = jsonSseReader((event, json) => {
    // The payload's own `type` names the event; the SSE `event:` line is the fallback.
    switch (stringAt(json, "type") ?? event.event) {
      case "message_start":
        model = stringAt(recordAt(json, "message"), "model") ?? model
        usage = laterUsage(
          usage,
          usageOf(recordAt(recordAt(json, "message"), "usage"), "input_tokens", "output_tokens")
        )
        break
      case "content_block_start": {
        const index = numberAt(json, "index")
        if (index !== undefined) blocks.set(index, blockOf(recordAt(json, "content_block")))
        break
      }
      case "content_block_delta": {
        const block = blocks.get(numberAt(json, "index") ?? -1)
        const delta = recordAt(json, "delta")
        if (block === undefined || delta === undefined) break
        switch (stringAt(delta, "type")) {
          case "thinking_delta":
            block.text += stringAt(delta, "thinking") ?? ""
            break
          case "text_delta":
            block.text += stringAt(delta, "text") ?? ""
            break
          case "input_json_delta":
            block.text += stringAt(delta, "partial_json") ?? ""
            break
          case "signature_delta":
            block.signed = true // its content is never read
            break
          // anything newer: nothing to judge
        }
        break
      }
      case "message_delta":
        stopReason = stringAt(recordAt(json, "delta"), "stop_reason") ?? stopReason
        usage = laterUsage(usage, usageOf(recordAt(json, "usage"), "input_tokens", "output_tokens"))
        break
      case "message_stop":
        complete = true
        break
      case "error":
        // An error event ends the stream as the provider meant it to: complete, with the error.
        providerError = errorText(recordAt(json, "error") ?? json)
        complete = true
        break
    }
  })

  return {
    push: reader.push,
    finish: () => {
      reader.end()
      const ordered = [...blocks.entries()].sort(([a], [b]) => a - b).map(([, block]) => block)
      return {
        ...fromBlocks(ordered, { model, stopReason, providerError, usage }),
        complete,
        malformedEvents: reader.malformed(),
        oversizedEvents: reader.oversized()
      }
    }
  }
}

/**
 * The nudge goes at the END of the system prompt. Anthropic's prompt cache matches prefixes in the
 * order tools → system → messages, with breakpoints at `cache_control` blocks: appending a new,
 * unmarked text block leaves every existing block (and its `cache_control`) byte-identical, so
 * cached prefixes up to the caller's breakpoints inside `system` stay valid. Prepending would
 * invalidate all of them.
 */
const injectNudge = (body: unknown, nudge: string): unknown => {
  if (!isRecord(body) || !Array.isArray(body["messages"])) return undefined
  const system = body["system"]
  if (system === undefined || system === null || system === "") return { ...body, system: nudge }
  if (typeof system === "string") return { ...body, system: `${system}\n\n${nudge}` }
  if (Array.isArray(system)) return { ...body, system: [...system, { type: "text", text: nudge }] }
  return undefined // some other shape: better to forward untouched than to break the request
}

/** `tools[].name`: client tools and server tools (`web_search`, `bash`, …) alike carry one. */
const declaredTools = (body: unknown): ReadonlyArray<DeclaredTool> =>
  arrayAt(body, "tools").flatMap((tool) => {
    const name = stringAt(tool, "name") ?? stringAt(tool, "type")
    return name === undefined || name === "" ? [] : [{ name }]
  })

/** `x-api-key`, or `Authorization: Bearer` (what the official SDK sends from 1.11 on). */
const CREDENTIALS: ReadonlyArray<CredentialCarrier> = [
  { header: "x-api-key" },
  { header: "authorization", bearer: true }
]

export const anthropicAdapter: ProviderAdapter = {
  name: "anthropic",
  credentials: CREDENTIALS,
  keyHash: (headers, url) => keyHashFrom(CREDENTIALS, headers, url),
  requestInfo: (body) => ({ model: stringAt(body, "model"), stream: isRecord(body) && body["stream"] === true }),
  declaredTools,
  extractJson,
  streamExtractor,
  injectNudge,
  toolResults: anthropicToolResults,
  mayCarryToolResults: anthropicMayCarry
}
