import { describe, expect, it } from "@effect/vitest"
import { openaiAdapter as adapter } from "../../../adapters/providers/OpenAi.js"
import * as F from "./fixtures/OpenAi.js"
import { core, crlf, runText } from "./Helpers.js"

describe("openai chat: SSE", () => {
  it("reasoning_content, content and a tool call accumulated by index, [DONE] → complete (LF and CRLF)", () => {
    for (const text of [F.chatSseReasoningTool, crlf(F.chatSseReasoningTool)]) {
      expect(core(runText(adapter, text))).toEqual(F.chatSseReasoningToolExpected)
    }
  })

  it("the `reasoning` field; no [DONE] → complete false with what was seen", () => {
    const x = runText(adapter, F.chatSseReasoningFieldTruncated)
    expect(x.complete).toBe(false)
    expect(x.thinking).toEqual({ text: "Thinking...", source: "reasoning_content", confidence: 0.9 })
    expect(x.outputText).toBe("Hel")
    expect(x.model).toBe("qwen/qwen3-32b")
  })

  it("a mid-stream error object", () => {
    const x = runText(
      adapter,
      `${F.chatSseReasoningFieldTruncated}data: {"error":{"message":"upstream timeout","type":"server_error"}}\n\n`
    )
    expect(x.providerError).toBe("server_error: upstream timeout")
    expect(x.complete).toBe(true)
  })

  it("malformed lines are skipped and counted", () => {
    const x = runText(adapter, F.chatSseReasoningTool.replace("data: [DONE]", 'data: {"choices":[\n\ndata: [DONE]'))
    expect(core(x)).toEqual(F.chatSseReasoningToolExpected)
    expect(x.malformedEvents).toBe(1)
  })
})

describe("openai chat: JSON", () => {
  it("reasoning_content and parallel tool calls", () => {
    const x = adapter.extractJson(JSON.parse(F.chatJsonReasoningTools))
    expect(x.thinking).toEqual({
      text: "I need to read both balances before moving money.",
      source: "reasoning_content",
      confidence: 0.9
    })
    expect(x.toolCalls).toEqual([
      { name: "get_balance", arguments: { account: "checking" } },
      { name: "get_balance", arguments: { account: "savings" } }
    ])
    expect(x.outputText).toBe("Checking both accounts.")
    expect(x.stopReason).toBe("tool_calls")
  })

  it("a plain model: no thinking, not redacted", () => {
    const x = adapter.extractJson(JSON.parse(F.chatJsonPlain))
    expect(x).toEqual({
      thinking: undefined,
      redactedThinking: false,
      toolCalls: [],
      outputText: "Hello there.",
      model: "gpt-4o-2024-08-06",
      stopReason: "stop",
      providerError: undefined
    })
  })

  it("an error body", () => {
    expect(adapter.extractJson(JSON.parse(F.errorJson)).providerError).toMatch(
      /^invalid_request_error: Incorrect API key/
    )
  })

  it("tool arguments that are not JSON are kept as text", () => {
    const body = { choices: [{ index: 0, message: { tool_calls: [{ function: { name: "f", arguments: "{oops" } }] } }] }
    expect(adapter.extractJson(body).toolCalls).toEqual([{ name: "f", arguments: "{oops" }])
  })
})

describe("openai responses", () => {
  it("SSE: summary parts, output text, function call, completed (LF and CRLF)", () => {
    for (const text of [F.responsesSse, crlf(F.responsesSse)]) {
      expect(core(runText(adapter, text))).toEqual(F.responsesSseExpected)
    }
  })

  it("SSE truncated before response.completed: complete false, deltas kept", () => {
    const x = runText(
      adapter,
      F.responsesSse.slice(0, F.responsesSse.indexOf("event: response.function_call_arguments.done"))
    )
    expect(x.complete).toBe(false)
    expect(x.thinking?.text).toBe(F.responsesSseExpected.thinking.text)
    expect(x.toolCalls).toEqual([{ name: "delete_file", arguments: { path: "/tmp/x.log" } }])
    expect(x.outputText).toBe("Deleting it now.")
  })

  it("SSE response.failed", () => {
    const x = runText(adapter, F.responsesSseFailed)
    expect(x.complete).toBe(true)
    expect(x.providerError).toBe("server_error: The model failed to generate a response.")
    expect(x.stopReason).toBe("failed")
  })

  it("JSON: raw reasoning_text preferred, function call, message", () => {
    expect(adapter.extractJson(JSON.parse(F.responsesJson))).toEqual({
      thinking: { text: "Full chain: the user asked to wire funds.", source: "reasoning_summary", confidence: 0.9 },
      redactedThinking: false,
      toolCalls: [{ name: "wire_funds", arguments: { amount: 50 } }],
      outputText: "Wiring now.",
      model: "gpt-oss-120b",
      stopReason: "completed",
      providerError: undefined
    })
  })

  it("JSON: encrypted reasoning only → redacted", () => {
    const x = adapter.extractJson(JSON.parse(F.responsesJsonEncrypted))
    expect(x.thinking).toBeUndefined()
    expect(x.redactedThinking).toBe(true)
    expect(x.outputText).toBe("Ok.")
  })

  it("JSON: incomplete → the reason", () => {
    expect(adapter.extractJson(JSON.parse(F.responsesJsonIncomplete)).stopReason).toBe("max_output_tokens")
  })

  it("request info for chat and responses", () => {
    const url = new URL("https://api.openai.com/v1/responses")
    expect(adapter.requestInfo({ model: "o4-mini", input: "hi", stream: true }, url)).toEqual({
      model: "o4-mini",
      stream: true
    })
    expect(adapter.requestInfo({ model: "gpt-4o", messages: [] }, url)).toEqual({ model: "gpt-4o", stream: false })
  })
})

describe("openai responses: other events", () => {
  it("an `error` event after response.created, and a custom tool's free-form input", () => {
    const text = [
      'event: response.created\ndata: {"type":"response.created","response":{"model":"gpt-5","output":[]}}\n\n',
      'event: response.output_item.added\ndata: {"type":"response.output_item.added","output_index":0,"item":{"type":"custom_tool_call","name":"run_sql","input":""}}\n\n',
      'event: response.custom_tool_call_input.delta\ndata: {"type":"response.custom_tool_call_input.delta","output_index":0,"delta":"SELECT 1"}\n\n',
      'event: error\ndata: {"type":"error","code":"rate_limit_exceeded","message":"Slow down","param":null}\n\n'
    ].join("")
    const x = runText(adapter, text)
    expect(x.providerError).toBe("rate_limit_exceeded: Slow down")
    expect(x.complete).toBe(true)
    expect(x.toolCalls).toEqual([{ name: "run_sql", arguments: "SELECT 1" }])
  })
})
