/** `jsonDepth` against the depth of the parsed value, on any JSON and on texts cut anywhere. */
import { describe, expect, it } from "vitest"
import * as fc from "fast-check"
import { jsonDepth } from "../../../adapters/http/JsonDepth.js"
import { fuzzParameters } from "../../support/Fuzz.js"

const depthOf = (value: unknown): number =>
  typeof value === "object" && value !== null
    ? 1 + Math.max(0, ...Object.values(value as Record<string, unknown>).map(depthOf))
    : 0

describe("jsonDepth", () => {
  it("equals the nesting of the parsed value, whatever the strings hold", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), (value) => {
        expect(jsonDepth(JSON.stringify(value))).toBe(depthOf(value))
      }),
      fuzzParameters(500)
    )
  })

  it("never throws and stays within the text's length on arbitrary text", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 300 }), (text) => {
        const depth = jsonDepth(text)
        expect(depth).toBeGreaterThanOrEqual(0)
        expect(depth).toBeLessThanOrEqual(text.length)
      }),
      fuzzParameters(500)
    )
  })

  it("counts brackets, not escaped quotes", () => {
    expect(jsonDepth(String.raw`{"a": "\"[[[", "b": [[1]]}`)).toBe(3)
    expect(jsonDepth("[".repeat(10_000))).toBe(10_000)
  })
})
