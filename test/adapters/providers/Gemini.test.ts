import { describe, expect, it } from "@effect/vitest"
import { geminiAdapter as adapter } from "../../../adapters/providers/Gemini.js"
import * as F from "./fixtures/Gemini.js"
import { core, crlf, runText } from "./Helpers.js"

describe("gemini: streams", () => {
  it("alt=sse: thought fragments, answer, function call (LF and CRLF)", () => {
    for (const text of [F.sseThoughtsTool, crlf(F.sseThoughtsTool)]) {
      expect(core(runText(adapter, text))).toEqual(F.sseThoughtsToolExpected)
    }
  })

  it("JSON array stream (no alt=sse), with brackets and braces inside strings", () => {
    const x = runText(adapter, F.arrayStreamThoughtsTool)
    expect(core(x)).toEqual(F.arrayStreamExpected)
    expect(x.malformedEvents).toBe(0)
  })

  it("leading whitespace/BOM before the array is fine", () => {
    expect(core(runText(adapter, `\uFEFF \n${F.arrayStreamThoughtsTool}`))).toEqual(F.arrayStreamExpected)
  })

  it("truncated SSE (no finishReason) and truncated array (no `]`): complete false, what was seen", () => {
    const sse = runText(
      adapter,
      F.sseThoughtsTool.slice(
        0,
        F.sseThoughtsTool.indexOf('data: {"candidates": [{"content": {"parts": [{"functionCall"')
      )
    )
    expect(sse.complete).toBe(false)
    expect(sse.thinking?.text).toBe(F.sseThoughtsToolExpected.thinking.text)
    expect(sse.outputText).toBe("Here is a plan.")
    const array = runText(adapter, F.arrayStreamThoughtsTool.slice(0, -20))
    expect(array.complete).toBe(false)
    expect(array.thinking?.text).toBe(F.sseThoughtsToolExpected.thinking.text)
    expect(array.malformedEvents).toBe(1) // the element cut off at the end
  })

  it("an error as the whole (non-array) stream body", () => {
    const x = runText(adapter, F.errorJson)
    expect(x.providerError).toBe("INVALID_ARGUMENT: API key not valid. Please pass a valid API key.")
    expect(x.complete).toBe(true)
  })

  it("malformed SSE chunks are skipped and counted", () => {
    const x = runText(adapter, `data: {"candidates": [\n\n${F.sseThoughtsTool}`)
    expect(core(x)).toEqual(F.sseThoughtsToolExpected)
    expect(x.malformedEvents).toBe(1)
  })
})

describe("gemini: JSON and request", () => {
  it("thought parts and answer", () => {
    expect(adapter.extractJson(JSON.parse(F.jsonThoughts))).toEqual({
      thinking: { text: "The user asks for a summary; nothing risky.", source: "thought_parts", confidence: 0.9 },
      redactedThinking: false,
      toolCalls: [],
      outputText: "Summary: all good.",
      model: "gemini-2.5-pro",
      usage: { inputTokens: 5, outputTokens: 4 },
      stopReason: "STOP",
      providerError: undefined
    })
  })

  it("a buffered array stream body gives the same as the stream", () => {
    const { complete: _c, ...expected } = F.arrayStreamExpected
    expect(adapter.extractJson(JSON.parse(F.arrayStreamThoughtsTool))).toEqual(expected)
  })

  it("an error body", () => {
    expect(adapter.extractJson(JSON.parse(F.errorJson)).providerError).toBe(
      "INVALID_ARGUMENT: API key not valid. Please pass a valid API key."
    )
  })

  it("model and streaming come from the URL", () => {
    const at = (u: string) => adapter.requestInfo({ contents: [] }, new URL(u))
    expect(
      at("https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse")
    ).toEqual({ model: "gemini-2.5-flash", stream: true })
    expect(at("http://localhost:8081/gemini/v1/models/gemini-2.5-pro:generateContent")).toEqual({
      model: "gemini-2.5-pro",
      stream: false
    })
    expect(at("https://generativelanguage.googleapis.com/v1beta/models")).toEqual({ model: undefined, stream: false })
  })
})
