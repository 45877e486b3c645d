/**
 * The `verdict_proof` object a certificate carries (outside its signature: the proof arrives
 * later), and the synchronous check `verifyCertificate` takes as its `verifyVerdictProof` callback.
 *
 *   { "type": "candor-verdict-stark", "version": 1, "air": "candor-verdict-air/1",
 *     "params": "gl3-b8-q73-g8", "statement_hash": "<hex>",
 *     "security": { "conjectured_bits": 128, "proven_bits": 114 }, "proof": "<base64>" }
 *
 * Every member is checked: the AIR and parameter set are pinned, `statement_hash` and `security`
 * must be what the verifier computes from the certificate's own statement, and the STARK must verify
 * against that statement. Nothing is taken from the proof object on trust.
 */
import { Either, Schema } from "effect"
import { fromBase64, toBase64 } from "../core/Bytes.js"
import type { Certificate } from "../core/Certificate.js"
import { Base64String, Hex32 } from "../core/schema/Ids.js"
import { PARAMS, securityOf, traceLengthFor } from "./Params.js"
import { verifyStatement } from "./stark/Verify.js"
import { AIR_ID, statementHash, statementOf, type VerdictStatement } from "./Statement.js"

export const VERDICT_PROOF_TYPE = "candor-verdict-stark"
export const VERDICT_PROOF_VERSION = 1

export const VerdictProofObject = Schema.Struct({
  type: Schema.Literal(VERDICT_PROOF_TYPE),
  version: Schema.Literal(VERDICT_PROOF_VERSION),
  air: Schema.Literal(AIR_ID),
  params: Schema.Literal(PARAMS.id),
  statement_hash: Hex32,
  security: Schema.Struct({ conjectured_bits: Schema.Int, proven_bits: Schema.Int }),
  proof: Base64String
}).annotations({
  identifier: "VerdictProofObject",
  description: "STARK proof of a certificate's verdict (candor-verdict-stark/1)"
})
export type VerdictProofObject = typeof VerdictProofObject.Type

const decodeProofObject = Schema.decodeUnknownEither(VerdictProofObject, { onExcessProperty: "error" })

/** Security of the pinned parameter set at this statement's trace length. */
export const securityFor = (statement: VerdictStatement): VerdictProofObject["security"] => {
  const level = securityOf(PARAMS, traceLengthFor(statement.concerns.length))
  return { conjectured_bits: level.conjectured, proven_bits: level.proven }
}

/** Wraps a binary proof of `statement` into the object a certificate carries. */
export const verdictProofObject = (statement: VerdictStatement, proof: Uint8Array): VerdictProofObject => ({
  type: VERDICT_PROOF_TYPE,
  version: VERDICT_PROOF_VERSION,
  air: AIR_ID,
  params: PARAMS.id,
  statement_hash: statementHash(statement, PARAMS),
  security: securityFor(statement),
  proof: toBase64(proof)
})

/** Whether `proof` (any JSON value) is a valid verdict proof of `statement`; never throws. */
export const verifyVerdictProofObject = (statement: VerdictStatement, proof: unknown): boolean => {
  const decoded = decodeProofObject(proof)
  if (Either.isLeft(decoded)) return false
  const object = decoded.right
  if (object.statement_hash !== statementHash(statement, PARAMS)) return false
  const security = securityFor(statement)
  if (
    object.security.conjectured_bits !== security.conjectured_bits ||
    object.security.proven_bits !== security.proven_bits
  )
    return false
  const bytes = fromBase64(object.proof)
  return bytes !== undefined && verifyStatement(statement, bytes).ok
}

/** For `verifyCertificate(..., { verifyVerdictProof })`: the certificate's proof against its own statement. */
export const verifyVerdictProof = (certificate: Certificate): boolean => {
  try {
    return verifyVerdictProofObject(statementOf(certificate), certificate.verdict_proof)
  } catch {
    return false
  }
}
