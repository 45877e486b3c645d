/**
 * Counting a request's tools from its bytes (adapters/gateway/ToolCount.ts) against counting them on
 * the parsed body: on random bodies of every provider's shape (with other members of any JSON value,
 * escaped keys and strings full of quotes and brackets), the scan says "over the cap" exactly when the
 * parsed count is; on bytes cut at a random point or random text it never throws. Fixed seed,
 * bounded runs.
 */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { toolEntriesOf, toolEntriesOver } from "../../../adapters/gateway/ToolCount.js"
import type { ProviderName } from "../../../adapters/providers/Provider.js"
import { fuzzParameters } from "../../support/Fuzz.js"

const bytes = (text: string) => Buffer.from(text)

/** Strings that make a careless scanner lose its place: quotes, backslashes, brackets, non-ASCII. */
const tricky = fc.string({ unit: fc.constantFrom('"', "\\", "[", "]", "{", "}", ",", ":", "a", "é", "\u2028") })
const value = fc.oneof(fc.jsonValue({ maxDepth: 3 }), tricky)
const toolList = fc.array(fc.oneof(fc.record({ name: tricky, input_schema: value }), value), { maxLength: 12 })
const geminiTools = fc.array(
  fc.oneof(
    fc.record({ functionDeclarations: fc.array(fc.record({ name: tricky }), { maxLength: 6 }) }),
    fc.dictionary(fc.string({ maxLength: 8 }), value, { maxKeys: 3 }),
    value
  ),
  { maxLength: 5 }
)

/** A body as a provider's SDK would send it, members in any order, sometimes with white space. */
const bodies = (provider: ProviderName) =>
  fc
    .record({
      others: fc.dictionary(
        fc.string({ maxLength: 6 }).filter((k) => k !== "tools" && k !== "functions"),
        value,
        { maxKeys: 4 }
      ),
      tools: provider === "gemini" ? geminiTools : toolList,
      functions: toolList,
      spaced: fc.boolean(),
      escaped: fc.boolean()
    })
    .map(({ escaped, functions, others, spaced, tools }) => {
      const members: Record<string, unknown> = { ...others, tools }
      if (provider === "openai") members["functions"] = functions
      let text = JSON.stringify(members, null, spaced ? 2 : undefined)
      // `"t\u006fols"` is `"tools"` to JSON.parse, and so to the scan.
      if (escaped) text = text.replace('"tools"', '"t\\u006fols"')
      return text
    })

describe("toolEntriesOver", () => {
  for (const provider of ["anthropic", "openai", "gemini"] as const) {
    it(`${provider}: over the cap exactly when the parsed body's count is (and says the cap + 1), else within`, () => {
      fc.assert(
        fc.property(bodies(provider), fc.integer({ min: 0, max: 14 }), (text, cap) => {
          const exact = toolEntriesOf(provider, JSON.parse(text))
          expect(toolEntriesOver(provider, bytes(text), cap)).toBe(exact > cap ? cap + 1 : "within")
        }),
        fuzzParameters(400)
      )
    })
  }

  it("never throws on bytes cut anywhere, or on any text", () => {
    fc.assert(
      fc.property(bodies("gemini"), fc.nat(), fc.integer({ min: 0, max: 5 }), (text, at, cap) => {
        const cut = text.slice(0, at % (text.length + 1))
        const over = toolEntriesOver("gemini", bytes(cut), cap)
        const exact = toolEntriesOf("gemini", JSON.parse(text))
        // A first part decides only what the whole would: over when the whole is, within when it is.
        if (over === cap + 1) expect(exact).toBeGreaterThan(cap)
        else if (over === "within") expect(exact).toBeLessThanOrEqual(cap)
        else expect(over).toBeUndefined()
      }),
      fuzzParameters(400)
    )
    fc.assert(
      fc.property(fc.string(), fc.constantFrom("anthropic", "openai", "gemini"), (text, provider) => {
        expect(() => toolEntriesOver(provider, bytes(text), 1)).not.toThrow()
      }),
      fuzzParameters(400)
    )
  })

  it("refuses a list past the cap even when a later duplicate member would replace it (parsers disagree on which wins)", () => {
    expect(toolEntriesOver("anthropic", bytes('{"tools":[1,2,3],"tools":[]}'), 2)).toBe(3)
    expect(toolEntriesOf("anthropic", JSON.parse('{"tools":[1,2,3],"tools":[]}'))).toBe(0)
  })

  it("gives up on what is not plainly a JSON object: a byte-order mark, an array, a syntax error", () => {
    for (const text of ['\ufeff{"tools":[1,2,3]}', "[1,2,3]", '{"tools":[1,2,,3]}', '{"tools" [1,2,3]}', ""]) {
      expect(toolEntriesOver("anthropic", bytes(text), 5)).toBeUndefined()
    }
  })

  it("stops at the cap: the rest of a flood is never read", () => {
    // Everything after the 3rd entry is garbage: a scan that read on would give up instead.
    expect(toolEntriesOver("anthropic", bytes(`{"tools":[{},{},{},${"x".repeat(1000)}`), 2)).toBe(3)
  })
})
