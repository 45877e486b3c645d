/**
 * OpenAI Responses API (`POST /v1/responses`), JSON and SSE events.
 *
 * Reasoning items expose a summary (`summary[].text`) and, for some models, the raw reasoning
 * (`content[]` of type `reasoning_text`). The raw text is preferred when present (it is what the
 * model actually thought); otherwise the summary parts are joined with a blank line. Source is
 * `reasoning_summary` (0.9) either way. An item with only `encrypted_content` is redacted reasoning.
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
  type JsonRecord,
  laterUsage,
  usageOf
} from "./Extraction.js"
import type { ExtractedToolCall, Extraction, TokenUsage } from "./Provider.js"

/** One output item as it accumulates (stream) or as read from the final JSON. */
interface Item {
  type: string
  name: string
  args: string
  summary: Map<number, string>
  reasoning: Map<number, string>
  text: Map<number, string>
  encrypted: boolean
}

const emptyItem = (type: string): Item => ({
  type,
  name: "",
  args: "",
  summary: new Map(),
  reasoning: new Map(),
  text: new Map(),
  encrypted: false
})

const indexedTexts = (parts: ReadonlyArray<unknown>, type: string): Map<number, string> => {
  const out = new Map<number, string>()
  parts.forEach((part, i) => {
    const text = stringAt(part, "text")
    if (text !== undefined && (stringAt(part, "type") ?? type) === type) out.set(i, text)
  })
  return out
}

/** A complete item (from `output[]` or `response.output_item.done`). */
const itemOf = (value: unknown): Item => {
  const item = emptyItem(stringAt(value, "type") ?? "")
  item.name = stringAt(value, "name") ?? ""
  item.args = stringAt(value, "arguments") ?? stringAt(value, "input") ?? "" // `input`: custom (free-form) tools
  item.summary = indexedTexts(arrayAt(value, "summary"), "summary_text")
  item.reasoning = indexedTexts(arrayAt(value, "content"), "reasoning_text")
  item.text = indexedTexts(arrayAt(value, "content"), "output_text")
  item.encrypted = typeof stringAt(value, "encrypted_content") === "string"
  return item
}

const joined = (parts: Map<number, string>, separator: string): string =>
  [...parts.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, t]) => t)
    .join(separator)

const fromItems = (
  items: ReadonlyArray<Item>,
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
  for (const item of items) {
    if (item.type === "reasoning") {
      const reasoning = item.reasoning.size > 0 ? joined(item.reasoning, "") : joined(item.summary, "\n\n")
      if (reasoning === "" && item.encrypted) sawRedacted = true
      thinking.push(reasoning)
    } else if (item.type === "function_call" || item.type === "custom_tool_call") {
      toolCalls.push({ name: item.name, arguments: parseArguments(item.args) })
    } else if (item.type === "message") {
      text.push(joined(item.text, ""))
    }
  }
  return makeExtraction({
    thinking: thinkingOf(thinking, "reasoning_summary"),
    sawRedacted,
    toolCalls,
    outputText: text.join(""),
    ...meta
  })
}

const stopReasonOf = (response: unknown): string | undefined =>
  stringAt(recordAt(response, "incomplete_details"), "reason") ?? stringAt(response, "status")

const errorOf = (response: unknown): string | undefined => {
  const error = isRecord(response) ? response["error"] : undefined
  return error === undefined || error === null ? undefined : errorText(error)
}

export const responsesFromJson = (body: unknown): Extraction =>
  fromItems(arrayAt(body, "output").map(itemOf), {
    model: stringAt(body, "model"),
    stopReason: stopReasonOf(body),
    providerError: errorOf(body),
    usage: usageOf(recordAt(body, "usage"), "input_tokens", "output_tokens")
  })

/** Accumulates Responses API stream events, keyed by `output_index`. */
export class ResponsesStreamState {
  private readonly items = new Map<number, Item>()
  model: string | undefined
  stopReason: string | undefined
  providerError: string | undefined
  usage: TokenUsage | undefined
  complete = false

  private item(event: JsonRecord, type: string): Item {
    const index = numberAt(event, "output_index") ?? 0
    let item = this.items.get(index)
    if (item === undefined) this.items.set(index, (item = emptyItem(type)))
    return item
  }

  private append(parts: Map<number, string>, index: number, delta: string): void {
    parts.set(index, (parts.get(index) ?? "") + delta)
  }

  push(type: string, event: JsonRecord): void {
    const delta = stringAt(event, "delta") ?? ""
    switch (type) {
      case "response.created":
      case "response.in_progress":
        this.model = stringAt(recordAt(event, "response"), "model") ?? this.model
        break
      case "response.output_item.added":
        this.items.set(numberAt(event, "output_index") ?? 0, itemOf(recordAt(event, "item")))
        break
      case "response.output_item.done": {
        // The finished item is authoritative; keep streamed text only where it carries none.
        const done = itemOf(recordAt(event, "item"))
        const seen = this.item(event, done.type)
        this.items.set(numberAt(event, "output_index") ?? 0, {
          ...done,
          summary: done.summary.size > 0 ? done.summary : seen.summary,
          reasoning: done.reasoning.size > 0 ? done.reasoning : seen.reasoning,
          text: done.text.size > 0 ? done.text : seen.text,
          args: done.args !== "" ? done.args : seen.args,
          name: done.name !== "" ? done.name : seen.name
        })
        break
      }
      case "response.reasoning_summary_text.delta":
        this.append(this.item(event, "reasoning").summary, numberAt(event, "summary_index") ?? 0, delta)
        break
      case "response.reasoning_text.delta":
        this.append(this.item(event, "reasoning").reasoning, numberAt(event, "content_index") ?? 0, delta)
        break
      case "response.output_text.delta":
        this.append(this.item(event, "message").text, numberAt(event, "content_index") ?? 0, delta)
        break
      case "response.function_call_arguments.delta":
        this.item(event, "function_call").args += delta
        break
      case "response.custom_tool_call_input.delta":
        this.item(event, "custom_tool_call").args += delta
        break
      case "response.completed":
      case "response.incomplete":
      case "response.failed": {
        const response = recordAt(event, "response")
        this.model = stringAt(response, "model") ?? this.model
        this.stopReason = stopReasonOf(response) ?? this.stopReason
        this.providerError = errorOf(response) ?? this.providerError
        this.usage = laterUsage(this.usage, usageOf(recordAt(response, "usage"), "input_tokens", "output_tokens"))
        this.complete = true
        break
      }
      case "error":
        this.providerError = errorText(recordAt(event, "error") ?? event)
        this.complete = true
        break
    }
  }

  extraction(): Extraction {
    const ordered = [...this.items.entries()].sort(([a], [b]) => a - b).map(([, item]) => item)
    return fromItems(ordered, {
      model: this.model,
      stopReason: this.stopReason,
      providerError: this.providerError,
      usage: this.usage
    })
  }
}
