import { describe, expect, it } from "vitest"
import {
  formatSecretKey,
  generateSecretKey,
  open,
  parseSecretKey,
  seal,
  sealedKeyId,
  type SecretKey
} from "../../core/SecretBox.js"

const AAD = "webhooks.secret:reg-1"
const SECRET = "whsec-0123456789abcdef0123456789abcdef"

/** The same value with one character of its ciphertext replaced by another base64url character. */
const tamper = (sealed: string, index: number): string => {
  const parts = sealed.split(".")
  const body = parts[3]!
  const replaced = body[index] === "A" ? "B" : "A"
  parts[3] = body.slice(0, index) + replaced + body.slice(index + 1)
  return parts.join(".")
}

describe("SecretBox", () => {
  const key: SecretKey = generateSecretKey()

  it("opens what it sealed, under the key the envelope names", () => {
    const sealed = seal(key, SECRET, AAD)
    expect(sealed).toMatch(/^v1\.[0-9a-f]{16}\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/)
    expect(sealedKeyId(sealed)).toBe(key.keyId)
    expect(sealed).not.toContain(SECRET)
    expect(open([key], sealed, AAD)).toBe(SECRET)
    expect(open([generateSecretKey(), key], sealed, AAD)).toBe(SECRET)
    expect(open([key], seal(key, "", AAD), AAD)).toBe("")
  })

  it("uses a fresh nonce for every seal", () => {
    const seen = new Set(Array.from({ length: 100 }, () => seal(key, SECRET, AAD).split(".")[2]))
    expect(seen.size).toBe(100)
  })

  it("does not open under another key, even one given the same id", () => {
    const sealed = seal(key, SECRET, AAD)
    const other = generateSecretKey()
    expect(open([other], sealed, AAD)).toBeUndefined()
    expect(open([{ keyId: key.keyId, bytes: other.bytes }], sealed, AAD)).toBeUndefined()
    expect(open([], sealed, AAD)).toBeUndefined()
  })

  it("does not open a value with any byte changed", () => {
    const sealed = seal(key, SECRET, AAD)
    const length = sealed.split(".")[3]!.length
    // The last character included: its unused low bits change the spelling, which is refused.
    for (let i = 0; i < length; i++) expect(open([key], tamper(sealed, i), AAD)).toBeUndefined()
    const [v, id, nonce, body] = sealed.split(".") as [string, string, string, string]
    const otherNonce = nonce[0] === "A" ? `B${nonce.slice(1)}` : `A${nonce.slice(1)}`
    expect(open([key], [v, id, otherNonce, body].join("."), AAD)).toBeUndefined()
    expect(open([key], sealed.slice(0, -2), AAD)).toBeUndefined()
  })

  it("does not open in another row (the additional data differs)", () => {
    const sealed = seal(key, SECRET, AAD)
    expect(open([key], sealed, "webhooks.secret:reg-2")).toBeUndefined()
    expect(open([key], sealed, "")).toBeUndefined()
  })

  it("refuses unknown versions and malformed envelopes", () => {
    const sealed = seal(key, SECRET, AAD)
    expect(open([key], sealed.replace(/^v1\./, "v2."), AAD)).toBeUndefined()
    expect(open([key], sealed.replace(/^v1\./, ""), AAD)).toBeUndefined()
    expect(open([key], `${sealed}.x`, AAD)).toBeUndefined()
    expect(open([key], SECRET, AAD)).toBeUndefined()
    expect(open([key], "", AAD)).toBeUndefined()
    expect(sealedKeyId("v2.0011223344556677.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA")).toBeUndefined()
  })

  it("parses a KEK strictly: 64 hex characters, base64 or base64url of 32 bytes", () => {
    const bytes = Buffer.from(key.bytes)
    for (const text of [
      formatSecretKey(key),
      formatSecretKey(key).toUpperCase(),
      bytes.toString("base64"),
      bytes.toString("base64url"),
      `  ${formatSecretKey(key)}\n`
    ]) {
      expect(parseSecretKey(text)?.keyId).toBe(key.keyId)
    }
    for (const text of [
      "",
      formatSecretKey(key).slice(2),
      `${formatSecretKey(key)}00`,
      Buffer.alloc(31).toString("base64"),
      Buffer.alloc(33).toString("base64"),
      // The last character's two unused bits set: 32 zero bytes, but not their spelling.
      `${"A".repeat(42)}B=`,
      "not a key at all"
    ]) {
      expect(parseSecretKey(text)).toBeUndefined()
    }
  })
})
