/**
 * Nudge injection: the nudge lands in the provider's system prompt, the input is not changed, and
 * every other field re-serializes byte for byte as before.
 */
import { describe, expect, it } from "@effect/vitest"
import { anthropicAdapter } from "../../../adapters/providers/Anthropic.js"
import { geminiAdapter } from "../../../adapters/providers/Gemini.js"
import { openaiAdapter } from "../../../adapters/providers/OpenAi.js"
import type { ProviderAdapter } from "../../../adapters/providers/Provider.js"

const NUDGE = "Candor: your last reasoning crossed a boundary; reconsider."

/** Injects, checks the input is untouched and that all fields but `changed` serialize as before. */
const inject = (adapter: ProviderAdapter, bodyJson: string, changed: string): Record<string, unknown> => {
  const body = JSON.parse(bodyJson) as Record<string, unknown>
  const out = adapter.injectNudge(body, NUDGE) as Record<string, unknown>
  expect(JSON.stringify(body)).toBe(bodyJson) // input unchanged
  const { [changed]: _a, ...restIn } = body
  const { [changed]: _b, ...restOut } = out
  expect(JSON.stringify(restOut)).toBe(JSON.stringify(restIn))
  return out
}

const anthropicBase = {
  model: "claude-sonnet-4-5",
  max_tokens: 1024,
  stream: true,
  messages: [{ role: "user", content: "hi" }],
  tools: [{ name: "t", input_schema: { type: "object" } }]
}

describe("anthropic nudge", () => {
  it("no system: the nudge becomes the system", () => {
    expect(inject(anthropicAdapter, JSON.stringify(anthropicBase), "system")["system"]).toBe(NUDGE)
  })

  it("string system: appended", () => {
    const out = inject(anthropicAdapter, JSON.stringify({ system: "Be brief.", ...anthropicBase }), "system")
    expect(out["system"]).toBe(`Be brief.\n\n${NUDGE}`)
    expect(Object.keys(out)[0]).toBe("system") // key order kept
  })

  it("array system with cache_control: a new text block at the end, cached blocks untouched", () => {
    const system = [
      { type: "text", text: "You are an agent.", cache_control: { type: "ephemeral" } },
      { type: "text", text: "Long manual…", cache_control: { type: "ephemeral", ttl: "1h" } }
    ]
    const out = inject(anthropicAdapter, JSON.stringify({ ...anthropicBase, system }), "system")
    expect(out["system"]).toEqual([...system, { type: "text", text: NUDGE }])
  })

  it("not a messages request: undefined", () => {
    expect(anthropicAdapter.injectNudge({ prompt: "x" }, NUDGE)).toBeUndefined()
    expect(anthropicAdapter.injectNudge("x", NUDGE)).toBeUndefined()
  })
})

describe("openai nudge", () => {
  const chat = (messages: unknown) =>
    JSON.stringify({ model: "gpt-4o", messages, temperature: 0.2, stream: true, tools: [] })

  it("no system message: a system message first", () => {
    const out = inject(openaiAdapter, chat([{ role: "user", content: "hi" }]), "messages")
    expect(out["messages"]).toEqual([
      { role: "system", content: NUDGE },
      { role: "user", content: "hi" }
    ])
  })

  it("leading system message (string content): extended, the rest unchanged", () => {
    const out = inject(
      openaiAdapter,
      chat([
        { role: "system", content: "Rules.", name: "s" },
        { role: "user", content: "hi" }
      ]),
      "messages"
    )
    expect(out["messages"]).toEqual([
      { role: "system", content: `Rules.\n\n${NUDGE}`, name: "s" },
      { role: "user", content: "hi" }
    ])
  })

  it("leading developer message with content parts: a text part appended", () => {
    const out = inject(
      openaiAdapter,
      chat([
        { role: "developer", content: [{ type: "text", text: "Rules." }] },
        { role: "user", content: "hi" }
      ]),
      "messages"
    )
    expect(out["messages"]).toEqual([
      {
        role: "developer",
        content: [
          { type: "text", text: "Rules." },
          { type: "text", text: NUDGE }
        ]
      },
      { role: "user", content: "hi" }
    ])
  })

  it("developer messages used later: the new first message is a developer message", () => {
    const out = inject(
      openaiAdapter,
      chat([
        { role: "user", content: "hi" },
        { role: "developer", content: "late" }
      ]),
      "messages"
    )
    expect((out["messages"] as Array<unknown>)[0]).toEqual({ role: "developer", content: NUDGE })
  })

  it("responses: instructions set or appended", () => {
    expect(
      inject(openaiAdapter, JSON.stringify({ model: "o4-mini", input: "hi", stream: true }), "instructions")[
        "instructions"
      ]
    ).toBe(NUDGE)
    expect(
      inject(
        openaiAdapter,
        JSON.stringify({ model: "o4-mini", instructions: "Be safe.", input: [{ role: "user", content: "hi" }] }),
        "instructions"
      )["instructions"]
    ).toBe(`Be safe.\n\n${NUDGE}`)
  })
})

describe("gemini nudge", () => {
  const base = {
    contents: [{ role: "user", parts: [{ text: "hi" }] }],
    generationConfig: { thinkingConfig: { includeThoughts: true } }
  }

  it("no systemInstruction: added", () => {
    expect(inject(geminiAdapter, JSON.stringify(base), "systemInstruction")["systemInstruction"]).toEqual({
      parts: [{ text: NUDGE }]
    })
  })

  it("systemInstruction: a part appended", () => {
    const out = inject(
      geminiAdapter,
      JSON.stringify({ systemInstruction: { role: "system", parts: [{ text: "Rules." }] }, ...base }),
      "systemInstruction"
    )
    expect(out["systemInstruction"]).toEqual({ role: "system", parts: [{ text: "Rules." }, { text: NUDGE }] })
  })

  it("system_instruction (snake case) keeps its spelling", () => {
    const out = inject(
      geminiAdapter,
      JSON.stringify({ ...base, system_instruction: { parts: [{ text: "Rules." }] } }),
      "system_instruction"
    )
    expect(out["system_instruction"]).toEqual({ parts: [{ text: "Rules." }, { text: NUDGE }] })
    expect("systemInstruction" in out).toBe(false)
  })

  it("not a generateContent request: undefined", () => {
    expect(geminiAdapter.injectNudge({ model: "x" }, NUDGE)).toBeUndefined()
  })
})
