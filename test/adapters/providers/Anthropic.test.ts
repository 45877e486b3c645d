import { describe, expect, it } from "@effect/vitest"
import { anthropicAdapter as adapter } from "../../../adapters/providers/Anthropic.js"
import * as F from "./fixtures/Anthropic.js"
import { core, crOnly, crlf, runText } from "./Helpers.js"

describe("anthropic: SSE", () => {
  it("thinking, text and a streamed tool input, with LF, CRLF and CR line ends", () => {
    for (const text of [F.sseThinkingToolUse, crlf(F.sseThinkingToolUse), crOnly(F.sseThinkingToolUse)]) {
      const x = runText(adapter, text)
      expect(core(x)).toEqual(F.sseThinkingToolUseExpected)
      expect(x.malformedEvents).toBe(0)
    }
  })

  it("redacted thinking only: flagged, no text; data: without the space", () => {
    expect(core(runText(adapter, F.sseRedacted))).toEqual(F.sseRedactedExpected)
  })

  it("an error event: the provider's error, complete", () => {
    expect(core(runText(adapter, F.sseError))).toEqual(F.sseErrorExpected)
  })

  it("truncated before message_stop: complete false, with what was seen (tool input parsed or kept raw)", () => {
    const cut = F.sseThinkingToolUse.indexOf(
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"is'
    )
    const x = runText(adapter, F.sseThinkingToolUse.slice(0, cut))
    expect(x.complete).toBe(false)
    expect(x.thinking?.text).toBe(F.sseThinkingToolUseExpected.thinking.text)
    expect(x.outputText).toBe("Let me check the weather.")
    expect(x.toolCalls).toEqual([{ name: "get_weather", arguments: '{"location": "Par' }])
    expect(x.stopReason).toBeUndefined()
  })

  it("a stream cut inside a data line: the partial event is counted as malformed, not thrown", () => {
    const x = runText(adapter, F.sseThinkingToolUse.slice(0, F.sseThinkingToolUse.indexOf("I should call") + 5))
    expect(x.complete).toBe(false)
    expect(x.malformedEvents).toBe(1)
    expect(x.thinking?.text).toBe("The user wants the weather in Paris. ")
  })

  it("malformed JSON lines inside a stream are skipped and counted", () => {
    const broken = F.sseThinkingToolUse.replace('event: ping\ndata: {"type": "ping"}', "event: ping\ndata: {not json")
    const x = runText(adapter, `data: garbage\n\n${broken}data: [1,\n\n`)
    expect(core(x)).toEqual(F.sseThinkingToolUseExpected)
    expect(x.malformedEvents).toBe(3)
  })
})

describe("anthropic: JSON", () => {
  it("several thinking blocks joined, redacted alongside readable thinking is not flagged, tool input", () => {
    expect(adapter.extractJson(JSON.parse(F.jsonTwoThinkingBlocks))).toEqual(F.jsonTwoThinkingBlocksExpected)
  })

  it("redacted thinking only", () => {
    const x = adapter.extractJson(JSON.parse(F.jsonRedactedOnly))
    expect(x.thinking).toBeUndefined()
    expect(x.redactedThinking).toBe(true)
    expect(x.outputText).toBe("Sure.")
  })

  it("an error body", () => {
    const x = adapter.extractJson(JSON.parse(F.jsonError))
    expect(x.providerError).toBe("invalid_request_error: max_tokens: Field required")
    expect(x.toolCalls).toEqual([])
  })

  it("never throws on odd bodies", () => {
    for (const body of [null, 1, "x", [], { content: "nope" }, { content: [null, 3, { type: "thinking" }] }]) {
      expect(() => adapter.extractJson(body)).not.toThrow()
    }
  })
})

describe("anthropic: request", () => {
  it("model and stream", () => {
    const url = new URL("https://api.anthropic.com/v1/messages")
    expect(adapter.requestInfo({ model: "claude-sonnet-4-5", stream: true, messages: [] }, url)).toEqual({
      model: "claude-sonnet-4-5",
      stream: true
    })
    expect(adapter.requestInfo({ model: "m", messages: [] }, url)).toEqual({ model: "m", stream: false })
    expect(adapter.requestInfo("garbage", url)).toEqual({ model: undefined, stream: false })
  })
})

describe("anthropic: empty thinking", () => {
  it("a signed thinking block with no text (omitted display) is redacted; an unsigned, unfinished one is not", () => {
    const omitted = {
      model: "m",
      content: [
        { type: "thinking", thinking: "", signature: "c2ln" },
        { type: "text", text: "ok" }
      ]
    }
    expect(adapter.extractJson(omitted).redactedThinking).toBe(true)
    const cut = runText(adapter, F.sseThinkingToolUse.slice(0, F.sseThinkingToolUse.indexOf("event: ping")))
    expect(cut.thinking).toBeUndefined()
    expect(cut.redactedThinking).toBe(false)
  })
})
