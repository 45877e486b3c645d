/**
 * Envelope encryption of the secrets the store keeps (webhook signing secrets) and of its
 * reasoning-derived fields (adapters/store/SealedFields.ts): AES-256-GCM from
 * node:crypto under a key-encryption key (KEK), in a text format of our own so a sealed value fits
 * a `text` column and says which KEK sealed it:
 *
 *     v1.<kek id>.<nonce>.<ciphertext and tag>
 *
 * - `v1`: the format; anything else is refused, so a later format can never be misread as this one.
 * - `<kek id>`: 16 hex characters, the first 8 bytes of SHA-256 of the KEK. During a rotation a
 *   process holds several KEKs and opens each value with the one it names (never by trial).
 * - `<nonce>`: 96 random bits, fresh for every seal (GCM's security rests on never reusing a nonce
 *   under one key; 2^32 seals per key keep the collision odds below 2^-32).
 * - `<ciphertext and tag>`: the ciphertext followed by the 128-bit GCM tag; both base64url, unpadded.
 *
 * The additional data authenticated with the ciphertext is the header (`v1.<kek id>`) and the
 * caller's `aad`, which names the row the value belongs to (`webhooks.secret:<endpoint id>`):
 * a sealed value copied into another row, or a header edited to name another key, does not open.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto"
import { bufferView, fromHex, toHex, utf8 } from "./Bytes.js"
import { sha256 } from "./Hash.js"

/** A 32-byte key-encryption key and its id. */
export interface SecretKey {
  /** 16 hex characters: the first 8 bytes of SHA-256 of the key. */
  readonly keyId: string
  readonly bytes: Uint8Array
}

export const SECRET_KEY_LENGTH = 32
const NONCE_LENGTH = 12
const TAG_LENGTH = 16
const VERSION = "v1"

const KEY_HEX = /^[0-9a-fA-F]{64}$/
const KEY_BASE64 = /^[A-Za-z0-9+/]{43}=$/
const KEY_BASE64URL = /^[A-Za-z0-9_-]{43}$/
const KEY_ID = /^[0-9a-f]{16}$/
const BASE64URL = /^[A-Za-z0-9_-]*$/

export const secretKeyOf = (bytes: Uint8Array): SecretKey | undefined =>
  bytes.length === SECRET_KEY_LENGTH
    ? { keyId: toHex(sha256(bytes).subarray(0, 8)), bytes: Uint8Array.from(bytes) }
    : undefined

export const generateSecretKey = (): SecretKey => secretKeyOf(bufferView(randomBytes(SECRET_KEY_LENGTH)))!

/**
 * A KEK from configuration text, trimmed: 64 hex characters, or the 32 bytes in padded base64 or
 * unpadded base64url. Strict: a decoding that would not give the same text back (stray bits in the
 * last character) is refused. `undefined` otherwise; callers never quote the text in an error.
 */
export const parseSecretKey = (text: string): SecretKey | undefined => {
  const trimmed = text.trim()
  if (KEY_HEX.test(trimmed)) return secretKeyOf(fromHex(trimmed)!)
  const encoding = KEY_BASE64.test(trimmed) ? "base64" : KEY_BASE64URL.test(trimmed) ? "base64url" : undefined
  if (encoding === undefined) return undefined
  const bytes = Buffer.from(trimmed, encoding)
  return bytes.toString(encoding) === trimmed ? secretKeyOf(bufferView(bytes)) : undefined
}

/** 64 hex characters: how generated KEKs are written and printed. */
export const formatSecretKey = (key: SecretKey): string => toHex(key.bytes)

const header = (keyId: string): string => `${VERSION}.${keyId}`

const additionalData = (keyId: string, aad: string): Uint8Array => utf8(`${header(keyId)}\n${aad}`)

/**
 * Nonces are drawn from a pool of random bytes filled a few hundred at a time: a `randomBytes`
 * call costs more than the encryption of a short field, and the commit path seals several per
 * checkpoint. Each slice is used once; a spent pool is replaced by a new buffer, never refilled.
 */
const NONCE_POOL = NONCE_LENGTH * 341
let noncePool = Buffer.alloc(0)
let nonceOffset = 0

const freshNonce = (): Buffer => {
  if (nonceOffset + NONCE_LENGTH > noncePool.length) {
    noncePool = randomBytes(NONCE_POOL)
    nonceOffset = 0
  }
  const nonce = noncePool.subarray(nonceOffset, nonceOffset + NONCE_LENGTH)
  nonceOffset += NONCE_LENGTH
  return nonce
}

/** `plaintext` sealed under `key`, bound to `aad` (what row it belongs to). */
export const seal = (key: SecretKey, plaintext: string, aad: string): string => {
  const nonce = freshNonce()
  const cipher = createCipheriv("aes-256-gcm", key.bytes, nonce, { authTagLength: TAG_LENGTH })
  cipher.setAAD(additionalData(key.keyId, aad))
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final(), cipher.getAuthTag()])
  return `${header(key.keyId)}.${nonce.toString("base64url")}.${body.toString("base64url")}`
}

interface Envelope {
  readonly keyId: string
  readonly nonce: Buffer
  readonly ciphertext: Buffer
  readonly tag: Buffer
}

const parseEnvelope = (sealed: string): Envelope | undefined => {
  const parts = sealed.split(".")
  if (parts.length !== 4) return undefined
  const [version, keyId, nonce, body] = parts as [string, string, string, string]
  if (version !== VERSION || !KEY_ID.test(keyId) || !BASE64URL.test(nonce) || !BASE64URL.test(body)) return undefined
  const nonceBytes = Buffer.from(nonce, "base64url")
  const bodyBytes = Buffer.from(body, "base64url")
  // Strict: one spelling per value (Node's decoder ignores stray bits in the last character).
  if (nonceBytes.toString("base64url") !== nonce || bodyBytes.toString("base64url") !== body) return undefined
  if (nonceBytes.length !== NONCE_LENGTH || bodyBytes.length < TAG_LENGTH) return undefined
  return {
    keyId,
    nonce: nonceBytes,
    ciphertext: bodyBytes.subarray(0, bodyBytes.length - TAG_LENGTH),
    tag: bodyBytes.subarray(bodyBytes.length - TAG_LENGTH)
  }
}

/** The id of the KEK a sealed value names (for messages and rotation), or `undefined` if it is not one. */
export const sealedKeyId = (sealed: string): string | undefined => parseEnvelope(sealed)?.keyId

/**
 * The plaintext, when `sealed` is a value of this format sealed by one of `keys` for this `aad`
 * and unaltered; `undefined` otherwise (unknown format, a KEK not held, a changed byte, another row).
 */
export const open = (keys: ReadonlyArray<SecretKey>, sealed: string, aad: string): string | undefined => {
  const envelope = parseEnvelope(sealed)
  if (envelope === undefined) return undefined
  const key = keys.find((candidate) => candidate.keyId === envelope.keyId)
  if (key === undefined) return undefined
  const decipher = createDecipheriv("aes-256-gcm", key.bytes, envelope.nonce, { authTagLength: TAG_LENGTH })
  decipher.setAAD(additionalData(key.keyId, aad))
  decipher.setAuthTag(envelope.tag)
  try {
    return Buffer.concat([decipher.update(envelope.ciphertext), decipher.final()]).toString("utf8")
  } catch {
    // Authentication failed: the value, its header or its row is not the one sealed.
    return undefined
  }
}
