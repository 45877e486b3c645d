/**
 * OpenAI: Chat Completions and the Responses API behind one adapter.
 *
 * The contract's `extractJson` and `streamExtractor` get no URL, so the API is recognised from the
 * payload itself, which is unambiguous: chat bodies and chunks carry `choices`, Responses bodies
 * carry `output` / `object: "response"`, and Responses stream events a `type` of `response.*`.
 */
import { arrayAt, errorText, isRecord, jsonSseReader, makeExtraction, recordAt, stringAt } from "./Extraction.js"
import { keyHashFrom } from "./Identity.js"
import { ChatStreamState, chatFromJson } from "./OpenAiChat.js"
import { ResponsesStreamState, responsesFromJson } from "./OpenAiResponses.js"
import type { CredentialCarrier, DeclaredTool, Extraction, ProviderAdapter, StreamExtractor } from "./Provider.js"
import { openaiMayCarry, openaiToolResults } from "./ToolResults.js"

const isResponsesBody = (body: unknown): boolean =>
  stringAt(body, "object") === "response" || (isRecord(body) && Array.isArray(body["output"]))

const extractJson = (body: unknown): Extraction => {
  if (isResponsesBody(body)) return responsesFromJson(body)
  // `{error: {...}}`: the error shape both APIs use for a failed request.
  const error = recordAt(body, "error")
  if (error !== undefined && !(isRecord(body) && "choices" in body))
    return makeExtraction({ providerError: errorText(error) })
  return chatFromJson(body)
}

const streamExtractor = (): StreamExtractor => {
  const chat = new ChatStreamState()
  const responses = new ResponsesStreamState()
  let api: "chat" | "responses" | undefined
  let done = false // chat's `data: [DONE]`
  let chatError: string | undefined

  const reader = jsonSseReader((event, json) => {
    if (json === undefined) {
      done = true
      return
    }
    if (!isRecord(json)) return
    const type = stringAt(json, "type") ?? event.event
    if (type.startsWith("response.") || (api === "responses" && type === "error")) {
      api = "responses"
      responses.push(type, json)
    } else if ("choices" in json || stringAt(json, "object") === "chat.completion.chunk") {
      api = "chat"
      chat.push(json)
    } else if (type === "error" || "error" in json) {
      // A mid-stream error: chat servers send `data: {"error": {...}}`, Responses an `error` event.
      if (api === "responses") responses.push("error", json)
      else chatError = errorText(recordAt(json, "error") ?? json)
    }
  })

  return {
    push: reader.push,
    finish: () => {
      reader.end()
      const counts = { malformedEvents: reader.malformed(), oversizedEvents: reader.oversized() }
      if (api === "responses") return { ...responses.extraction(), complete: responses.complete, ...counts }
      return { ...chat.extraction(chatError), complete: done || chatError !== undefined, ...counts }
    }
  }
}

/**
 * Chat: the nudge extends the leading `system`/`developer` message (its end, so the provider's
 * automatic prefix cache still matches everything before it), or becomes a new first message,
 * `developer` when the request already speaks in developer messages (o-series models), else `system`.
 * Responses: appended to `instructions`.
 */
const injectNudge = (body: unknown, nudge: string): unknown => {
  if (!isRecord(body)) return undefined
  const messages = body["messages"]
  if (Array.isArray(messages)) {
    const first: unknown = messages[0]
    const role = stringAt(first, "role")
    if (isRecord(first) && (role === "system" || role === "developer")) {
      const content = first["content"]
      const extended =
        typeof content === "string"
          ? `${content}\n\n${nudge}`
          : Array.isArray(content)
            ? [...content, { type: "text", text: nudge }]
            : undefined
      if (extended !== undefined) return { ...body, messages: [{ ...first, content: extended }, ...messages.slice(1)] }
    }
    const usesDeveloper = messages.some((m) => stringAt(m, "role") === "developer")
    return { ...body, messages: [{ role: usesDeveloper ? "developer" : "system", content: nudge }, ...messages] }
  }
  if ("input" in body) {
    const instructions = body["instructions"]
    if (typeof instructions === "string" && instructions !== "")
      return { ...body, instructions: `${instructions}\n\n${nudge}` }
    if (instructions === undefined || instructions === null || instructions === "")
      return { ...body, instructions: nudge }
  }
  return undefined
}

/**
 * Chat: `tools[].function.name` (`tools[].custom.name` for custom tools) and the legacy
 * `functions[].name`. Responses: `tools[].name`, and built-in tools (`web_search`, `file_search`,
 * `code_interpreter`, `mcp`, …) by their `type`.
 */
const declaredTools = (body: unknown): ReadonlyArray<DeclaredTool> => {
  const names: Array<DeclaredTool> = []
  for (const tool of arrayAt(body, "tools")) {
    const name =
      stringAt(recordAt(tool, "function"), "name") ??
      stringAt(recordAt(tool, "custom"), "name") ??
      stringAt(tool, "name") ??
      stringAt(tool, "type")
    if (name !== undefined && name !== "") names.push({ name })
  }
  for (const fn of arrayAt(body, "functions")) {
    const name = stringAt(fn, "name")
    if (name !== undefined && name !== "") names.push({ name })
  }
  return names
}

/** `Authorization: Bearer`, the only place OpenAI reads a key. */
const CREDENTIALS: ReadonlyArray<CredentialCarrier> = [{ header: "authorization", bearer: true }]

export const openaiAdapter: ProviderAdapter = {
  name: "openai",
  credentials: CREDENTIALS,
  keyHash: (headers, url) => keyHashFrom(CREDENTIALS, headers, url),
  requestInfo: (body) => ({ model: stringAt(body, "model"), stream: isRecord(body) && body["stream"] === true }),
  declaredTools,
  extractJson,
  streamExtractor,
  injectNudge,
  toolResults: openaiToolResults,
  mayCarryToolResults: openaiMayCarry
}
