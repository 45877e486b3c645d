/**
 * OpenAI Chat Completions (`POST /v1/chat/completions`), JSON and SSE chunks.
 *
 * Reasoning: `reasoning_content` (DeepSeek-style, vLLM, many OpenAI-compatible servers) or
 * `reasoning` (OpenRouter, Ollama, newer vLLM), confidence 0.9. Only `choices[0]` is read: the
 * gateway judges one answer per response, and `n > 1` is rare with tools.
 */
import {
  arrayAt,
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

const reasoningOf = (message: JsonRecord | undefined): string =>
  stringAt(message, "reasoning_content") ?? stringAt(message, "reasoning") ?? ""

const firstChoice = (body: unknown): JsonRecord | undefined => {
  const choices = arrayAt(body, "choices")
  return (
    (choices.find((c) => numberAt(c, "index") === 0) as JsonRecord | undefined) ??
    (isRecord(choices[0]) ? choices[0] : undefined)
  )
}

export const chatFromJson = (body: unknown): Extraction => {
  const choice = firstChoice(body)
  const message = recordAt(choice, "message")
  const toolCalls: Array<ExtractedToolCall> = arrayAt(message, "tool_calls").flatMap((call) => {
    const fn = recordAt(call, "function")
    return fn === undefined
      ? []
      : [{ name: stringAt(fn, "name") ?? "", arguments: parseArguments(stringAt(fn, "arguments") ?? "") }]
  })
  const legacy = recordAt(message, "function_call") // the pre-tools `functions` API
  if (legacy !== undefined)
    toolCalls.push({
      name: stringAt(legacy, "name") ?? "",
      arguments: parseArguments(stringAt(legacy, "arguments") ?? "")
    })
  return makeExtraction({
    thinking: thinkingOf([reasoningOf(message)], "reasoning_content"),
    toolCalls,
    outputText: stringAt(message, "content") ?? "",
    model: stringAt(body, "model"),
    stopReason: stringAt(choice, "finish_reason"),
    usage: usageOf(recordAt(body, "usage"), "prompt_tokens", "completion_tokens")
  })
}

/** Accumulates `chat.completion.chunk` payloads. */
export class ChatStreamState {
  private reasoning: Array<string> = []
  private text: Array<string> = []
  // Tool calls arrive as fragments keyed by `index`: the first carries id and name, later ones
  // append to `arguments`.
  private readonly calls = new Map<number, { name: string; args: string }>()
  model: string | undefined
  stopReason: string | undefined
  /** Sent in the last chunk when the client asked for it (`stream_options.include_usage`). */
  usage: TokenUsage | undefined

  push(chunk: JsonRecord): void {
    this.model = stringAt(chunk, "model") ?? this.model
    this.usage = laterUsage(this.usage, usageOf(recordAt(chunk, "usage"), "prompt_tokens", "completion_tokens"))
    const choice = arrayAt(chunk, "choices").find((c) => (numberAt(c, "index") ?? 0) === 0)
    if (!isRecord(choice)) return
    this.stopReason = stringAt(choice, "finish_reason") ?? this.stopReason
    const delta = recordAt(choice, "delta")
    if (delta === undefined) return
    const reasoning = reasoningOf(delta)
    if (reasoning !== "") this.reasoning.push(reasoning)
    const content = stringAt(delta, "content")
    if (content !== undefined) this.text.push(content)
    for (const call of arrayAt(delta, "tool_calls")) {
      const index = numberAt(call, "index") ?? 0
      const fn = recordAt(call, "function")
      const entry = this.calls.get(index) ?? { name: "", args: "" }
      // The name comes once, in the first fragment; some compatible servers repeat it: first wins.
      if (entry.name === "") entry.name = stringAt(fn, "name") ?? ""
      entry.args += stringAt(fn, "arguments") ?? ""
      this.calls.set(index, entry)
    }
  }

  extraction(providerError: string | undefined): Extraction {
    return makeExtraction({
      thinking: thinkingOf([this.reasoning.join("")], "reasoning_content"),
      toolCalls: [...this.calls.entries()]
        .sort(([a], [b]) => a - b)
        .map(([, c]) => ({ name: c.name, arguments: parseArguments(c.args) })),
      outputText: this.text.join(""),
      model: this.model,
      stopReason: this.stopReason,
      providerError,
      usage: this.usage
    })
  }
}
