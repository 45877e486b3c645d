/**
 * Ed25519 signing keys and two verifiers that give the same answer on every input.
 *
 * - `verifySignature` is the hot path: node:crypto (OpenSSL) with cached `KeyObject`s, about 14x
 *   faster than pure JavaScript (docs/benchmarks.md, "Core"). Parsing a key per call would throw
 *   most of that away, hence the small bounded caches below.
 * - `verifySignaturePortable` is @noble/ed25519, an independent implementation of the same
 *   arithmetic, for cross-checks and for code that must not depend on OpenSSL.
 *
 * Both apply one strict policy, so a third party's verifier (Go, libsodium, OpenSSL, noble) can
 * never be told "valid" by one of ours and "invalid" by the other:
 *
 * 1. exact lengths: 32-byte public key, 64-byte signature;
 * 2. the public key must be a canonical encoding (y < p, and not the x = 0 / sign bit 1 form) of a
 *    point of prime order L (no small-order key, no torsion component);
 * 3. S < L, R canonical, and the cofactorless equation [S]B = R + [k]A.
 *
 * Why each check is here, measured against OpenSSL 3.0 and noble 3.2 (test/core/Signing.test.ts):
 * - OpenSSL does not check the public key at all beyond "decodes to a curve point": for a
 *   small-order key (e.g. the identity, 0100…00) anyone can forge a signature that OpenSSL accepts,
 *   and it accepts non-canonical key encodings (y + p) and x = 0 with the sign bit set. noble with
 *   `zip215: false` rejects all of those, so we reject them before calling OpenSSL.
 * - OpenSSL checks the cofactorless equation, noble the cofactored one ([8][S]B = [8]R + [8][k]A).
 *   They differ only when A or R has a small-order (torsion) component: for a key A = [a]B + T,
 *   noble accepts every honestly computed signature and OpenSSL about one in eight; for a signature
 *   whose R = [r]B + T, noble accepts and OpenSSL rejects. Rule 2 removes the first case (checked
 *   once per key, cached) and, on the noble path, a torsion check on R removes the second: with A
 *   torsion-free, the cofactored and cofactorless equations agree exactly when R is torsion-free.
 * - Wycheproof's invalid vectors (truncated signatures, S ≥ L, non-canonical R, …) are already
 *   rejected by both libraries; noble throws on wrong lengths, which we turn into `false`.
 * Honestly generated keys and signatures always pass these checks, so they cost nothing but time.
 */
import * as ed from "@noble/ed25519"
import { sha512 } from "@noble/hashes/sha2.js"
import { Buffer } from "node:buffer"
import {
  createPrivateKey,
  createPublicKey,
  type KeyObject,
  randomBytes,
  sign as nodeSign,
  verify as nodeVerify
} from "node:crypto"
import { bufferView, concatBytes, fromBase64, fromHex, toBase64, toHex } from "./Bytes.js"
import { sha256 } from "./Hash.js"

// noble's synchronous API needs a SHA-512; setting it is idempotent and does no I/O.
ed.hashes.sha512 = sha512

export interface SigningKey {
  /** See `keyIdOf`. */
  readonly keyId: string
  /** The raw 32-byte RFC 8032 public key. */
  readonly publicKey: Uint8Array
  /** Deterministic Ed25519 (RFC 8032) signature, 64 bytes. */
  readonly sign: (message: Uint8Array) => Uint8Array
  /** A copy of the 32-byte RFC 8032 seed; the seed is never a property, so it is not logged or serialised by accident. */
  readonly exportSeed: () => Uint8Array
}

const SEED_LENGTH = 32
const PUBLIC_KEY_LENGTH = 32
const SIGNATURE_LENGTH = 64
/** DER prefix of a PKCS#8 v1 Ed25519 private key (RFC 8410): followed by the 32-byte seed. */
const PKCS8_PREFIX = fromHex("302e020100300506032b657004220420") as Uint8Array
/** DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410): followed by the 32-byte public key. */
const SPKI_PREFIX = fromHex("302a300506032b6570032100") as Uint8Array

/**
 * Key id: lowercase hex of the first 16 bytes of SHA-256(raw 32-byte public key).
 *
 * Derived rather than assigned, so anyone can recompute it from the public key published at
 * `/v1/keys` without trusting our database, and the same key has the same id in certificates,
 * logs and key listings. It does not depend on a name (unlike the 4-byte signed-note key hash,
 * which is short enough to collide on purpose): 128 bits make accidental collisions impossible in
 * practice, and an id only selects a key, it never replaces checking the signature against the full
 * public key. 32 hex characters stay short enough for headers and log lines.
 */
export const keyIdOf = (publicKey: Uint8Array): string => toHex(sha256(publicKey).subarray(0, 16))

/** A small insertion-ordered cache: a hit moves the entry to the back, a full cache drops the oldest. */
const boundedCache = <V>(capacity: number) => {
  const entries = new Map<string, V>()
  return {
    get: (key: string): V | undefined => {
      const value = entries.get(key)
      if (value !== undefined) {
        entries.delete(key)
        entries.set(key, value)
      }
      return value
    },
    set: (key: string, value: V): void => {
      if (entries.size >= capacity) {
        const oldest = entries.keys().next()
        if (oldest.done !== true) entries.delete(oldest.value)
      }
      entries.set(key, value)
    }
  }
}

const CACHE_SIZE = 256
const keyValidity = boundedCache<boolean>(CACHE_SIZE)
const publicKeyObjects = boundedCache<KeyObject>(CACHE_SIZE)

const checkPublicKey = (publicKey: Uint8Array): boolean => {
  try {
    // Strict RFC 8032 decoding (y < p, no x = 0 with the sign bit), then prime order L exactly.
    const point = ed.Point.fromBytes(publicKey, false)
    return !point.isSmallOrder() && point.isTorsionFree()
  } catch {
    return false
  }
}

/**
 * True when `publicKey` is 32 bytes encoding a point of prime order L (rule 2 above): the only
 * keys either verifier accepts. Cached per key, so the ~1 ms check runs once per key.
 */
export const isValidPublicKey = (publicKey: Uint8Array): boolean => {
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== PUBLIC_KEY_LENGTH) return false
  const hex = toHex(publicKey)
  const cached = keyValidity.get(hex)
  if (cached !== undefined) return cached
  const valid = checkPublicKey(publicKey)
  keyValidity.set(hex, valid)
  return valid
}

const publicKeyObject = (publicKey: Uint8Array): KeyObject | undefined => {
  const hex = toHex(publicKey)
  const cached = publicKeyObjects.get(hex)
  if (cached !== undefined) return cached
  if (!isValidPublicKey(publicKey)) return undefined
  const key = createPublicKey({ key: Buffer.from(concatBytes(SPKI_PREFIX, publicKey)), format: "der", type: "spki" })
  publicKeyObjects.set(hex, key)
  return key
}

const isBytes = (value: unknown, length?: number): value is Uint8Array =>
  value instanceof Uint8Array && (length === undefined || value.length === length)

/** node:crypto (OpenSSL) verification under the strict policy above. Never throws. */
export const verifySignature = (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean => {
  if (!isBytes(publicKey, PUBLIC_KEY_LENGTH) || !isBytes(message) || !isBytes(signature, SIGNATURE_LENGTH)) return false
  try {
    const key = publicKeyObject(publicKey)
    // OpenSSL itself rejects S >= L and non-canonical R (it compares R's bytes with the recomputed R).
    return key !== undefined && nodeVerify(null, message, key, signature)
  } catch {
    return false
  }
}

/** @noble/ed25519 verification (`zip215: false`) under the same strict policy. Never throws. */
export const verifySignaturePortable = (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean => {
  if (!isBytes(publicKey, PUBLIC_KEY_LENGTH) || !isBytes(message) || !isBytes(signature, SIGNATURE_LENGTH)) return false
  try {
    if (!isValidPublicKey(publicKey)) return false
    if (!ed.verify(signature, message, publicKey, { zip215: false })) return false
    // noble checked the cofactored equation; with A torsion-free it matches the cofactorless one
    // (OpenSSL, Go, libsodium) exactly when R has no small-order component.
    return ed.Point.fromBytes(signature.subarray(0, 32), false).isTorsionFree()
  } catch {
    return false
  }
}

/** A signing key from a 32-byte RFC 8032 seed; `undefined` for anything else. */
export const signingKeyFromSeed = (seed: Uint8Array): SigningKey | undefined => {
  if (!isBytes(seed, SEED_LENGTH)) return undefined
  const ownSeed = Uint8Array.from(seed)
  let privateKey: KeyObject
  let publicKey: Uint8Array
  try {
    privateKey = createPrivateKey({
      key: Buffer.from(concatBytes(PKCS8_PREFIX, ownSeed)),
      format: "der",
      type: "pkcs8"
    })
    const spki = bufferView(createPublicKey(privateKey).export({ format: "der", type: "spki" }))
    if (spki.length !== SPKI_PREFIX.length + PUBLIC_KEY_LENGTH) return undefined
    publicKey = Uint8Array.from(spki.subarray(SPKI_PREFIX.length))
  } catch {
    return undefined
  }
  return {
    keyId: keyIdOf(publicKey),
    publicKey,
    sign: (message) => bufferView(nodeSign(null, message, privateKey)),
    exportSeed: () => Uint8Array.from(ownSeed)
  }
}

export const generateSigningKey = (): SigningKey => {
  const key = signingKeyFromSeed(bufferView(randomBytes(SEED_LENGTH)))
  // Synchronous and pure by contract (core/ does no Effect I/O); a fresh seed that fails is a defect.
  if (key === undefined) throw new Error("node:crypto could not build an Ed25519 key from a fresh seed")
  return key
}

const SEED_HEX = /^[0-9a-fA-F]{64}$/
const PEM = /^-----BEGIN PRIVATE KEY-----\r?\n([A-Za-z0-9+/=\r\n]+?)\r?\n-----END PRIVATE KEY-----$/

const seedFromPkcs8Pem = (text: string): Uint8Array | undefined => {
  const match = PEM.exec(text)
  const body = match?.[1]
  if (body === undefined) return undefined
  const der = fromBase64(body.replace(/\r?\n/g, ""))
  // Only the PKCS#8 v1 form that OpenSSL, Go and node:crypto write for Ed25519 (RFC 8410 §7):
  // the fixed 16-byte prefix and the seed. Anything else (v2 with an embedded public key that
  // might not match, encrypted keys, other algorithms) is refused rather than half-understood.
  if (der === undefined || der.length !== PKCS8_PREFIX.length + SEED_LENGTH) return undefined
  for (let i = 0; i < PKCS8_PREFIX.length; i++) if (der[i] !== PKCS8_PREFIX[i]) return undefined
  return der.subarray(PKCS8_PREFIX.length)
}

/**
 * Reads a signing key from configuration text, trimmed: 64 hex characters (the seed), standard
 * padded base64 of the 32-byte seed, or a PKCS#8 PEM "PRIVATE KEY" (Ed25519, v1). `undefined` otherwise.
 */
export const parseSigningKey = (text: string): SigningKey | undefined => {
  if (typeof text !== "string") return undefined
  const trimmed = text.trim()
  if (SEED_HEX.test(trimmed)) {
    const seed = fromHex(trimmed)
    return seed === undefined ? undefined : signingKeyFromSeed(seed)
  }
  if (trimmed.startsWith("-----BEGIN")) {
    const seed = seedFromPkcs8Pem(trimmed)
    return seed === undefined ? undefined : signingKeyFromSeed(seed)
  }
  const seed = fromBase64(trimmed)
  return seed !== undefined && seed.length === SEED_LENGTH && toBase64(seed) === trimmed
    ? signingKeyFromSeed(seed)
    : undefined
}

/** PKCS#8 v1 PEM, byte-identical to `KeyObject.export({ type: "pkcs8", format: "pem" })` and `openssl genpkey`. */
export const formatSigningKey = (key: SigningKey): string => {
  const seed = key.exportSeed()
  try {
    return `-----BEGIN PRIVATE KEY-----\n${toBase64(concatBytes(PKCS8_PREFIX, seed))}\n-----END PRIVATE KEY-----\n`
  } finally {
    seed.fill(0)
  }
}
