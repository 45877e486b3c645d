/**
 * RFC 8785 JSON Canonicalization Scheme: the only serialization Candor ever hashes or signs, so a
 * third party re-serializing our JSON in any language gets the same bytes.
 *
 * Written here rather than taken from the `canonicalize` package (by an RFC 8785 author), which the
 * tests keep as the oracle: every checkpoint is canonicalized three times on the worker's hot path
 * (its analysis, its certificate, its chain entry), and the package checks every string for lone
 * surrogates one code unit at a time in JavaScript and tracks ancestors in a Set, twice the time
 * of this one (bench/Core.ts). The rules are few: ECMAScript's own number and string serialization
 * (what `JSON.stringify` does for finite numbers and well-formed strings), object members sorted by
 * UTF-16 code units (the default `sort`), `toJSON` honoured as `JSON.stringify` does, and refusal of
 * NaN, the infinities and lone surrogates (I-JSON).
 */
import { utf8 } from "./Bytes.js"
import { taggedHash } from "./Hash.js"

/** `String.prototype.isWellFormed` (ES2024, native in every Node this runs on): no lone surrogate. */
const isWellFormed = (text: string): boolean => (text as unknown as { isWellFormed(): boolean }).isWellFormed()

/**
 * Past this depth the objects being serialized are kept in a Set, each looked for among them: only a
 * cycle goes on for ever, and shallower documents (all of ours) skip the Set's cost.
 */
const CYCLE_CHECK_DEPTH = 64

interface Ancestors {
  depth: number
  deep: Set<object> | undefined
}

const enter = (value: object, ancestors: Ancestors): void => {
  if (++ancestors.depth > CYCLE_CHECK_DEPTH) {
    const deep = (ancestors.deep ??= new Set())
    if (deep.has(value)) throw new TypeError("circular reference")
    deep.add(value)
  }
}

const leave = (value: object, ancestors: Ancestors): void => {
  if (ancestors.depth-- > CYCLE_CHECK_DEPTH) ancestors.deep!.delete(value)
}

/** Printable ASCII but `"` and `\\`: a string JSON quotes as it is. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/

/**
 * A string as JSON text. Member names, ids, hashes, enums and most prose we hash are plain ASCII,
 * which needs neither the check for lone surrogates nor `JSON.stringify`'s escaping: quoted as they
 * are, a checkpoint's analysis takes some 40% less time (bench/Core.ts). One pass over the text, and
 * a second only for a string that is not plain.
 */
const quoted = (text: string): string => {
  if (PLAIN.test(text)) return `"${text}"`
  if (!isWellFormed(text)) throw new TypeError("lone surrogates are not allowed")
  return JSON.stringify(text)
}

const serialize = (value: unknown, ancestors: Ancestors): string => {
  switch (typeof value) {
    case "string":
      return quoted(value)
    case "number":
      if (!Number.isFinite(value)) throw new TypeError(`${value} is not allowed`)
      return JSON.stringify(value)
    case "boolean":
      return value ? "true" : "false"
    case "object":
      break
    default:
      // undefined, functions, symbols and bigints: no JSON text (members and elements are handled below).
      throw new TypeError(`a ${typeof value} has no JSON representation`)
  }
  if (value === null) return "null"
  enter(value, ancestors)
  const toJSON = (value as { readonly toJSON?: unknown }).toJSON
  if (typeof toJSON === "function") {
    const text = serialize(toJSON.call(value), ancestors)
    leave(value, ancestors)
    return text
  }
  let text: string
  if (Array.isArray(value)) {
    text = "["
    for (let i = 0; i < value.length; i++) {
      const element: unknown = value[i]
      if (i > 0) text += ","
      text += element === undefined || typeof element === "symbol" ? "null" : serialize(element, ancestors)
    }
    text += "]"
  } else {
    text = "{"
    const record = value as Record<string, unknown>
    for (const key of Object.keys(record).sort()) {
      const member = record[key]
      if (member === undefined || typeof member === "symbol") continue
      if (text.length > 1) text += ","
      text += quoted(key) + ":" + serialize(member, ancestors)
    }
    text += "}"
  }
  leave(value, ancestors)
  return text
}

/** The canonical text of a JSON value. Throws on values JSON cannot represent (NaN, cycles, lone surrogates). */
export const canonicalJson = (value: unknown): string => serialize(value, { depth: 0, deep: undefined })

/** Like {@link canonicalJson}, for untrusted input: `undefined` instead of an exception. */
export const tryCanonicalJson = (value: unknown): string | undefined => {
  try {
    return canonicalJson(value)
  } catch {
    return undefined
  }
}

export const canonicalBytes = (value: unknown): Uint8Array => utf8(canonicalJson(value))

/** `SHA-256("candor/v1/<purpose>\0" ‖ JCS(value))`: the commitment to a JSON document. */
export const canonicalHash = (purpose: string, value: unknown): Uint8Array => taggedHash(purpose, canonicalBytes(value))
