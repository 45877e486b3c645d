/**
 * The JSON Patch differ (core/JsonPatch.ts): what it writes for the cases a card history meets
 * (members added, removed, changed; arrays growing and shrinking; pointer escaping), and, for any
 * two JSON documents, that its patch applied to the first gives the second (RFC 6902 semantics,
 * applied by an independent oracle below) and that equal documents give an empty patch.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import { diffJson, escapePointerToken, jsonEqual } from "../../core/JsonPatch.js"
import type { JsonPatchOperation } from "../../core/schema/JsonPatch.js"

/** RFC 6901 token decoding: `~1` is `/`, then `~0` is `~`. */
const tokens = (path: string): Array<string> =>
  path === ""
    ? []
    : path
        .slice(1)
        .split("/")
        .map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"))

/** RFC 6902 add / remove / replace on a deep copy (the oracle: written from the RFC, not from the differ). */
const apply = (doc: unknown, ops: ReadonlyArray<JsonPatchOperation>): unknown => {
  let root: any = structuredClone(doc)
  for (const op of ops) {
    const path = tokens(op.path)
    if (path.length === 0) {
      if (op.op !== "replace") throw new Error(`unexpected ${op.op} at the root`)
      root = structuredClone(op.value)
      continue
    }
    const parent = path.slice(0, -1).reduce((node, token) => node[Array.isArray(node) ? Number(token) : token], root)
    const last = path[path.length - 1]!
    if (Array.isArray(parent)) {
      const index = last === "-" ? parent.length : Number(last)
      if (op.op === "add") {
        if (index > parent.length) throw new Error(`add past the end at ${op.path}`)
        parent.splice(index, 0, structuredClone(op.value))
      } else if (op.op === "remove") {
        if (index >= parent.length) throw new Error(`remove of a missing index ${op.path}`)
        parent.splice(index, 1)
      } else if (op.op === "replace") {
        if (index >= parent.length) throw new Error(`replace of a missing index ${op.path}`)
        parent[index] = structuredClone(op.value)
      }
    } else {
      // defineProperty: a member named __proto__ is a member like any other in JSON.
      const set = (value: unknown) =>
        Object.defineProperty(parent, last, {
          value: structuredClone(value),
          enumerable: true,
          writable: true,
          configurable: true
        })
      if (op.op === "add") set(op.value)
      else if (op.op === "remove") {
        if (!Object.prototype.hasOwnProperty.call(parent, last))
          throw new Error(`remove of a missing member ${op.path}`)
        delete parent[last]
      } else if (op.op === "replace") {
        if (!Object.prototype.hasOwnProperty.call(parent, last))
          throw new Error(`replace of a missing member ${op.path}`)
        set(op.value)
      }
    }
  }
  return root
}

describe("diffJson", () => {
  it("writes add, remove and replace at the members that differ, in name order", () => {
    expect(
      diffJson(
        { name: "a", values: { declared: ["honesty"] }, gone: 1, same: [1, 2] },
        { name: "b", values: { declared: ["honesty", "privacy"] }, added: { x: null }, same: [1, 2] }
      )
    ).toEqual([
      { op: "remove", path: "/gone" },
      { op: "add", path: "/added", value: { x: null } },
      { op: "replace", path: "/name", value: "b" },
      { op: "add", path: "/values/declared/1", value: "privacy" }
    ])
  })

  it("shrinks arrays from the end backwards, so every index is valid when it applies", () => {
    expect(diffJson({ a: [1, 2, 3, 4] }, { a: [9, 2] })).toEqual([
      { op: "replace", path: "/a/0", value: 9 },
      { op: "remove", path: "/a/3" },
      { op: "remove", path: "/a/2" }
    ])
  })

  it("escapes ~ and / in member names (RFC 6901) and replaces across types", () => {
    expect(escapePointerToken("a/b~c")).toBe("a~1b~0c")
    expect(diffJson({ "a/b": 1, "c~d": [1] }, { "a/b": 2, "c~d": { x: 1 } })).toEqual([
      { op: "replace", path: "/a~1b", value: 2 },
      { op: "replace", path: "/c~0d", value: { x: 1 } }
    ])
    expect(diffJson([1], { a: 1 })).toEqual([{ op: "replace", path: "", value: { a: 1 } }])
    expect(diffJson({}, { a: 1, b: [2] })).toEqual([
      { op: "add", path: "/a", value: 1 },
      { op: "add", path: "/b", value: [2] }
    ])
  })

  it("a member named __proto__ is a member like any other", () => {
    const to = JSON.parse('{"__proto__": false}') as unknown
    expect(diffJson({}, to)).toEqual([{ op: "add", path: "/__proto__", value: false }])
    expect(diffJson(to, {})).toEqual([{ op: "remove", path: "/__proto__" }])
    expect(jsonEqual({}, to)).toBe(false)
  })

  it("equal documents (members in any order) give an empty patch", () => {
    expect(diffJson({ a: 1, b: { c: [1, { d: 2 }] } }, { b: { c: [1, { d: 2 }] }, a: 1 })).toEqual([])
    expect(jsonEqual({ a: [1, 2] }, { a: [2, 1] })).toBe(false)
  })

  it("for any two JSON documents, applying the patch to the first gives the second", () => {
    const json = FastCheck.jsonValue({ maxDepth: 4 }).map((value) => JSON.parse(JSON.stringify(value)) as unknown)
    FastCheck.assert(
      FastCheck.property(json, json, (from, to) => {
        expect(jsonEqual(apply(from, diffJson(from, to)), to)).toBe(true)
        expect(diffJson(to, to)).toEqual([])
      }),
      { numRuns: 500 }
    )
  })

  it("also for documents that are close to each other (edits of one document)", () => {
    const card = FastCheck.record({
      values: FastCheck.record({
        declared: FastCheck.array(FastCheck.constantFrom("a", "b", "c", "d"), { maxLength: 5 })
      }),
      retention: FastCheck.integer({ min: 1, max: 5 }),
      "odd/name~": FastCheck.option(FastCheck.boolean(), { nil: undefined })
    }).map((value) => JSON.parse(JSON.stringify(value)) as unknown)
    FastCheck.assert(
      FastCheck.property(card, card, (from, to) => {
        expect(jsonEqual(apply(from, diffJson(from, to)), to)).toBe(true)
      }),
      { numRuns: 500 }
    )
  })
})
