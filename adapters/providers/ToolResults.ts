/**
 * The tool results a request hands the model, per provider (issue 28, item 6): the gateway judges
 * their text before the model reads it. Pure, like the rest of the adapters.
 *
 * - Anthropic: `tool_result` (and `mcp_tool_result`) blocks of `messages[].content`, named after the
 *   `tool_use` block whose `id` their `tool_use_id` answers;
 * - OpenAI Chat Completions: `role: "tool"` messages, named after the assistant's `tool_calls[]`
 *   entry whose `id` their `tool_call_id` answers;
 * - OpenAI Responses: `function_call_output` (and `custom_tool_call_output`) items of `input`,
 *   named after the `function_call` (`custom_tool_call`) item of the same `call_id`;
 * - Gemini: `functionResponse` (`function_response`) parts of `contents[].parts`, named by their own `name`.
 *
 * A result's text is its content when that is a string; otherwise every string value in it (not
 * keys, not media data), joined by new lines, so an instruction hidden in any field of an API's
 * JSON is read. Images and other media carry no text and are skipped.
 *
 * `mayCarryToolResults` is the cheap check on the plain bytes that lets a request without tool
 * results skip all of this (no parse): it looks for the member names or values above, and for a
 * JSON `\u00` escape, which could spell any of them in ASCII letters without matching (a body
 * with escapes is then parsed and read: slower, never unread).
 */
import { arrayAt, isRecord, recordAt, stringAt } from "./Extraction.js"
import type { ToolResult } from "./Provider.js"

/** Nesting read inside a structured result: deeper values are not text an agent reads as such. */
const MAX_DEPTH = 8

/** Members that hold no text an agent reads: block types and media. */
const SKIPPED_KEYS = new Set(["type", "media_type", "mime_type", "mimeType", "signature", "encrypted_content"])

const isMedia = (record: Readonly<Record<string, unknown>>): boolean =>
  "media_type" in record || "mime_type" in record || "mimeType" in record || stringAt(record, "type") === "image"

/** Every string value in `value` (not keys, not media data), in document order. */
const gatherStrings = (value: unknown, into: Array<string>, depth: number): void => {
  if (typeof value === "string") {
    if (value !== "") into.push(value)
    return
  }
  if (depth >= MAX_DEPTH || typeof value !== "object" || value === null) return
  if (Array.isArray(value)) {
    for (const item of value) gatherStrings(item, into, depth + 1)
    return
  }
  const record = value as Readonly<Record<string, unknown>>
  const media = isMedia(record)
  for (const key in record) {
    if (SKIPPED_KEYS.has(key) || (media && (key === "data" || key === "source"))) continue
    gatherStrings(record[key], into, depth + 1)
  }
}

/** The text of a result's content: the string itself, or its string values joined by new lines. */
export const resultText = (content: unknown): string => {
  if (typeof content === "string") return content
  const strings: Array<string> = []
  gatherStrings(content, strings, 0)
  return strings.join("\n")
}

const push = (results: Array<ToolResult>, content: unknown, toolName: string | undefined): void => {
  const text = resultText(content)
  if (text !== "") results.push({ text, toolName })
}

export const anthropicToolResults = (body: unknown): ReadonlyArray<ToolResult> => {
  const names = new Map<string, string>()
  const results: Array<ToolResult> = []
  for (const message of arrayAt(body, "messages")) {
    for (const block of arrayAt(message, "content")) {
      const type = stringAt(block, "type")
      if (type === "tool_use" || type === "server_tool_use" || type === "mcp_tool_use") {
        const id = stringAt(block, "id")
        const name = stringAt(block, "name")
        if (id !== undefined && name !== undefined) names.set(id, name)
      } else if (type === "tool_result" || type === "mcp_tool_result") {
        const id = stringAt(block, "tool_use_id")
        push(results, isRecord(block) ? block["content"] : undefined, id === undefined ? undefined : names.get(id))
      }
    }
  }
  return results
}

const openaiChatToolResults = (messages: ReadonlyArray<unknown>): ReadonlyArray<ToolResult> => {
  const names = new Map<string, string>()
  const results: Array<ToolResult> = []
  for (const message of messages) {
    const role = stringAt(message, "role")
    if (role === "assistant") {
      for (const call of arrayAt(message, "tool_calls")) {
        const id = stringAt(call, "id")
        const name = stringAt(recordAt(call, "function"), "name") ?? stringAt(recordAt(call, "custom"), "name")
        if (id !== undefined && name !== undefined) names.set(id, name)
      }
    } else if (role === "tool") {
      const id = stringAt(message, "tool_call_id")
      push(results, isRecord(message) ? message["content"] : undefined, id === undefined ? undefined : names.get(id))
    }
  }
  return results
}

const openaiResponsesToolResults = (input: ReadonlyArray<unknown>): ReadonlyArray<ToolResult> => {
  const names = new Map<string, string>()
  const results: Array<ToolResult> = []
  for (const item of input) {
    const type = stringAt(item, "type")
    if (type === "function_call" || type === "custom_tool_call") {
      const id = stringAt(item, "call_id")
      const name = stringAt(item, "name")
      if (id !== undefined && name !== undefined) names.set(id, name)
    } else if (type === "function_call_output" || type === "custom_tool_call_output") {
      const id = stringAt(item, "call_id")
      push(results, isRecord(item) ? item["output"] : undefined, id === undefined ? undefined : names.get(id))
    }
  }
  return results
}

/** Chat bodies carry `messages`, Responses bodies `input` (an array; a string input has no tool results). */
export const openaiToolResults = (body: unknown): ReadonlyArray<ToolResult> => {
  const messages = arrayAt(body, "messages")
  return messages.length > 0 ? openaiChatToolResults(messages) : openaiResponsesToolResults(arrayAt(body, "input"))
}

export const geminiToolResults = (body: unknown): ReadonlyArray<ToolResult> => {
  const results: Array<ToolResult> = []
  for (const content of arrayAt(body, "contents")) {
    for (const part of arrayAt(content, "parts")) {
      const response = recordAt(part, "functionResponse") ?? recordAt(part, "function_response")
      if (response === undefined) continue
      push(results, response["response"] ?? response["parts"], stringAt(response, "name"))
    }
  }
  return results
}

/** A JSON `\u00XX` escape: it could spell any member name below in ASCII letters. */
const ESCAPE = "\\u00"

const containsAny = (bytes: Uint8Array, needles: ReadonlyArray<string>): boolean => {
  const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  for (const needle of needles) if (buffer.includes(needle)) return true
  return false
}

/** Whether a plain body may carry tool results (false: it certainly does not). */
const mayCarry = (needles: ReadonlyArray<string>): ((bytes: Uint8Array) => boolean) => {
  const all = [...needles, ESCAPE]
  return (bytes) => containsAny(bytes, all)
}

export const anthropicMayCarry = mayCarry(["tool_result"])
export const openaiMayCarry = mayCarry(['"tool"', "_call_output"])
export const geminiMayCarry = mayCarry(["unctionResponse", "unction_response"])
