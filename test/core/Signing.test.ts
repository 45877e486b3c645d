import * as ed from "@noble/ed25519"
import { sha512 } from "@noble/hashes/sha2.js"
import { createPrivateKey, createPublicKey, randomBytes, verify as opensslVerify } from "node:crypto"
import { describe, expect, it } from "vitest"
import { concatBytes, fromHex, toBase64, toHex, utf8 } from "../../core/Bytes.js"
import { sha256 } from "../../core/Hash.js"
import {
  formatSigningKey,
  generateSigningKey,
  isValidPublicKey,
  keyIdOf,
  parseSigningKey,
  signingKeyFromSeed,
  verifySignature,
  verifySignaturePortable
} from "../../core/Signing.js"
import { readVectorJson } from "../Vectors.js"

ed.hashes.sha512 = sha512

interface WycheproofTest {
  readonly tcId: number
  readonly comment: string
  readonly msg: string
  readonly sig: string
  readonly result: "valid" | "invalid" | "acceptable"
  readonly flags: ReadonlyArray<string>
}
interface WycheproofFile {
  readonly numberOfTests: number
  readonly testGroups: ReadonlyArray<{
    readonly publicKey: { readonly pk: string }
    readonly tests: ReadonlyArray<WycheproofTest>
  }>
}

const hex = (text: string): Uint8Array => {
  const bytes = fromHex(text)
  if (bytes === undefined) throw new Error(`bad hex in test: ${text}`)
  return bytes
}

const verifiers = [
  ["node:crypto", verifySignature],
  ["noble", verifySignaturePortable]
] as const

describe("Wycheproof Ed25519", () => {
  const file = readVectorJson<WycheproofFile>("ed25519", "wycheproof_ed25519_test.json")
  const cases = file.testGroups.flatMap((group) => group.tests.map((test) => ({ pk: group.publicKey.pk, test })))

  it("has every vector and no 'acceptable' ones", () => {
    expect(cases.length).toBe(file.numberOfTests)
    expect(cases.length).toBe(151)
    expect(cases.filter((c) => c.test.result === "acceptable")).toEqual([])
  })

  for (const [name, verify] of verifiers) {
    it(`${name} agrees with all ${cases.length} vectors`, () => {
      let ran = 0
      let valid = 0
      for (const { pk, test } of cases) {
        const got = verify(hex(pk), hex(test.msg), hex(test.sig))
        expect(got, `tcId ${test.tcId} ${test.comment} ${test.flags.join(",")}`).toBe(test.result === "valid")
        ran++
        if (got) valid++
      }
      expect(ran).toBe(151)
      expect(valid).toBe(cases.filter((c) => c.test.result === "valid").length)
    })
  }
})

describe("RFC 8032 test 1", () => {
  const seed = hex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
  const publicKey = hex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
  const signature = hex(
    "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"
  )

  it("derives the public key and signs the empty message", () => {
    const key = signingKeyFromSeed(seed)
    expect(key).toBeDefined()
    expect(toHex(key!.publicKey)).toBe(toHex(publicKey))
    expect(toHex(key!.sign(new Uint8Array(0)))).toBe(toHex(signature))
    expect(key!.keyId).toBe(toHex(sha256(publicKey).subarray(0, 16)))
    expect(key!.keyId).toMatch(/^[0-9a-f]{32}$/)
    expect(keyIdOf(publicKey)).toBe(key!.keyId)
  })

  for (const [name, verify] of verifiers) {
    it(`${name} verifies it`, () => {
      expect(verify(publicKey, new Uint8Array(0), signature)).toBe(true)
      expect(verify(publicKey, new Uint8Array([0]), signature)).toBe(false)
    })
  }
})

describe("node:crypto and noble interoperate", () => {
  it("produce identical signatures from the same seed, and each verifies the other's", () => {
    for (let i = 0; i < 24; i++) {
      const seed = new Uint8Array(randomBytes(32))
      const message = new Uint8Array(randomBytes(i * 7))
      const key = signingKeyFromSeed(seed)!
      expect(toHex(key.publicKey)).toBe(toHex(ed.getPublicKey(seed)))
      const nodeSig = key.sign(message)
      const nobleSig = ed.sign(message, seed)
      expect(toHex(nodeSig)).toBe(toHex(nobleSig))
      expect(verifySignature(key.publicKey, message, nobleSig)).toBe(true)
      expect(verifySignaturePortable(key.publicKey, message, nodeSig)).toBe(true)
      expect(ed.verify(nodeSig, message, key.publicKey, { zip215: false })).toBe(true)
    }
  })

  it("generated keys are fresh and sign verifiably", () => {
    const a = generateSigningKey()
    const b = generateSigningKey()
    expect(a.keyId).not.toBe(b.keyId)
    const message = utf8("hello")
    expect(verifySignature(a.publicKey, message, a.sign(message))).toBe(true)
    expect(verifySignature(b.publicKey, message, a.sign(message))).toBe(false)
    expect(isValidPublicKey(a.publicKey)).toBe(true)
  })
})

describe("tampering", () => {
  const key = signingKeyFromSeed(hex("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb"))!
  const message = utf8("candor checkpoint 42")
  const signature = key.sign(message)

  const flips = (bytes: Uint8Array): Array<Uint8Array> => {
    const out: Array<Uint8Array> = []
    for (let i = 0; i < bytes.length * 8; i++) {
      const copy = Uint8Array.from(bytes)
      copy[i >> 3] = copy[i >> 3]! ^ (1 << (i & 7))
      out.push(copy)
    }
    return out
  }

  for (const [name, verify] of verifiers) {
    it(`${name}: every single-bit flip of message, signature or key is rejected`, () => {
      expect(verify(key.publicKey, message, signature)).toBe(true)
      const results = [
        ...flips(message).map((m) => verify(key.publicKey, m, signature)),
        ...flips(signature).map((s) => verify(key.publicKey, message, s)),
        ...flips(key.publicKey).map((k) => verify(k, message, signature))
      ]
      expect(results.length).toBe((message.length + 64 + 32) * 8)
      expect(results.filter((ok) => ok)).toEqual([])
    })

    it(`${name}: wrong lengths and non-bytes are false, never a throw`, () => {
      expect(verify(key.publicKey.subarray(0, 31), message, signature)).toBe(false)
      expect(verify(concatBytes(key.publicKey, new Uint8Array(1)), message, signature)).toBe(false)
      expect(verify(key.publicKey, message, signature.subarray(0, 63))).toBe(false)
      expect(verify(key.publicKey, message, concatBytes(signature, new Uint8Array(1)))).toBe(false)
      expect(verify(new Uint8Array(0), new Uint8Array(0), new Uint8Array(0))).toBe(false)
      const junk = "not bytes" as unknown as Uint8Array
      expect(verify(junk, message, signature)).toBe(false)
      expect(verify(key.publicKey, junk, signature)).toBe(false)
      expect(verify(key.publicKey, message, junk)).toBe(false)
    })
  }
})

/**
 * Inputs beyond Wycheproof on which OpenSSL and noble disagree unless we add checks (see the
 * header of core/Signing.ts). Each case is crafted with noble's point arithmetic.
 */
describe("strictness beyond Wycheproof", () => {
  const L = 2n ** 252n + 27742317777372353535851937790883648493n
  const P = 2n ** 255n - 19n
  const le = (bytes: Uint8Array): bigint => {
    let n = 0n
    for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i]!)
    return n
  }
  const toLE = (value: bigint): Uint8Array => {
    const out = new Uint8Array(32)
    let n = value
    for (let i = 0; i < 32; i++) {
      out[i] = Number(n & 255n)
      n >>= 8n
    }
    return out
  }
  const challenge = (r: Uint8Array, a: Uint8Array, m: Uint8Array): bigint => le(sha512(concatBytes(r, a, m))) % L
  const randomScalar = (): bigint => (le(new Uint8Array(randomBytes(40))) % (L - 1n)) + 1n
  const rawOpenssl = (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean =>
    opensslVerify(
      null,
      message,
      createPublicKey({
        key: Buffer.concat([Buffer.from("302a300506032b6570032100", "hex"), publicKey]),
        format: "der",
        type: "spki"
      }),
      signature
    )
  const rawNoble = (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean => {
    try {
      return ed.verify(signature, message, publicKey, { zip215: false })
    } catch {
      return false
    }
  }
  /** The canonical encodings of the eight points of small order. */
  const smallOrder = [
    "0100000000000000000000000000000000000000000000000000000000000000",
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "0000000000000000000000000000000000000000000000000000000000000000",
    "0000000000000000000000000000000000000000000000000000000000000080",
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa"
  ].map(hex)
  const order8 = ed.Point.fromBytes(smallOrder[4]!)

  /** For a small-order key A, [k]A = 0 whenever 8 | k, so (R = [r]B, S = r) verifies with no secret. */
  const forgeForSmallOrderKey = (a: Uint8Array): { message: Uint8Array; signature: Uint8Array } => {
    for (let i = 0; ; i++) {
      const r = randomScalar()
      const rBytes = ed.Point.BASE.multiply(r).toBytes()
      const message = utf8(`forged ${i}`)
      if (challenge(rBytes, a, message) % 8n === 0n) return { message, signature: concatBytes(rBytes, toLE(r)) }
    }
  }

  it("the eight small-order points are what we think they are", () => {
    for (const bytes of smallOrder) expect(ed.Point.fromBytes(bytes).isSmallOrder()).toBe(true)
    expect(order8.multiply(4n, false).is0()).toBe(false)
  })

  it("small-order keys: forgeable under raw OpenSSL, rejected by both verifiers", () => {
    for (const a of smallOrder) {
      const { message, signature } = forgeForSmallOrderKey(a)
      expect(rawOpenssl(a, message, signature)).toBe(true)
      expect(rawNoble(a, message, signature)).toBe(false)
      expect(isValidPublicKey(a)).toBe(false)
      expect(verifySignature(a, message, signature)).toBe(false)
      expect(verifySignaturePortable(a, message, signature)).toBe(false)
    }
  })

  it("non-canonical key encodings (y + p, and x = 0 with the sign bit) are rejected by both", () => {
    const encodings = [toLE(P), toLE(P + 1n), toLE(1n), toLE(P - 1n)].map((bytes, i) => {
      const out = Uint8Array.from(bytes)
      if (i >= 2) out[31] = out[31]! | 0x80 // x = 0 forms with the sign bit set
      return out
    })
    const withSign = Uint8Array.from(toLE(P + 1n))
    withSign[31] = withSign[31]! | 0x80
    encodings.push(withSign)
    for (const a of encodings) {
      const { message, signature } = forgeForSmallOrderKey(a)
      expect(rawOpenssl(a, message, signature)).toBe(true)
      expect(verifySignature(a, message, signature)).toBe(false)
      expect(verifySignaturePortable(a, message, signature)).toBe(false)
    }
    // A non-canonical encoding of a point that is not small order (y = p + 3) is refused up front.
    expect(isValidPublicKey(toLE(P + 3n))).toBe(false)
  })

  it("a key with a torsion component: raw noble always accepts, raw OpenSSL ~1/8; both verifiers reject", () => {
    const a = randomScalar()
    const publicKey = ed.Point.BASE.multiply(a).add(order8).toBytes()
    let opensslAccepted = 0
    let nobleAccepted = 0
    for (let i = 0; i < 32; i++) {
      const r = randomScalar()
      const rBytes = ed.Point.BASE.multiply(r).toBytes()
      const message = utf8(`mixed key ${i}`)
      const s = (r + challenge(rBytes, publicKey, message) * a) % L
      const signature = concatBytes(rBytes, toLE(s))
      if (rawOpenssl(publicKey, message, signature)) opensslAccepted++
      if (rawNoble(publicKey, message, signature)) nobleAccepted++
      expect(verifySignature(publicKey, message, signature)).toBe(false)
      expect(verifySignaturePortable(publicKey, message, signature)).toBe(false)
    }
    expect(nobleAccepted).toBe(32)
    expect(opensslAccepted).toBeLessThan(32)
  })

  it("R with a torsion component (cofactored-only valid): raw noble accepts, both verifiers reject", () => {
    const seed = new Uint8Array(randomBytes(32))
    const key = signingKeyFromSeed(seed)!
    // RFC 8032 secret scalar: clamped first half of SHA-512(seed).
    const h = sha512(seed)
    const head = Uint8Array.from(h.subarray(0, 32))
    head[0] = head[0]! & 248
    head[31] = (head[31]! & 127) | 64
    const a = le(head)
    for (let i = 0; i < 4; i++) {
      const r = randomScalar()
      const rBytes = ed.Point.BASE.multiply(r).add(order8).toBytes()
      const message = utf8(`mixed R ${i}`)
      const s = (r + challenge(rBytes, key.publicKey, message) * a) % L
      const signature = concatBytes(rBytes, toLE(s))
      expect(rawNoble(key.publicKey, message, signature)).toBe(true)
      expect(rawOpenssl(key.publicKey, message, signature)).toBe(false)
      expect(verifySignature(key.publicKey, message, signature)).toBe(false)
      expect(verifySignaturePortable(key.publicKey, message, signature)).toBe(false)
    }
  })

  it("S + L (non-canonical S) is rejected by both", () => {
    const key = generateSigningKey()
    const message = utf8("s malleability")
    const signature = key.sign(message)
    const s = le(signature.subarray(32))
    const malleated = concatBytes(signature.subarray(0, 32), toLE(s + L))
    for (const [, verify] of verifiers) expect(verify(key.publicKey, message, malleated)).toBe(false)
  })
})

describe("key text", () => {
  const seedHex = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"
  const seed = hex(seedHex)
  const expected = toHex(signingKeyFromSeed(seed)!.publicKey)
  const pem = formatSigningKey(signingKeyFromSeed(seed)!)

  it("formats PKCS#8 PEM exactly as node:crypto and OpenSSL do", () => {
    const nodePem = createPrivateKey({
      key: Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), Buffer.from(seed)]),
      format: "der",
      type: "pkcs8"
    }).export({ type: "pkcs8", format: "pem" })
    expect(pem).toBe(nodePem)
    expect(pem).toBe(
      "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIJ1hsZ3v/VpguoRK9JLsLMREScVpezJpGXA7rAMcrn9g\n-----END PRIVATE KEY-----\n"
    )
  })

  it("parses every accepted form to the same key, with surrounding whitespace", () => {
    const forms = [
      seedHex,
      seedHex.toUpperCase(),
      `  ${seedHex}\n`,
      toBase64(seed),
      `\n${toBase64(seed)}\n`,
      pem,
      pem.replace(/\n/g, "\r\n"),
      `\n\n${pem}\n`
    ]
    for (const form of forms) {
      const key = parseSigningKey(form)
      expect(key, JSON.stringify(form)).toBeDefined()
      expect(toHex(key!.publicKey)).toBe(expected)
      expect(toHex(key!.exportSeed())).toBe(seedHex)
    }
  })

  it("round-trips random keys through PEM, hex and base64", () => {
    for (let i = 0; i < 8; i++) {
      const key = generateSigningKey()
      for (const text of [formatSigningKey(key), toHex(key.exportSeed()), toBase64(key.exportSeed())]) {
        const parsed = parseSigningKey(text)!
        expect(parsed.keyId).toBe(key.keyId)
        expect(toHex(parsed.sign(utf8("x")))).toBe(toHex(key.sign(utf8("x"))))
      }
    }
  })

  it("refuses garbage", () => {
    const garbage = [
      "",
      "   ",
      seedHex.slice(2),
      `${seedHex}00`,
      `0x${seedHex}`,
      seedHex.replace("9", "g"),
      toBase64(seed).replace("=", ""),
      toBase64(new Uint8Array(31)),
      toBase64(new Uint8Array(33)),
      "not a key",
      pem.replace("PRIVATE KEY", "PUBLIC KEY"),
      pem.replace("MC4C", "MC4D"),
      pem.replace("-----END PRIVATE KEY-----", ""),
      pem.replace("BEGIN PRIVATE KEY", "BEGIN ENCRYPTED PRIVATE KEY"),
      // An Ed448 key, and a PKCS#8 with a trailing byte.
      createPrivateKey({
        key: Buffer.concat([Buffer.from("3047020100300506032b6571043b0439", "hex"), randomBytes(57)]),
        format: "der",
        type: "pkcs8"
      })
        .export({ type: "pkcs8", format: "pem" })
        .toString(),
      `-----BEGIN PRIVATE KEY-----\n${toBase64(concatBytes(hex("302e020100300506032b657004220420"), seed, new Uint8Array(1)))}\n-----END PRIVATE KEY-----\n`
    ]
    for (const text of garbage) expect(parseSigningKey(text), JSON.stringify(text)).toBeUndefined()
    expect(parseSigningKey(42 as unknown as string)).toBeUndefined()
    expect(signingKeyFromSeed(new Uint8Array(31))).toBeUndefined()
    expect(signingKeyFromSeed(new Uint8Array(33))).toBeUndefined()
  })

  it("keeps the seed out of the object's properties and hands out copies", () => {
    const key = signingKeyFromSeed(seed)!
    expect(JSON.stringify(key)).not.toContain(seedHex)
    expect(Object.values(key).some((v) => v instanceof Uint8Array && toHex(v) === seedHex)).toBe(false)
    const exported = key.exportSeed()
    exported.fill(0)
    expect(toHex(key.exportSeed())).toBe(seedHex)
    // Mutating the caller's seed after construction does not change the key.
    const mutable = Uint8Array.from(seed)
    const other = signingKeyFromSeed(mutable)!
    mutable.fill(1)
    expect(toHex(other.exportSeed())).toBe(seedHex)
  })
})
