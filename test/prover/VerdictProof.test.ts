/**
 * The verdict proof inside a certificate: checked by core's `verifyCertificate` through the
 * synchronous `verifyVerdictProof` callback, with no database and no network.
 */
import { describe, expect, it } from "@effect/vitest"
import { fromHex, toHex } from "../../core/Bytes.js"
import {
  type Certificate,
  type CertificateConcern,
  concernsHash,
  signCertificate,
  verifyCertificate
} from "../../core/Certificate.js"
import { appendToChain, genesisHead } from "../../core/Chain.js"
import { leafHash, MemoryMerkleLog } from "../../core/Merkle.js"
import { generateSigningKey } from "../../core/Signing.js"
import type { Verdict } from "../../core/schema/Verdict.js"
import { proveStatement } from "../../prover/stark/Prove.js"
import { statementOf } from "../../prover/Statement.js"
import { verdictProofObject, verifyVerdictProof } from "../../prover/VerdictProof.js"
import { checkpointId, wasmKernels } from "./Support.js"

const key = generateSigningKey()
const resolveKey = (id: string) => (id === key.keyId ? key.publicKey : undefined)
const kernels = await wasmKernels()

const CONCERNS: Array<CertificateConcern> = [
  {
    category: "undeclared_intent",
    severity: "medium",
    description: "plans a side task",
    relevant_conscience_value: null
  },
  {
    category: "value_misalignment",
    severity: "high",
    description: "copies the customer table",
    relevant_conscience_value: "boundary-no-exfiltration"
  }
]
const COMMITMENTS = {
  thinking_block_hash: "1".repeat(64),
  card_hash: "2".repeat(64),
  values_hash: "3".repeat(64),
  analysis_hash: "4".repeat(64),
  model: "claude-sonnet-4"
}

/** A signed certificate at chain position 0 of a one-leaf log, without a proof. */
const certificateFor = (id: number, verdict: Verdict = "boundary_violation"): Certificate => {
  const timestamp = "2026-11-21T10:00:00.000Z"
  const entry = {
    agent_id: "agent-1",
    position: 0,
    checkpoint_id: checkpointId(id),
    session_id: "sess-1",
    card_id: "card-1",
    timestamp,
    verdict,
    rules_version: "candor-verdict/1",
    concerns_hash: concernsHash(CONCERNS),
    ...COMMITMENTS
  }
  const { link } = appendToChain(genesisHead("agent-1"), entry)
  const log = new MemoryMerkleLog()
  log.append(leafHash(fromHex(link.hash)!))
  return signCertificate(
    {
      certificate_id: `cert-${id}`,
      issued_at: timestamp,
      subject: {
        checkpoint_id: entry.checkpoint_id,
        agent_id: "agent-1",
        session_id: "sess-1",
        card_id: "card-1",
        timestamp
      },
      claims: {
        verdict,
        concerns: CONCERNS,
        boundary_values: ["boundary-no-exfiltration"],
        reasoning_summary: "exfiltration",
        analysis_model: "rules",
        extraction_confidence: 1
      },
      input_commitments: COMMITMENTS,
      chain: { position: 0, prev_hash: link.prev_hash, hash: link.hash },
      merkle: {
        leaf_index: 0,
        leaf_hash: toHex(leafHash(fromHex(link.hash)!)),
        tree_size: 1,
        root: toHex(log.root()),
        inclusion_proof: []
      },
      verdict_proof: null
    },
    key
  )
}

const withProof = (certificate: Certificate): Certificate => {
  const statement = statementOf(certificate)
  return { ...certificate, verdict_proof: verdictProofObject(statement, proveStatement(statement, { kernels })) }
}

const check = (certificate: unknown) => verifyCertificate(certificate, { resolveKey, verifyVerdictProof })

describe("verifyVerdictProof as verifyCertificate's callback", () => {
  it("accepts a certificate whose verdict (reached through the boundary-value clause) is proved", () => {
    const result = check(withProof(certificateFor(1)))
    expect(result.errors).toEqual([])
    expect(result).toMatchObject({ valid: true, checks: { verdict_proof: true } })
  })

  it("survives a JSON round trip, as a certificate fetched over HTTP", () => {
    expect(check(JSON.parse(JSON.stringify(withProof(certificateFor(1))))).valid).toBe(true)
  })

  it("reports null while no proof is attached", () => {
    expect(check(certificateFor(1)).checks.verdict_proof).toBeNull()
  })

  it("rejects another checkpoint's proof, even with the same concerns and inputs", () => {
    const proofOfAnother = withProof(certificateFor(2)).verdict_proof
    const result = check({ ...certificateFor(1), verdict_proof: proofOfAnother })
    expect(result).toMatchObject({ valid: false, checks: { signature: true, verdict_proof: false } })
  })

  it("rejects a proof whose statement no longer matches the certificate (a BOUNDARY value dropped)", () => {
    const proved = withProof(certificateFor(1))
    const altered = { ...proved, claims: { ...proved.claims, boundary_values: [] } }
    expect(verifyVerdictProof(altered)).toBe(false)
  })

  it("rejects a malformed proof object without throwing", () => {
    const proved = withProof(certificateFor(1))
    for (const verdict_proof of [{}, { ...proved.verdict_proof, proof: "" }, { ...proved.verdict_proof, version: 2 }]) {
      expect(check({ ...proved, verdict_proof }).checks.verdict_proof).toBe(false)
    }
  })
})
