/**
 * Agent identity from a provider key: only the key's SHA-256 is ever used. The key string is read
 * from the header, hashed at once and not kept, logged or returned anywhere.
 */
import { hash } from "node:crypto"
import { bytesEqual, fromHex } from "../../core/Bytes.js"
import type { CredentialCarrier, HeaderLookup } from "./Provider.js"

/**
 * SHA-256 (lowercase hex) of a text's UTF-8 bytes: node:crypto's one-shot hash of the string, with
 * no intermediate buffers (the gateway hashes every answer's thinking with it).
 */
export const sha256Hex = (text: string): string => hash("sha256", text, "hex")

/** The hash of a non-empty key, else `undefined` (an empty header is no identity). */
export const keyHashOf = (key: string | null | undefined): string | undefined => {
  const trimmed = key?.trim()
  return trimmed === undefined || trimmed === "" ? undefined : sha256Hex(trimmed)
}

/** The token of an `Authorization: Bearer <token>` header (scheme case-insensitive, per RFC 7235). */
export const bearerToken = (authorization: string | null): string | undefined => {
  if (authorization === null) return undefined
  const match = /^\s*bearer\s+(\S+)\s*$/i.exec(authorization)
  return match?.[1]
}

/**
 * Compares two key hashes in constant time, so a comparison against a stored hash leaks nothing
 * through timing; malformed hex is simply unequal.
 */
export const keyHashesEqual = (a: string, b: string): boolean => {
  const x = fromHex(a)
  const y = fromHex(b)
  return x !== undefined && y !== undefined && bytesEqual(x, y)
}

/**
 * The credential a carrier's value holds: the token of a bearer carrier (`undefined` when the value
 * is not `Bearer <token>`), else the value itself.
 */
export const credentialIn = (carrier: CredentialCarrier, value: string): string | undefined =>
  "header" in carrier && carrier.bearer === true ? bearerToken(value) : value

/** The hash of the credential in the first of `carriers` that is present (`ProviderAdapter.keyHash`). */
export const keyHashFrom = (
  carriers: ReadonlyArray<CredentialCarrier>,
  headers: HeaderLookup,
  url: URL
): string | undefined => {
  for (const carrier of carriers) {
    const value = "header" in carrier ? headers.get(carrier.header) : url.searchParams.get(carrier.query)
    if (value !== null) return keyHashOf(credentialIn(carrier, value))
  }
  return undefined
}
