/**
 * SHA-256 and the domain tags that separate every hash Candor commits to.
 *
 * node:crypto's one-shot `hash` is used because it is about 2.5x faster than a `createHash` object
 * per call and the Merkle log hashes on every append; it is pure computation, so `core/` stays free of I/O.
 */
import { createHash, hash as oneShot } from "node:crypto"
import { utf8 } from "./bytes.js"

/**
 * Re-wrapped as a plain `Uint8Array` although that costs about 8% on the Merkle hot loop: a `Buffer`'s
 * `slice` is a view, not a copy, and a caller who copies a digest with `slice` to change it would
 * silently change the original.
 */
export const sha256 = (data: Uint8Array): Uint8Array => {
  const digest = oneShot("sha256", data, "buffer") as Buffer
  return new Uint8Array(digest.buffer, digest.byteOffset, digest.byteLength)
}

/** SHA-256 over several parts without concatenating them first. */
export const sha256Parts = (...parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  const h = createHash("sha256")
  for (const part of parts) h.update(part)
  const digest = h.digest()
  return new Uint8Array(digest.buffer, digest.byteOffset, digest.byteLength)
}

/**
 * Domain tags: `candor/v1/<purpose>` followed by a NUL byte, prefixed to the hashed bytes so that a
 * hash made for one purpose can never be replayed as another (unlike `|`-joined strings).
 */
export const domainTag = (purpose: string): Uint8Array => utf8(`candor/v1/${purpose}\0`)

/** SHA-256 of `candor/v1/<purpose>\0 ‖ data`. */
export const taggedHash = (purpose: string, ...data: ReadonlyArray<Uint8Array>): Uint8Array =>
  sha256Parts(domainTag(purpose), ...data)
