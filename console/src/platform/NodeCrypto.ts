/**
 * The slice of node:crypto that core/ uses, for the browser build (console/vite.config.ts and
 * console/tsconfig.json point `node:crypto` here), on @noble/hashes and @noble/ed25519. Each function
 * gives the same bytes as Node's on every input core/ can pass it (test/console/PlatformCrypto.test.ts
 * compares them on random inputs):
 *
 * - `hash("sha256", …)` and `createHash("sha256")`: SHA-256;
 * - `timingSafeEqual`: constant-time comparison, a RangeError for different lengths (as Node);
 * - Ed25519 keys (`createPublicKey` from an SPKI DER or a private key, `createPrivateKey` from a
 *   PKCS#8 v1 DER), `sign` (RFC 8032, deterministic) and `verify`. `verify` is OpenSSL's: S < L,
 *   then the cofactorless equation checked the way OpenSSL does it, by recomputing R = [S]B − [k]A and
 *   comparing its encoding with the signature's R bytes. core/Signing.ts applies its strict policy
 *   (canonical, prime-order key) before calling it, exactly as on Node, so the browser's verdict on a
 *   signature is Node's.
 * - `randomBytes`: the Web Crypto random source.
 */
import * as ed from "@noble/ed25519"
import { hmac } from "@noble/hashes/hmac.js"
import { sha256, sha512 } from "@noble/hashes/sha2.js"
import { Buffer } from "./NodeBuffer.js"

ed.hashes.sha512 = sha512

const SPKI_PREFIX = [0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00]
const PKCS8_PREFIX = [0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20]
/** The order L of the Ed25519 base point. */
const L = 0x1000000000000000000000000000000014def9dea2f79cd65812631a5cf5d3edn

const unsupported = (what: string): never => {
  throw new Error(`${what} is not available in the browser build`)
}

const toBytes = (data: Uint8Array | string): Uint8Array =>
  typeof data === "string" ? new TextEncoder().encode(data) : data

export const hash = (algorithm: string, data: Uint8Array, _outputEncoding?: "buffer"): Buffer => {
  if (algorithm !== "sha256") unsupported(`hash ${algorithm}`)
  return Buffer.view(sha256(data))
}

export interface Hash {
  update(data: Uint8Array | string, encoding?: "utf8"): Hash
  digest(): Buffer
  digest(encoding: "hex" | "base64"): string
}

export const createHash = (algorithm: string): Hash => {
  if (algorithm !== "sha256") unsupported(`hash ${algorithm}`)
  const state = sha256.create()
  const self: Hash = {
    update: (data) => {
      state.update(toBytes(data))
      return self
    },
    digest: ((encoding?: "hex" | "base64") => {
      const out = Buffer.view(state.digest())
      return encoding === undefined ? out : out.toString(encoding)
    }) as Hash["digest"]
  }
  return self
}

export interface Hmac {
  update(data: Uint8Array | string, encoding?: "utf8"): Hmac
  digest(): Buffer
  digest(encoding: "hex" | "base64"): string
}

export const createHmac = (algorithm: string, key: Uint8Array | string): Hmac => {
  if (algorithm !== "sha256") unsupported(`HMAC ${algorithm}`)
  const state = hmac.create(sha256, toBytes(key))
  const self: Hmac = {
    update: (data) => {
      state.update(toBytes(data))
      return self
    },
    digest: ((encoding?: "hex" | "base64") => {
      const out = Buffer.view(state.digest())
      return encoding === undefined ? out : out.toString(encoding)
    }) as Hmac["digest"]
  }
  return self
}

export const timingSafeEqual = (a: Uint8Array, b: Uint8Array): boolean => {
  if (a.length !== b.length) throw new RangeError("Input buffers must have the same byte length")
  let difference = 0
  for (let i = 0; i < a.length; i++) difference |= a[i]! ^ b[i]!
  return difference === 0
}

export const randomBytes = (size: number): Buffer => {
  const out = new Buffer(size)
  // getRandomValues takes at most 65536 bytes a call.
  for (let i = 0; i < size; i += 65536) crypto.getRandomValues(out.subarray(i, Math.min(size, i + 65536)))
  return out
}

/** An Ed25519 key as core/Signing.ts handles it: raw bytes behind Node's KeyObject surface. */
export class KeyObject {
  constructor(
    readonly type: "public" | "private",
    /** The 32-byte public key, or the 32-byte seed of a private key. */
    private readonly raw: Uint8Array
  ) {}
  readonly asymmetricKeyType = "ed25519"
  export(options: { readonly format: "der"; readonly type: "spki" | "pkcs8" }): Buffer {
    if (options.type === "spki" && this.type === "public")
      return Buffer.concat([Uint8Array.from(SPKI_PREFIX), this.raw])
    if (options.type === "pkcs8" && this.type === "private")
      return Buffer.concat([Uint8Array.from(PKCS8_PREFIX), this.raw])
    return unsupported(`exporting a ${this.type} key as ${options.type}`)
  }
  /** @internal */
  bytes(): Uint8Array {
    return this.raw
  }
}

const afterPrefix = (der: Uint8Array, prefix: ReadonlyArray<number>, what: string): Uint8Array => {
  if (der.length !== prefix.length + 32 || prefix.some((byte, i) => der[i] !== byte)) {
    throw new TypeError(`unsupported ${what}: only Ed25519 keys are available in the browser build`)
  }
  return Uint8Array.from(der.subarray(prefix.length))
}

export const createPublicKey = (
  input: KeyObject | { readonly key: Uint8Array; readonly format: "der"; readonly type: "spki" }
): KeyObject => {
  if (input instanceof KeyObject) {
    return input.type === "public" ? input : new KeyObject("public", ed.getPublicKey(input.bytes()))
  }
  return new KeyObject("public", afterPrefix(input.key, SPKI_PREFIX, "public key"))
}

export const createPrivateKey = (input: {
  readonly key: Uint8Array
  readonly format: "der"
  readonly type: "pkcs8"
}): KeyObject => new KeyObject("private", afterPrefix(input.key, PKCS8_PREFIX, "private key"))

export const sign = (_algorithm: null, message: Uint8Array, key: KeyObject): Buffer => {
  if (key.type !== "private") throw new TypeError("signing needs a private key")
  return Buffer.view(ed.sign(message, key.bytes()))
}

const littleEndian = (bytes: Uint8Array): bigint => {
  let value = 0n
  for (let i = bytes.length - 1; i >= 0; i--) value = (value << 8n) | BigInt(bytes[i]!)
  return value
}

/** OpenSSL's Ed25519 verification (see the module comment). Never throws for bad signatures. */
export const verify = (_algorithm: null, message: Uint8Array, key: KeyObject, signature: Uint8Array): boolean => {
  if (key.type !== "public") throw new TypeError("verifying needs a public key")
  if (signature.length !== 64) return false
  const publicKey = key.bytes()
  const r = signature.subarray(0, 32)
  const s = littleEndian(signature.subarray(32, 64))
  if (s >= L) return false
  let A: ed.Point
  try {
    A = ed.Point.fromBytes(publicKey, true)
  } catch {
    return false
  }
  const input = new Uint8Array(64 + message.length)
  input.set(r, 0)
  input.set(publicKey, 32)
  input.set(message, 64)
  const digest = sha512(input)
  const k = littleEndian(digest) % L
  const sB = s === 0n ? ed.Point.ZERO : ed.Point.BASE.multiplyUnsafe(s)
  const kA = k === 0n ? ed.Point.ZERO : A.multiplyUnsafe(k)
  const expected = sB.subtract(kA).toBytes()
  return timingSafeEqual(expected, r)
}
