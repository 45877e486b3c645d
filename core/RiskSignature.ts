/**
 * Signing and checking risk assessment records (docs/risk.md). The signature is Ed25519 over
 * `"candor/v1/risk-assessment\0" ‖ JCS(record without signature)` (individual and team records
 * alike: the record's own shape tells them apart). The domain tag keeps a risk signature from ever
 * being replayed as any other signed Candor document. Checking a record is two independent steps:
 * the signature (who said it), and the result recomputed from the record's inputs with
 * core/Risk.ts (that the service applied the published formula to what it says it read).
 */
import { concatBytes, fromBase64, toBase64 } from "./Bytes.js"
import { canonicalBytes, canonicalJson } from "./Canonical.js"
import { domainTag } from "./Hash.js"
import { assessRisk, assessTeamRisk } from "./Risk.js"
import type { RiskAssessment, RiskResult, TeamRiskAssessment } from "./schema/Risk.js"
import { keyIdOf, type SigningKey, verifySignature } from "./Signing.js"

export const RISK_SIGNATURE_PURPOSE = "risk-assessment"

type Signed = RiskAssessment | TeamRiskAssessment

/** The bytes a record's signature covers. */
export const riskSignedBytes = (record: Omit<Signed, "signature">): Uint8Array => {
  const { signature: _signature, ...unsigned } = record as Signed
  return concatBytes(domainTag(RISK_SIGNATURE_PURPOSE), canonicalBytes(unsigned))
}

export const signRiskRecord = <R extends Signed>(unsigned: Omit<R, "signature" | "key_id">, key: SigningKey): R => {
  const body = { ...unsigned, key_id: key.keyId } as unknown as Omit<R, "signature">
  return { ...body, signature: toBase64(key.sign(riskSignedBytes(body as Omit<Signed, "signature">))) } as R
}

/** The signature under `publicKey`, which must be the key the record names. */
export const verifyRiskSignature = (record: Signed, publicKey: Uint8Array): boolean => {
  if (keyIdOf(publicKey) !== record.key_id) return false
  const signature = fromBase64(record.signature)
  return signature !== undefined && verifySignature(publicKey, riskSignedBytes(record), signature)
}

const sameResult = (a: unknown, b: unknown): boolean => canonicalJson(a) === canonicalJson(b)

/** The result the record's inputs give under core/Risk.ts, for an individual or a team record. */
export const recomputeRiskResult = (record: Signed): RiskResult | TeamRiskAssessment["result"] =>
  "agent_ids" in record
    ? assessTeamRisk(
        record.context,
        record.members.map((m) => ({
          agent_id: m.agent_id,
          reputation_score: m.inputs.reputation.score,
          result: assessRisk(record.context, m.inputs)
        }))
      )
    : assessRisk(record.context, record.inputs)

/** True when the recorded result (and, for a team, every member's) is what the inputs give. */
export const resultMatches = (record: Signed): boolean =>
  sameResult(recomputeRiskResult(record), record.result) &&
  (!("agent_ids" in record) || record.members.every((m) => sameResult(assessRisk(record.context, m.inputs), m.result)))
