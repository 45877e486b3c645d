/**
 * SHA-256 and the domain tags that separate every hash Candor commits to.
 *
 * node:crypto's one-shot `hash` is used because it is about 2.5x faster than a `createHash` object
 * per call and the Merkle log hashes on every append; it is pure computation, so `core/` stays free of I/O.
 */
import type { Buffer } from "node:buffer"
import { hash as oneShot } from "node:crypto"
import { bufferView, concatBytes, utf8 } from "./Bytes.js"

/**
 * Re-wrapped as a plain `Uint8Array` (see `bufferView`) although that costs about 8% on the Merkle
 * hot loop.
 */
export const sha256 = (data: Uint8Array): Uint8Array => bufferView(oneShot("sha256", data, "buffer") as Buffer)

/**
 * Domain tags: `candor/v1/<purpose>` followed by a NUL byte, prefixed to the hashed bytes so that a
 * hash made for one purpose can never be replayed as another (unlike `|`-joined strings).
 */
const tags = new Map<string, Uint8Array>()
export const domainTag = (purpose: string): Uint8Array => {
  let tag = tags.get(purpose)
  if (tag === undefined) tags.set(purpose, (tag = utf8(`candor/v1/${purpose}\0`)))
  return tag
}

/** SHA-256 of `candor/v1/<purpose>\0 ‖ data`. */
export const taggedHash = (purpose: string, ...data: ReadonlyArray<Uint8Array>): Uint8Array =>
  sha256(concatBytes(domainTag(purpose), ...data)) // one copy and a one-shot hash beat a streaming hash object
