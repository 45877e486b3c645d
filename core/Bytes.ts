/**
 * Byte helpers shared by every verifier in `core/`. They never throw on bad text: decoders return
 * `undefined`, so a verifier can answer `false` for malformed input instead of crashing.
 */
// Imported, not the global: the browser build (console/) maps both modules to its own small versions.
import { Buffer } from "node:buffer"
import { timingSafeEqual } from "node:crypto"

const HEX = /^(?:[0-9a-f]{2})*$/i
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

/**
 * A plain `Uint8Array` view of a `Buffer`'s bytes, without copying: a `Buffer`'s `slice` is a view,
 * so handing one out would let a caller who "copies" a hash with `slice` change the original.
 */
export const bufferView = (buffer: Buffer): Uint8Array =>
  new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength)

export const toHex = (bytes: Uint8Array): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex")

/** Strict hex (even length, no prefix, either case); `undefined` for anything else. */
export const fromHex = (text: unknown): Uint8Array | undefined =>
  typeof text === "string" && HEX.test(text) ? bufferView(Buffer.from(text, "hex")) : undefined

export const toBase64 = (bytes: Uint8Array): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64")

/** Strict, padded standard base64; Node's own decoder silently skips bad characters, so check first. */
export const fromBase64 = (text: unknown): Uint8Array | undefined =>
  typeof text === "string" && BASE64.test(text) ? bufferView(Buffer.from(text, "base64")) : undefined

export const utf8 = (text: string): Uint8Array => bufferView(Buffer.from(text, "utf8"))

export const concatBytes = (...parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  let length = 0
  for (const part of parts) length += part.length
  const out = new Uint8Array(length)
  let offset = 0
  for (const part of parts) {
    out.set(part, offset)
    offset += part.length
  }
  return out
}

/** Constant-time equality for secrets and digests; different lengths are unequal (and say so at once). */
export const bytesEqual = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && timingSafeEqual(a, b)
