import { describe, expect, it } from "@effect/vitest"
import { anthropicAdapter } from "../../../adapters/providers/Anthropic.js"
import { inferThinking, withInferredThinking } from "../../../adapters/providers/Fallback.js"
import { geminiAdapter } from "../../../adapters/providers/Gemini.js"
import { bearerToken, keyHashesEqual, sha256Hex } from "../../../adapters/providers/Identity.js"
import { openaiAdapter } from "../../../adapters/providers/OpenAi.js"

const KEY = "sk-ant-api03-SECRET"
const HASH = sha256Hex(KEY)
const url = new URL("https://x.test/v1/messages")

describe("key hashing", () => {
  it("sha256Hex is the SHA-256 of the UTF-8 bytes", () => {
    expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
  })

  it("anthropic: x-api-key or Authorization: Bearer, same hash, never the key", () => {
    expect(anthropicAdapter.keyHash(new Headers({ "x-api-key": KEY }), url)).toBe(HASH)
    expect(anthropicAdapter.keyHash(new Headers({ authorization: `Bearer ${KEY}` }), url)).toBe(HASH)
    expect(anthropicAdapter.keyHash(new Headers({}), url)).toBeUndefined()
    expect(HASH).not.toContain(KEY)
  })

  it("openai: Authorization: Bearer (scheme case-insensitive)", () => {
    expect(openaiAdapter.keyHash(new Headers({ authorization: `bearer ${KEY}` }), url)).toBe(HASH)
    expect(openaiAdapter.keyHash(new Headers({ authorization: `Basic ${KEY}` }), url)).toBeUndefined()
    expect(openaiAdapter.keyHash(new Headers({ "x-api-key": KEY }), url)).toBeUndefined()
  })

  it("gemini: x-goog-api-key or ?key=", () => {
    expect(geminiAdapter.keyHash(new Headers({ "x-goog-api-key": KEY }), url)).toBe(HASH)
    expect(
      geminiAdapter.keyHash(new Headers(), new URL(`https://x.test/v1beta/models/m:generateContent?key=${KEY}`))
    ).toBe(HASH)
    expect(geminiAdapter.keyHash(new Headers(), url)).toBeUndefined()
  })

  it("empty keys are no identity; hashes compare in constant time", () => {
    expect(anthropicAdapter.keyHash(new Headers({ "x-api-key": "" }), url)).toBeUndefined()
    expect(bearerToken("Bearer ")).toBeUndefined()
    expect(keyHashesEqual(HASH, HASH.toUpperCase())).toBe(true)
    expect(keyHashesEqual(HASH, sha256Hex("other"))).toBe(false)
    expect(keyHashesEqual(HASH, "zz")).toBe(false)
  })
})

describe("fallback", () => {
  it("fallback picks deliberation sentences, confidence 0.3", () => {
    const x = inferThinking(
      "Sure thing. Let me check the logs first. The answer is 4.\nHowever, the cache may be stale! I'll clear it."
    )
    expect(x).toEqual({
      text: "Let me check the logs first.\nHowever, the cache may be stale!\nI'll clear it.",
      source: "fallback",
      confidence: 0.3
    })
    expect(inferThinking("The answer is 4.")).toBeUndefined()
    expect(inferThinking("Butter is tasty.")).toBeUndefined()
  })

  it("one deliberation-like sentence is a turn of phrase, not reasoning: no fallback (tracing only)", () => {
    expect(inferThinking("The file is empty. However, the directory exists.")).toBeUndefined()
    expect(inferThinking("However, the directory exists. Let me know if you need more.")?.text).toBe(
      "However, the directory exists.\nLet me know if you need more."
    )
  })

  it("a tagged reasoning section in the text is the reasoning, whatever else the answer says", () => {
    expect(inferThinking("<thinking>The user wants X.\nI will do Y.</thinking>Here is Y.")).toEqual({
      text: "The user wants X.\nI will do Y.",
      source: "fallback",
      confidence: 0.3
    })
    expect(inferThinking("<think>a</think> answer <reasoning>b</reasoning>")?.text).toBe("a\nb")
    // Never closed: to the end of the text. Empty: nothing.
    expect(inferThinking("Answer. <think>still going")?.text).toBe("still going")
    expect(inferThinking("<think></think>Plain answer.")).toBeUndefined()
  })

  it("hostile text: many unclosed or unmatched tags are scanned once, in linear time", () => {
    // 50,000 openings of one tag and none of the others: the others' searches are not repeated per
    // section (were they, this would take some 10^10 steps: the test's timeout).
    const many = "<think></think>x".repeat(50_000)
    expect(inferThinking(many)).toBeUndefined()
    const opens = "<reasoning>".repeat(20_000)
    expect(inferThinking(opens)?.text).toBe("<reasoning>".repeat(19_999))
  })

  it("the fallback stands in only where the provider exposed no reasoning, encrypted or readable, and no error", () => {
    const prose = "Let me look. I think so. Done."
    const answer = anthropicAdapter.extractJson({ content: [{ type: "text", text: prose }] })
    expect(withInferredThinking(answer).thinking).toEqual({
      text: "Let me look.\nI think so.",
      source: "fallback",
      confidence: 0.3
    })
    const native = anthropicAdapter.extractJson({
      content: [
        { type: "thinking", thinking: "mine" },
        { type: "text", text: prose }
      ]
    })
    expect(withInferredThinking(native).thinking?.source).toBe("thinking_blocks")
    const redacted = anthropicAdapter.extractJson({
      content: [
        { type: "redacted_thinking", data: "x" },
        { type: "text", text: prose }
      ]
    })
    expect(withInferredThinking(redacted)).toMatchObject({ thinking: undefined, redactedThinking: true })
    const failed = { ...answer, providerError: "overloaded_error: Let me retry." }
    expect(withInferredThinking(failed).thinking).toBeUndefined()
  })
})
