import { describe, expect, it } from "@effect/vitest"
import canonicalize from "canonicalize"
import fc from "fast-check"
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

  // The `canonicalize` package, by an RFC 8785 author, is the oracle of the serializer written here.
  const oracle = (value: unknown): string | undefined => {
    try {
      return canonicalize(value)
    } catch {
      return undefined
    }
  }

  it("writes what the canonicalize package writes, for any JSON value and unicode text", () => {
    // Strings of any UTF-16 code units: lone surrogates too, refused by both.
    const text = fc.oneof(
      fc.string({ unit: "binary" }),
      fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) })
    )
    fc.assert(
      fc.property(
        fc.oneof(
          fc.jsonValue(),
          fc.dictionary(text, fc.oneof(text, fc.double({ noNaN: true, noDefaultInfinity: true }), fc.jsonValue()))
        ),
        (value) => {
          expect(tryCanonicalJson(value)).toBe(oracle(value))
        }
      ),
      { numRuns: 500 }
    )
  })

  it("quotes every code unit at the edges of plain ASCII as the package does, in keys and values", () => {
    // Plain ASCII is quoted as it is; each of these needs an escape, or lies just past the plain range.
    const edges = ["", " ", "~", '"', "\\", "\u001f", "\u007f", "\u0080", 'a"b', "a\\b", "tab\there", "é", "\u2028"]
    for (const text of edges) {
      expect(canonicalJson(text)).toBe(canonicalize(text))
      expect(canonicalJson({ [text]: text })).toBe(canonicalize({ [text]: text }))
    }
    const everyAscii = String.fromCharCode(...Array.from({ length: 128 }, (_, i) => i))
    expect(canonicalJson({ [everyAscii]: everyAscii })).toBe(canonicalize({ [everyAscii]: everyAscii }))
  })

  it("refuses a string or key with a lone surrogate wherever it is, as the package does", () => {
    for (const bad of [["a", "\udc00"], { ["k\ud800"]: 1 }, { a: { b: "x\ud83dy" } }, "\ud83d"]) {
      expect(() => canonicalize(bad)).toThrow()
      expect(tryCanonicalJson(bad)).toBeUndefined()
    }
    expect(canonicalJson("\ud83d\ude00")).toBe(canonicalize("\ud83d\ude00"))
  })

  it("skips undefined members, writes undefined elements as null, and honours toJSON", () => {
    const value = { a: undefined, b: [undefined, 1], at: new Date(0), nested: { toJSON: () => ({ z: 1, y: [2] }) } }
    expect(canonicalJson(value)).toBe(canonicalize(value))
    expect(canonicalJson(value)).toBe('{"at":"1970-01-01T00:00:00.000Z","b":[null,1],"nested":{"y":[2],"z":1}}')
  })

  it("finds a cycle however deep it starts, and serializes a deep acyclic document", () => {
    const deep: Array<unknown> = []
    let tip = deep
    for (let i = 0; i < 200; i++) tip.push((tip = []))
    expect(canonicalJson(deep)).toBe("[".repeat(201) + "]".repeat(201))
    // A shared (not circular) object below the depth where ancestors are tracked is not a cycle.
    const shared = { s: 1 }
    tip.push(shared, shared)
    expect(canonicalJson(deep)).toBe(canonicalize(deep))
    tip.push(deep)
    expect(tryCanonicalJson(deep)).toBeUndefined()
  })
})
