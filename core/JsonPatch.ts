/**
 * A small RFC 6902 JSON Patch differ: the operations that turn one JSON document into another,
 * for the team card history (each version's `diff` from the one before).
 *
 * Hand-written because no JSON Patch library is installed (node_modules has none: no
 * fast-json-patch, rfc6902 or jsondiffpatch), and the need is narrow: JSON values only (as read
 * back from the store), `add` / `remove` / `replace` only, no attempt at a minimal patch (no
 * `move` / `copy` detection). Deterministic: object members are visited in code-point order, and
 * arrays are compared index by index, so the same two documents always give the same patch.
 *
 * Arrays: common indexes are diffed in place, extra elements of the target are appended in order
 * (`add` at each new index), surplus elements of the source are removed from the end backwards,
 * so every operation's index is valid at the moment it applies.
 */
import type { JsonPatchOperation } from "./schema/JsonPatch.js"

type JsonObject = { readonly [key: string]: unknown }

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** RFC 6901 §3: `~` is written `~0` and `/` is written `~1`. */
export const escapePointerToken = (token: string): string => token.replace(/~/g, "~0").replace(/\//g, "~1")

/** An own member only: a card may hold a member named `__proto__` (JSON.parse makes it an own one). */
const member = (value: JsonObject, key: string): unknown =>
  Object.prototype.hasOwnProperty.call(value, key) ? value[key] : undefined

const keysOf = (value: JsonObject): Array<string> =>
  Object.keys(value)
    .filter((key) => value[key] !== undefined)
    .sort()

/** Structural equality of JSON values (member order does not matter, array order does). */
export const jsonEqual = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]))
  if (isObject(a) && isObject(b)) {
    const keys = keysOf(a)
    const other = keysOf(b)
    return (
      keys.length === other.length &&
      keys.every((key, i) => key === other[i] && jsonEqual(member(a, key), member(b, key)))
    )
  }
  return false
}

const walk = (from: unknown, to: unknown, path: string, ops: Array<JsonPatchOperation>): void => {
  if (jsonEqual(from, to)) return
  if (isObject(from) && isObject(to)) {
    for (const key of keysOf(from)) {
      if (member(to, key) === undefined) ops.push({ op: "remove", path: `${path}/${escapePointerToken(key)}` })
    }
    for (const key of keysOf(to)) {
      const at = `${path}/${escapePointerToken(key)}`
      if (member(from, key) === undefined) ops.push({ op: "add", path: at, value: member(to, key) })
      else walk(member(from, key), member(to, key), at, ops)
    }
    return
  }
  if (Array.isArray(from) && Array.isArray(to)) {
    const common = Math.min(from.length, to.length)
    for (let i = 0; i < common; i++) walk(from[i], to[i], `${path}/${i}`, ops)
    for (let i = common; i < to.length; i++) ops.push({ op: "add", path: `${path}/${i}`, value: to[i] })
    for (let i = from.length - 1; i >= to.length; i--) ops.push({ op: "remove", path: `${path}/${i}` })
    return
  }
  ops.push({ op: "replace", path, value: to })
}

/** The RFC 6902 patch from `from` to `to` (empty when they are equal). */
export const diffJson = (from: unknown, to: unknown): ReadonlyArray<JsonPatchOperation> => {
  const ops: Array<JsonPatchOperation> = []
  walk(from, to, "", ops)
  return ops
}
