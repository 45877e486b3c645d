import { describe, expect, it } from "@effect/vitest"
import { fromHex, toHex } from "../../core/Bytes.js"
import { type AttestationInput, attest, emptyLogState } from "../../core/Attestation.js"
import { verifyCertificate } from "../../core/Certificate.js"
import { verifyChain } from "../../core/Chain.js"
import {
  emptyFrontier,
  appendToFrontier,
  MemoryMerkleLog,
  newestLeafProof,
  verifyConsistency,
  verifyInclusion
} from "../../core/Merkle.js"
import type { CertificateConcern } from "../../core/Certificate.js"
import { generateSigningKey } from "../../core/Signing.js"

const HEX = (c: string) => c.repeat(64)
const key = generateSigningKey()
const resolveKey = (id: string) => (id === key.keyId ? key.publicKey : undefined)

const input = (i: number, concerns: ReadonlyArray<CertificateConcern>): AttestationInput => ({
  certificate_id: `cert-${i}`,
  issued_at: "2026-11-21T12:00:00.000Z",
  subject: {
    checkpoint_id: `ic-00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
    agent_id: "agent-7",
    session_id: `sess-${i % 3}`,
    card_id: "card-1",
    timestamp: "2026-11-21T12:00:00.000Z"
  },
  claims: {
    concerns,
    boundary_values: ["boundary-no-deception"],
    reasoning_summary: "summary",
    analysis_model: "rules",
    extraction_confidence: 1
  },
  input_commitments: {
    thinking_block_hash: HEX("1"),
    card_hash: HEX("2"),
    values_hash: HEX("3"),
    analysis_hash: HEX("4"),
    model: "m"
  }
})

const CONCERNS: ReadonlyArray<ReadonlyArray<CertificateConcern>> = [
  [],
  [{ category: "undeclared_intent", severity: "medium", description: "d", relevant_conscience_value: null }],
  [{ category: "prompt_injection", severity: "high", description: "d", relevant_conscience_value: null }],
  [
    {
      category: "value_misalignment",
      severity: "high",
      description: "d",
      relevant_conscience_value: "boundary-no-deception"
    }
  ]
]
const EXPECTED = ["clear", "review_needed", "boundary_violation", "boundary_violation"]

describe("attestation", () => {
  it("a tool result's certificate carries claims.analysis_scope under the signature (issue 28)", () => {
    const base = input(0, CONCERNS[3]!)
    const { certificate } = attest(
      emptyLogState("agent-7"),
      { ...base, claims: { ...base.claims, analysis_scope: "tool_result" } },
      key
    )
    expect(certificate.claims.analysis_scope).toBe("tool_result")
    expect(verifyCertificate(certificate, { resolveKey })).toMatchObject({ valid: true, errors: [] })
    // Stripped so that its violation would count toward the reputation: the signature no longer verifies.
    const { analysis_scope: _, ...claims } = certificate.claims
    expect(verifyCertificate({ ...certificate, claims }, { resolveKey }).valid).toBe(false)
  })

  it("issues certificates that verify, with the verdict derived by the rule", () => {
    let state = emptyLogState("agent-7")
    const log = new MemoryMerkleLog()
    const links = []
    const certificates = []
    for (let i = 0; i < 40; i++) {
      const result = attest(state, input(i, CONCERNS[i % 4]!), key)
      state = result.state
      links.push(result.link)
      certificates.push(result.certificate)
      log.append(result.nodes[0]!.hash)
      expect(result.certificate.claims.verdict).toBe(EXPECTED[i % 4])
      expect(verifyCertificate(result.certificate, { resolveKey })).toMatchObject({ valid: true, errors: [] })
      expect(result.certificate.merkle.root).toBe(toHex(log.root()))
    }
    expect(verifyChain(links).valid).toBe(true)
    expect(state.head.position).toBe(40)
    // Every old certificate's root is a prefix of today's log: consistency proves it only grew.
    for (const c of certificates) {
      const proof = log.consistencyProof(c.merkle.tree_size)
      expect(
        verifyConsistency({
          size1: c.merkle.tree_size,
          size2: 40,
          proof,
          root1: fromHex(c.merkle.root)!,
          root2: log.root()
        })
      ).toBe(true)
      const leaf = fromHex(c.merkle.leaf_hash)!
      expect(
        verifyInclusion({
          leafIndex: c.merkle.leaf_index,
          treeSize: 40,
          leafHash: leaf,
          proof: log.inclusionProof(c.merkle.leaf_index),
          root: log.root()
        })
      ).toBe(true)
    }
  })

  it("refuses a torn log state", () => {
    const state = {
      ...emptyLogState("agent-7"),
      frontier: appendToFrontier(emptyFrontier, new Uint8Array(32)).frontier
    }
    expect(() => attest(state, input(0, []), key)).toThrow(RangeError)
  })

  it("proves the newest leaf from the frontier alone", () => {
    const log = new MemoryMerkleLog()
    let frontier = emptyFrontier
    for (let n = 1; n <= 300; n++) {
      const leaf = new Uint8Array(32).fill(n % 251)
      const proof = newestLeafProof(frontier)
      frontier = appendToFrontier(frontier, leaf).frontier
      log.append(leaf)
      expect(proof.map(toHex)).toEqual(log.inclusionProof(n - 1).map(toHex))
    }
  })
})
