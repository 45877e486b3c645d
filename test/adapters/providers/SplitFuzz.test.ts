/**
 * Every stream fixture, cut anywhere, must extract exactly what the whole stream does: at every
 * single byte offset, and at random sets of offsets (FastCheck).
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import { anthropicAdapter } from "../../../adapters/providers/Anthropic.js"
import { geminiAdapter } from "../../../adapters/providers/Gemini.js"
import { openaiAdapter } from "../../../adapters/providers/OpenAi.js"
import type { ProviderAdapter } from "../../../adapters/providers/Provider.js"
import * as A from "./fixtures/Anthropic.js"
import * as G from "./fixtures/Gemini.js"
import * as O from "./fixtures/OpenAi.js"
import { bytes, crlf, runStream, splitAt } from "./Helpers.js"

const cases: ReadonlyArray<readonly [string, ProviderAdapter, string]> = [
  ["anthropic thinking+tool", anthropicAdapter, A.sseThinkingToolUse],
  ["anthropic thinking+tool CRLF", anthropicAdapter, crlf(A.sseThinkingToolUse)],
  ["anthropic redacted", anthropicAdapter, A.sseRedacted],
  ["anthropic error", anthropicAdapter, A.sseError],
  ["openai chat", openaiAdapter, O.chatSseReasoningTool],
  ["openai chat CRLF", openaiAdapter, crlf(O.chatSseReasoningTool)],
  ["openai chat truncated", openaiAdapter, O.chatSseReasoningFieldTruncated],
  ["openai responses", openaiAdapter, O.responsesSse],
  ["openai responses CRLF", openaiAdapter, crlf(O.responsesSse)],
  ["openai responses failed", openaiAdapter, O.responsesSseFailed],
  ["gemini sse", geminiAdapter, G.sseThoughtsTool],
  ["gemini sse CRLF", geminiAdapter, crlf(G.sseThoughtsTool)],
  ["gemini array", geminiAdapter, G.arrayStreamThoughtsTool]
]

describe("stream extraction is independent of chunking", () => {
  for (const [name, adapter, text] of cases) {
    const data = bytes(text)
    const whole = runStream(adapter, [data])

    it(`${name}: split at every byte offset`, () => {
      for (let i = 1; i < data.length; i++) expect(runStream(adapter, splitAt(data, [i]))).toEqual(whole)
    })

    it(`${name}: random multi-splits`, () => {
      FastCheck.assert(
        FastCheck.property(
          FastCheck.array(FastCheck.integer({ min: 1, max: data.length - 1 }), { maxLength: 40 }),
          (offsets) => {
            expect(runStream(adapter, splitAt(data, offsets))).toEqual(whole)
          }
        ),
        { numRuns: 150 }
      )
    })
  }

  it("every byte its own chunk", () => {
    for (const [, adapter, text] of cases) {
      const data = bytes(text)
      expect(runStream(adapter, splitAt(data, [...data.keys()]))).toEqual(runStream(adapter, [data]))
    }
  })

  it("thinking text with emoji and CJK split inside each code point", () => {
    const text = A.sseThinkingToolUse
    const data = bytes(text)
    const needle = bytes("☀️ 天气预报")
    const at = data.findIndex((_, i) => needle.every((b, j) => data[i + j] === b))
    expect(at).toBeGreaterThan(0)
    for (let i = at + 1; i < at + needle.length; i++) {
      expect(runStream(anthropicAdapter, splitAt(data, [i])).thinking?.text).toBe(
        A.sseThinkingToolUseExpected.thinking.text
      )
    }
  })
})
