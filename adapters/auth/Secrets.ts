/**
 * Secrets Candor hands out (API keys, impersonation tokens, invite tokens): 256 random bits behind
 * a prefix that says what they are, stored only as their SHA-256. Comparisons of configured secrets
 * (the service-role key) go through SHA-256 digests and `timingSafeEqual`, so neither the length
 * nor the content leaks through timing.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto"
import { sha256Hex } from "../providers/Identity.js"

/** `<prefix>_<43 base64url characters>`. */
export const generateSecret = (prefix: string): string => `${prefix}_${randomBytes(32).toString("base64url")}`

/** What is stored and looked up: SHA-256 of the UTF-8 secret, lowercase hex. */
export const hashSecret = (secret: string): string => sha256Hex(secret)

/** The part of a secret that may be shown in listings: its prefix and four characters. */
export const displayPrefix = (secret: string): string => {
  const cut = secret.indexOf("_") + 5
  return secret.slice(0, Math.max(cut, 8))
}

const digest = (text: string): Buffer => createHash("sha256").update(text, "utf8").digest()

/** Constant-time equality of two secrets (of any lengths) through their SHA-256 digests. */
export const secretsEqual = (a: string, b: string): boolean => timingSafeEqual(digest(a), digest(b))
