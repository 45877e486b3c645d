/**
 * Reading the tool results of a request per provider (adapters/providers/ToolResults.ts): names from
 * the calls they answer, structured content read as its string values (not keys, not media), and
 * the cheap byte check that lets a request without tool results skip all of it, including escapes.
 */
import { describe, expect, it } from "@effect/vitest"
import { anthropicAdapter } from "../../../adapters/providers/Anthropic.js"
import { geminiAdapter } from "../../../adapters/providers/Gemini.js"
import { openaiAdapter } from "../../../adapters/providers/OpenAi.js"
import { resultText } from "../../../adapters/providers/ToolResults.js"

const bytes = (body: unknown) => Buffer.from(JSON.stringify(body))

describe("tool results per provider", () => {
  it("anthropic: tool_result blocks, named after their tool_use; images skipped", () => {
    const body = {
      messages: [
        { role: "assistant", content: [{ type: "tool_use", id: "a", name: "fetch", input: {} }] },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "a",
              content: [
                { type: "text", text: "page" },
                { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo" } }
              ]
            },
            { type: "tool_result", tool_use_id: "unknown-id", content: "plain" },
            { type: "text", text: "not a result" }
          ]
        }
      ]
    }
    expect(anthropicAdapter.toolResults!(body)).toEqual([
      { text: "page", toolName: "fetch" },
      { text: "plain", toolName: undefined }
    ])
    expect(anthropicAdapter.mayCarryToolResults!(bytes(body))).toBe(true)
  })

  it("openai chat: role tool messages, named after the assistant's tool_calls", () => {
    const body = {
      messages: [
        {
          role: "assistant",
          tool_calls: [{ id: "c1", type: "function", function: { name: "search", arguments: "{}" } }]
        },
        { role: "tool", tool_call_id: "c1", content: [{ type: "text", text: "results" }] }
      ]
    }
    expect(openaiAdapter.toolResults!(body)).toEqual([{ text: "results", toolName: "search" }])
  })

  it("openai responses: function_call_output items, named after their function_call", () => {
    const body = {
      input: [
        { type: "function_call", call_id: "c1", name: "lookup", arguments: "{}" },
        { type: "function_call_output", call_id: "c1", output: "found" }
      ]
    }
    expect(openaiAdapter.toolResults!(body)).toEqual([{ text: "found", toolName: "lookup" }])
    expect(openaiAdapter.mayCarryToolResults!(bytes(body))).toBe(true)
  })

  it("gemini: functionResponse parts (camel or snake case), their response's string values", () => {
    const body = {
      contents: [
        {
          role: "user",
          parts: [
            { functionResponse: { name: "weather", response: { city: "Oslo", temp: 3, notes: ["cold", "dry"] } } },
            { function_response: { name: "other", response: { result: "x" } } }
          ]
        }
      ]
    }
    expect(geminiAdapter.toolResults!(body)).toEqual([
      { text: "Oslo\ncold\ndry", toolName: "weather" },
      { text: "x", toolName: "other" }
    ])
  })

  it("a request without tool results is told apart from its bytes alone", () => {
    const plain = { model: "m", messages: [{ role: "user", content: "hello" }], tools: [{ name: "t" }] }
    expect(anthropicAdapter.mayCarryToolResults!(bytes(plain))).toBe(false)
    expect(openaiAdapter.mayCarryToolResults!(bytes(plain))).toBe(false)
    expect(geminiAdapter.mayCarryToolResults!(bytes({ contents: [{ parts: [{ text: "hi" }] }] }))).toBe(false)
  })

  it("the attack: a member name spelled with JSON escapes still goes to the parse", () => {
    const escaped = Buffer.from(
      '{"messages":[{"role":"user","content":[{"type":"\\u0074ool_result","tool_use_id":"a","content":"x"}]}]}'
    )
    expect(anthropicAdapter.mayCarryToolResults!(escaped)).toBe(true)
    expect(anthropicAdapter.toolResults!(JSON.parse(escaped.toString()))).toEqual([{ text: "x", toolName: undefined }])
    expect(openaiAdapter.mayCarryToolResults!(Buffer.from('{"messages":[{"role":"t\\u006fol","content":"x"}]}'))).toBe(
      true
    )
  })

  it("nesting past the depth limit is not read; keys never are", () => {
    let deep: unknown = "deep"
    for (let i = 0; i < 20; i++) deep = { k: deep }
    expect(resultText({ visible: "v", nested: deep })).toBe("v")
  })
})
