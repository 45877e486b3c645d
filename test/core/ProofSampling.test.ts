import { describe, expect, it } from "@effect/vitest"
import { inProofSample, proofSamplingDraw, shouldProve } from "../../core/ProofSampling.js"

// Digests computed with `printf 'candor/v1/proof-sampling\0<id>' | openssl dgst -sha256`.
const VECTORS = [
  { id: "ic-00000000-0000-0000-0000-000000000000", prefix: 0x78e2505eec490355n, sampled: false },
  { id: "ic-11111111-1111-4111-8111-111111111111", prefix: 0xaf78dd7a9b307033n, sampled: false },
  { id: "ic-0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f0", prefix: 0x17c67b0ce1c55d31n, sampled: true }
]

const idOf = (n: number): string => {
  const hex = n.toString(16).padStart(12, "0")
  return `ic-${hex.slice(0, 8)}-0000-4000-8000-${hex}`
}

describe("proof sampling", () => {
  it("draws the first 8 bytes of the tagged SHA-256, big-endian", () => {
    for (const v of VECTORS) {
      expect(proofSamplingDraw(v.id)).toBe(v.prefix)
      expect(inProofSample(v.id)).toBe(v.sampled)
      expect(shouldProve(v.id, "clear")).toBe(v.sampled)
      expect(shouldProve(v.id, "review_needed")).toBe(v.sampled)
    }
  })

  it("proves every boundary violation", () => {
    for (const v of VECTORS) expect(shouldProve(v.id, "boundary_violation")).toBe(true)
  })

  it("samples exactly the draws below 2^64 / 10", () => {
    for (let n = 0; n < 2_000; n++) {
      const id = idOf(n)
      expect(inProofSample(id)).toBe(proofSamplingDraw(id) * 10n < 1n << 64n)
    }
  })

  it("samples between 9% and 11% of 100k ids", () => {
    let sampled = 0
    for (let n = 0; n < 100_000; n++) if (shouldProve(idOf(n), "clear")) sampled++
    expect(sampled).toBeGreaterThan(9_000)
    expect(sampled).toBeLessThan(11_000)
  })

  it("takes other whole percentages, 0 and 100 included, and refuses the rest", () => {
    expect(inProofSample(VECTORS[2]!.id, 0)).toBe(false)
    expect(inProofSample(VECTORS[1]!.id, 100)).toBe(true)
    expect(inProofSample(VECTORS[0]!.id, 50)).toBe(true) // 0x78… < 2^63
    expect(inProofSample(VECTORS[1]!.id, 50)).toBe(false) // 0xaf… >= 2^63
    expect(() => inProofSample(VECTORS[0]!.id, 10.5)).toThrow(RangeError)
    expect(() => inProofSample(VECTORS[0]!.id, 101)).toThrow(RangeError)
  })
})
