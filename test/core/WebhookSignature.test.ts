import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import { utf8 } from "../../core/Bytes.js"
import { aipSignature, signWebhook, verifyAipSignature, verifyWebhook } from "../../core/WebhookSignature.js"

const SECRET = "whsec_0123456789abcdef0123456789abcdef"
const NEXT_SECRET = "whsec_next_secret_0000000000000000000"
const BODY = '{"event":"agent.paused"}'
const T = 1_700_000_000
const at = (seconds: number) => new Date(seconds * 1000)

// Expected MACs from `printf … | openssl dgst -sha256 -hmac <secret>`.
const BODY_MAC = "7ffbcf4b689ebb761fcf31ef8f87a6ba2245acda5836502d3d39f26491690af5"
const TIMESTAMPED_MAC = "e7f598d0558a00c281c6c620d4864c993fc3305f80704870a9644e6a953d3015"
const TIMESTAMPED_MAC_NEXT = "4412c0d6dcdfb061ade82d5df47ed0c8fe8c1dc4df603c9afcb6de213a268074"

describe("webhook signatures", () => {
  it("signs both headers as documented", () => {
    const headers = signWebhook(SECRET, BODY, new Date(T * 1000 + 999))
    expect(headers).toEqual({
      "X-AIP-Signature": `sha256=${BODY_MAC}`,
      "X-Candor-Signature": `t=${T},v1=${TIMESTAMPED_MAC}`
    })
    expect(aipSignature(SECRET, utf8(BODY))).toBe(`sha256=${BODY_MAC}`)
  })

  it("signs with every secret of a rotation, and the receiver accepts either", () => {
    const headers = signWebhook([SECRET, NEXT_SECRET], BODY, at(T))
    expect(headers["X-Candor-Signature"]).toBe(`t=${T},v1=${TIMESTAMPED_MAC},v1=${TIMESTAMPED_MAC_NEXT}`)
    expect(headers["X-AIP-Signature"]).toBe(`sha256=${BODY_MAC}`)
    expect(verifyWebhook(SECRET, BODY, headers, at(T))).toEqual({ ok: true, timestamp: T })
    expect(verifyWebhook(NEXT_SECRET, BODY, headers, at(T))).toEqual({ ok: true, timestamp: T })
    expect(() => signWebhook([], BODY, at(T))).toThrow(RangeError)
  })

  it("verifies within the tolerance and refuses outside it, both ways", () => {
    const headers = signWebhook(SECRET, BODY, at(T))
    expect(verifyWebhook(SECRET, BODY, headers, at(T + 300))).toEqual({ ok: true, timestamp: T })
    expect(verifyWebhook(SECRET, BODY, headers, at(T - 300))).toEqual({ ok: true, timestamp: T })
    expect(verifyWebhook(SECRET, BODY, headers, at(T + 301))).toEqual({
      ok: false,
      reason: "timestamp_out_of_tolerance"
    })
    expect(verifyWebhook(SECRET, BODY, headers, at(T - 301))).toEqual({
      ok: false,
      reason: "timestamp_out_of_tolerance"
    })
    expect(verifyWebhook(SECRET, BODY, headers, at(T + 60), 30)).toEqual({
      ok: false,
      reason: "timestamp_out_of_tolerance"
    })
  })

  it("names what is wrong", () => {
    const now = at(T)
    const cases: ReadonlyArray<readonly [Record<string, string>, string]> = [
      [{}, "missing_signature"],
      [{ "X-Candor-Signature": " " }, "missing_signature"],
      [{ "X-Candor-Signature": `v1=${TIMESTAMPED_MAC}` }, "malformed_signature"],
      [{ "X-Candor-Signature": `t=${T}` }, "malformed_signature"],
      [{ "X-Candor-Signature": `t=${T},t=${T},v1=${TIMESTAMPED_MAC}` }, "malformed_signature"],
      [{ "X-Candor-Signature": `t=abc,v1=${TIMESTAMPED_MAC}` }, "malformed_signature"],
      [{ "X-Candor-Signature": `t=${T},v1=${TIMESTAMPED_MAC.slice(2)}` }, "malformed_signature"],
      [{ "X-Candor-Signature": `t=${T},v1=${BODY_MAC}` }, "signature_mismatch"],
      [{ "X-Candor-Signature": `t=${T + 1},v1=${TIMESTAMPED_MAC}` }, "signature_mismatch"]
    ]
    for (const [headers, reason] of cases)
      expect(verifyWebhook(SECRET, BODY, headers, now)).toEqual({ ok: false, reason })
  })

  it("reads headers case-insensitively, from objects, arrays and fetch Headers; ignores unknown schemes", () => {
    const value = `t=${T}, v0=deadbeef, v1=${TIMESTAMPED_MAC.toUpperCase()}`
    const ok = { ok: true, timestamp: T }
    expect(verifyWebhook(SECRET, BODY, { "x-candor-signature": value }, at(T))).toEqual(ok)
    expect(verifyWebhook(SECRET, BODY, { "X-CANDOR-SIGNATURE": [value] }, at(T))).toEqual(ok)
    expect(verifyWebhook(SECRET, BODY, new Headers({ "X-Candor-Signature": value }), at(T))).toEqual(ok)
    expect(verifyWebhook(SECRET, utf8(BODY), { "X-Candor-Signature": value }, at(T))).toEqual(ok)
  })

  it("checks Mnemom's body-only header", () => {
    const headers = { "x-aip-signature": `sha256=${BODY_MAC}` }
    expect(verifyAipSignature(SECRET, BODY, headers)).toBe(true)
    expect(verifyAipSignature(NEXT_SECRET, BODY, headers)).toBe(false)
    expect(verifyAipSignature(SECRET, `${BODY} `, headers)).toBe(false)
    expect(verifyAipSignature(SECRET, BODY, { "x-aip-signature": BODY_MAC })).toBe(false)
    expect(verifyAipSignature(SECRET, BODY, {})).toBe(false)
  })

  it("accepts exactly the right secret, body and time window (property)", () => {
    FastCheck.assert(
      FastCheck.property(
        FastCheck.string({ minLength: 1 }),
        FastCheck.string({ minLength: 1 }),
        FastCheck.string(),
        FastCheck.string(),
        FastCheck.integer({ min: 0, max: 4_000_000_000 }),
        FastCheck.integer({ min: -1_000, max: 1_000 }),
        (secret, otherSecret, body, otherBody, t, skew) => {
          const headers = signWebhook(secret, body, at(t))
          const inWindow = Math.abs(skew) <= 300
          const verdict = verifyWebhook(secret, body, headers, at(t + skew))
          expect(verdict.ok).toBe(inWindow)
          if (inWindow) {
            expect(verifyWebhook(otherSecret, body, headers, at(t + skew)).ok).toBe(otherSecret === secret)
            expect(verifyWebhook(secret, otherBody, headers, at(t + skew)).ok).toBe(otherBody === body)
          }
        }
      ),
      { numRuns: 300 }
    )
  })
})
