/**
 * The browser build's node:crypto and node:buffer (console/src/platform/) against Node's own, on
 * random inputs: every function core/ calls must give Node's bytes and Node's verdicts, or a
 * certificate could verify in `candor verify` and fail in the console (or the reverse).
 */
import { describe, expect, it } from "@effect/vitest"
import * as ed from "@noble/ed25519"
import * as node from "node:crypto"
import { Buffer as NodeBuffer } from "node:buffer"
import { Buffer as ShimBuffer } from "../../console/src/platform/NodeBuffer.js"
import * as shim from "../../console/src/platform/NodeCrypto.js"

const SPKI_PREFIX = NodeBuffer.from("302a300506032b6570032100", "hex")
const PKCS8_PREFIX = NodeBuffer.from("302e020100300506032b657004220420", "hex")
const ROUNDS = 200

const randomLength = (max: number) => node.randomInt(0, max + 1)
const flipBit = (bytes: Uint8Array, bit: number): Uint8Array => {
  const copy = Uint8Array.from(bytes)
  copy[bit >> 3] = copy[bit >> 3]! ^ (1 << (bit & 7))
  return copy
}

const nodeVerify = (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean => {
  try {
    const key = node.createPublicKey({ key: NodeBuffer.concat([SPKI_PREFIX, publicKey]), format: "der", type: "spki" })
    return node.verify(null, message, key, signature)
  } catch {
    return false
  }
}
const shimVerify = (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean => {
  const key = shim.createPublicKey({
    key: Uint8Array.from([...SPKI_PREFIX, ...publicKey]),
    format: "der",
    type: "spki"
  })
  return shim.verify(null, message, key, signature)
}

describe("the browser's node:crypto", () => {
  it("hashes like Node (one-shot and streaming SHA-256, HMAC-SHA-256)", () => {
    for (let i = 0; i < ROUNDS; i++) {
      const data = node.randomBytes(randomLength(300))
      expect(NodeBuffer.from(shim.hash("sha256", data)).toString("hex")).toBe(node.hash("sha256", data, "hex"))
      const text = data.toString("base64")
      expect(shim.createHash("sha256").update(text, "utf8").digest("hex")).toBe(
        node.createHash("sha256").update(text, "utf8").digest("hex")
      )
      const key = node.randomBytes(randomLength(80))
      expect(shim.createHmac("sha256", key).update(data).digest("hex")).toBe(
        node.createHmac("sha256", key).update(data).digest("hex")
      )
    }
  })

  it("compares like timingSafeEqual, throwing for different lengths as Node does", () => {
    for (let i = 0; i < ROUNDS; i++) {
      const a = node.randomBytes(randomLength(40))
      const b = i % 2 === 0 ? NodeBuffer.from(a) : flipBit(a.length === 0 ? new Uint8Array(1) : a, i % 8)
      if (a.length === b.length) expect(shim.timingSafeEqual(a, b)).toBe(node.timingSafeEqual(a, b))
      else {
        expect(() => node.timingSafeEqual(a, b)).toThrow(RangeError)
        expect(() => shim.timingSafeEqual(a, b)).toThrow(RangeError)
      }
    }
  })

  it("derives the same Ed25519 public key and signature from a seed as Node", () => {
    for (let i = 0; i < 50; i++) {
      const seed = node.randomBytes(32)
      const message = node.randomBytes(randomLength(200))
      const der = NodeBuffer.concat([PKCS8_PREFIX, seed])
      const nodeKey = node.createPrivateKey({ key: der, format: "der", type: "pkcs8" })
      const shimKey = shim.createPrivateKey({ key: Uint8Array.from(der), format: "der", type: "pkcs8" })
      const spki = (k: { export: (o: { format: "der"; type: "spki" }) => Uint8Array }) =>
        NodeBuffer.from(k.export({ format: "der", type: "spki" })).toString("hex")
      expect(spki(shim.createPublicKey(shimKey))).toBe(spki(node.createPublicKey(nodeKey)))
      expect(NodeBuffer.from(shim.sign(null, message, shimKey)).toString("hex")).toBe(
        node.sign(null, message, nodeKey).toString("hex")
      )
    }
  })

  it("verifies Ed25519 exactly as OpenSSL: honest, tampered and random signatures", () => {
    let accepted = 0
    for (let i = 0; i < ROUNDS; i++) {
      const seed = node.randomBytes(32)
      const publicKey = ed.getPublicKey(seed)
      const message = node.randomBytes(randomLength(200))
      const signature = ed.sign(message, seed)
      const cases: Array<[Uint8Array, Uint8Array, Uint8Array]> = [
        [publicKey, message, signature],
        [publicKey, message, flipBit(signature, i % 512)],
        [publicKey, message.length === 0 ? new Uint8Array([1]) : flipBit(message, i % (message.length * 8)), signature],
        [flipBit(publicKey, i % 256), message, signature],
        [publicKey, message, node.randomBytes(64)],
        // S + L: the same point equation, refused by both for S >= L.
        [publicKey, message, withSPlusL(signature)]
      ]
      for (const [key, msg, sig] of cases) {
        const expected = nodeVerify(key, msg, sig)
        if (expected) accepted++
        expect(shimVerify(key, msg, sig), `case ${i}`).toBe(expected)
      }
    }
    expect(accepted).toBeGreaterThanOrEqual(ROUNDS)
  })
})

const L = 0x1000000000000000000000000000000014def9dea2f79cd65812631a5cf5d3edn
const withSPlusL = (signature: Uint8Array): Uint8Array => {
  let s = 0n
  for (let i = 63; i >= 32; i--) s = (s << 8n) | BigInt(signature[i]!)
  s += L
  const out = Uint8Array.from(signature)
  for (let i = 32; i < 64; i++) {
    out[i] = Number(s & 0xffn)
    s >>= 8n
  }
  return out
}

describe("the browser's node:buffer", () => {
  it("encodes and decodes hex, base64 and UTF-8 like Node", () => {
    for (let i = 0; i < ROUNDS; i++) {
      const bytes = node.randomBytes(randomLength(300))
      const view = ShimBuffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
      expect(view.toString("hex")).toBe(bytes.toString("hex"))
      expect(view.toString("base64")).toBe(bytes.toString("base64"))
      expect(NodeBuffer.from(ShimBuffer.from(bytes.toString("hex"), "hex")).equals(bytes)).toBe(true)
      expect(NodeBuffer.from(ShimBuffer.from(bytes.toString("base64"), "base64")).equals(bytes)).toBe(true)
      const text = `${bytes.toString("base64")} é ✓ 🜁`
      expect(NodeBuffer.from(ShimBuffer.from(text, "utf8")).equals(NodeBuffer.from(text, "utf8"))).toBe(true)
      expect(ShimBuffer.from(text, "utf8").toString("utf8")).toBe(text)
      expect(ShimBuffer.byteLength(text, "utf8")).toBe(NodeBuffer.byteLength(text, "utf8"))
    }
  })

  it("a view shares its bytes, a copy does not (as Node's from(arrayBuffer) and from(bytes))", () => {
    const bytes = new Uint8Array([1, 2, 3, 4])
    const view = ShimBuffer.from(bytes.buffer, 1, 2)
    const copy = ShimBuffer.from(bytes)
    bytes[1] = 9
    expect([...view]).toEqual([9, 3])
    expect([...copy]).toEqual([1, 2, 3, 4])
  })
})
