/**
 * RFC 8785 JSON Canonicalization Scheme: the only serialization Candor ever hashes or signs, so a
 * third party re-serializing our JSON in any language gets the same bytes.
 *
 * The `canonicalize` package (by an RFC 8785 author) does the work: ES2015 number serialization,
 * UTF-16 code-unit key order, and refusal of NaN, Infinity and lone surrogates.
 */
import canonicalize from "canonicalize"
import { utf8 } from "./Bytes.js"
import { taggedHash } from "./Hash.js"

/** The canonical text of a JSON value. Throws on values JSON cannot represent (NaN, cycles, lone surrogates). */
export const canonicalJson = (value: unknown): string => {
  const text = canonicalize(value)
  if (text === undefined) throw new TypeError("value has no JSON representation")
  return text
}

/** Like {@link canonicalJson}, for untrusted input: `undefined` instead of an exception. */
export const tryCanonicalJson = (value: unknown): string | undefined => {
  try {
    return canonicalize(value)
  } catch {
    return undefined
  }
}

export const canonicalBytes = (value: unknown): Uint8Array => utf8(canonicalJson(value))

/** `SHA-256("candor/v1/<purpose>\0" ‖ JCS(value))`: the commitment to a JSON document. */
export const canonicalHash = (purpose: string, value: unknown): Uint8Array => taggedHash(purpose, canonicalBytes(value))
