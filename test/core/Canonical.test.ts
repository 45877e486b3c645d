import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { toHex } from "../../core/Bytes.js"
import { canonicalBytes, canonicalHash, canonicalJson, tryCanonicalJson } from "../../core/Canonical.js"
import { vectorPath } from "../Vectors.js"

const names = readdirSync(vectorPath("jcs", "input"))
  .filter((name) => name.endsWith(".json"))
  .sort()

describe("RFC 8785 canonical JSON", () => {
  it("has the official vectors", () => {
    expect(names.length).toBeGreaterThanOrEqual(6)
  })

  for (const name of names) {
    it(`matches the expected output and bytes of ${name}`, () => {
      const input = JSON.parse(readFileSync(join(vectorPath("jcs", "input"), name), "utf8"))
      const expected = readFileSync(join(vectorPath("jcs", "output"), name), "utf8")
      const hex = readFileSync(join(vectorPath("jcs", "outhex"), name.replace(/\.json$/, ".txt")), "utf8").replace(
        /\s+/g,
        ""
      )
      expect(canonicalJson(input)).toBe(expected)
      expect(toHex(canonicalBytes(input))).toBe(hex)
    })
  }

  it("is independent of key insertion order", () => {
    expect(canonicalJson({ b: 1, a: [true, null, "x"] })).toBe(canonicalJson({ a: [true, null, "x"], b: 1 }))
    expect(toHex(canonicalHash("test", { b: 1, a: 2 }))).toBe(toHex(canonicalHash("test", { a: 2, b: 1 })))
  })

  it("separates hashes by purpose", () => {
    expect(toHex(canonicalHash("one", { a: 1 }))).not.toBe(toHex(canonicalHash("two", { a: 1 })))
  })

  it("refuses values JSON cannot carry, without throwing in the tolerant variant", () => {
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, { x: Number.NEGATIVE_INFINITY }, "\ud800", undefined]) {
      expect(() => canonicalJson(bad)).toThrow()
      expect(tryCanonicalJson(bad)).toBeUndefined()
    }
    const cycle: Record<string, unknown> = {}
    cycle.self = cycle
    expect(tryCanonicalJson(cycle)).toBeUndefined()
  })
})
