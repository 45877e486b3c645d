/**
 * A `fail_closed` verdict on an answer Candor could not judge is certified as a violation (issue 24),
 * end to end from the gateway's judgement: the checkpoint the gateway builds, the attestation the
 * worker makes (`candor-verdict/1` re-derives the verdict from the concerns), the STARK of that
 * derivation, and a third-party verifier that accepts it and says why (the failure-policy concern).
 * Without the concern, the rule would certify the same checkpoint `clear`: the gap this closes.
 */
import { describe, expect, it } from "@effect/vitest"
import { type AgentLogState, attest, emptyLogState } from "../../core/Attestation.js"
import { type Certificate, verifyCertificate } from "../../core/Certificate.js"
import { analysisHash } from "../../core/Commitments.js"
import { failurePolicyReason } from "../../core/FailurePolicy.js"
import type { IntegrityCheckpoint } from "../../core/schema/Checkpoint.js"
import { UNANALYSED_REASONS, type FailurePolicy } from "../../core/schema/Verdict.js"
import { generateSigningKey } from "../../core/Signing.js"
import { buildResponseEvent } from "../../adapters/gateway/ResponseEvent.js"
import { unanalysedJudgement } from "../../adapters/gateway/UnanalysedJudgement.js"
import type { FailureReason } from "../../core/FailurePolicy.js"
import { proveStatement } from "../../prover/stark/Prove.js"
import { statementOf } from "../../prover/Statement.js"
import { verdictProofObject, verifyVerdictProof } from "../../prover/VerdictProof.js"
import { formatReport } from "../../src/cli/Verify.js"
import { wasmKernels } from "../prover/Support.js"

const key = generateSigningKey()
const resolveKey = (id: string) => (id === key.keyId ? key.publicKey : undefined)
const kernels = await wasmKernels()
const HASH = "a".repeat(64)

/** The checkpoint the gateway publishes for an answer it could not judge, under `policy`. */
const checkpointOf = (policy: FailurePolicy, reason: FailureReason): IntegrityCheckpoint =>
  buildResponseEvent({
    agentId: "agt-failure-policy",
    cardId: undefined,
    sessionId: "sess-1",
    provider: "anthropic",
    outcome: { kind: "complete", status: 200, bytes: 10, cause: undefined },
    extraction: undefined,
    judgement: unanalysedJudgement(policy, reason, HASH),
    policy: undefined,
    now: new Date("2026-05-01T00:00:00.000Z")
  }).checkpoint

/** What the worker attests for it (streams/AttestEvent.ts: the concerns without evidence, the verdict derived). */
const certify = (checkpoint: IntegrityCheckpoint, state: AgentLogState = emptyLogState(checkpoint.agent_id)) =>
  attest(
    state,
    {
      certificate_id: `cert-${checkpoint.checkpoint_id.slice(3)}`,
      issued_at: checkpoint.timestamp,
      subject: {
        checkpoint_id: checkpoint.checkpoint_id,
        agent_id: checkpoint.agent_id,
        session_id: checkpoint.session_id,
        card_id: checkpoint.card_id,
        timestamp: checkpoint.timestamp
      },
      claims: {
        concerns: checkpoint.concerns.map(({ category, description, relevant_conscience_value, severity }) => ({
          category,
          severity,
          description,
          relevant_conscience_value: relevant_conscience_value ?? null
        })),
        boundary_values: [],
        reasoning_summary: checkpoint.reasoning_summary,
        analysis_model: checkpoint.analysis_metadata.analysis_model,
        extraction_confidence: checkpoint.analysis_metadata.extraction_confidence
      },
      input_commitments: {
        thinking_block_hash: checkpoint.thinking_block_hash,
        card_hash: HASH,
        values_hash: HASH,
        analysis_hash: analysisHash(checkpoint),
        model: checkpoint.model
      }
    },
    key
  ).certificate

const withProof = (certificate: Certificate): Certificate => {
  const statement = statementOf(certificate)
  return { ...certificate, verdict_proof: verdictProofObject(statement, proveStatement(statement, { kernels })) }
}

describe("failure-policy verdicts, certified", () => {
  for (const reason of [...UNANALYSED_REASONS, "analysis_failed"] as const) {
    it(`fail_closed, ${reason}: certified boundary_violation, proved, and a verifier says it is the failure policy's`, () => {
      const checkpoint = checkpointOf("fail_closed", reason)
      expect(checkpoint).toMatchObject({
        verdict: "boundary_violation",
        synthetic: true,
        synthetic_reason: reason === "analysis_failed" ? "analysis_failed" : "unanalysed"
      })
      const certificate = withProof(certify(checkpoint))
      expect(certificate.claims.verdict).toBe("boundary_violation")
      const verified = verifyCertificate(JSON.parse(JSON.stringify(certificate)), { resolveKey, verifyVerdictProof })
      expect(verified.errors).toEqual([])
      expect(verified).toMatchObject({ valid: true, checks: { verdict: true, verdict_proof: true } })
      expect(failurePolicyReason(certificate.claims)).toBe(reason)
      expect(formatReport(certificate, verified, false)).toContain(
        `boundary_violation  by the failure policy (fail_closed): not analysed, ${reason}`
      )
    })
  }

  it("fail_open: certified clear, with no concern", () => {
    const certificate = certify(checkpointOf("fail_open", "judge_timeout"))
    expect(certificate.claims).toMatchObject({ verdict: "clear", concerns: [], analysis_model: "none" })
    expect(verifyCertificate(certificate, { resolveKey }).valid).toBe(true)
    expect(failurePolicyReason(certificate.claims)).toBeUndefined()
  })

  it("without the failure-policy concern the rule certifies the same checkpoint clear (why it exists)", () => {
    const checkpoint = checkpointOf("fail_closed", "judge_timeout")
    expect(certify({ ...checkpoint, concerns: [] }).claims.verdict).toBe("clear")
  })

  it("a judge's own concern dressed like the failure-policy one is not taken for it", () => {
    const checkpoint = checkpointOf("fail_closed", "over_share")
    const judged = certify({
      ...checkpoint,
      analysis_metadata: { ...checkpoint.analysis_metadata, analysis_model: "rules" }
    })
    expect(judged.claims.verdict).toBe("boundary_violation")
    expect(failurePolicyReason(judged.claims)).toBeUndefined()
  })
})
