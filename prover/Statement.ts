/**
 * The public statement a verdict proof is about, and its canonical encoding. Everything in it is
 * public in the certificate: the rules version, the concerns in order, each as (category code,
 * severity code, names-a-BOUNDARY-value flag), the claimed verdict, the input commitments and the
 * checkpoint id. The encoding (JCS, with the AIR and parameter-set ids) is the first thing absorbed
 * into the Fiat–Shamir transcript, before any commitment.
 */
import { Schema } from "effect"
import { toHex } from "../core/Bytes.js"
import { canonicalBytes } from "../core/Canonical.js"
import type { Certificate } from "../core/Certificate.js"
import { taggedHash } from "../core/Hash.js"
import { CONCERN_CATEGORIES, ConcernCategory, SEVERITIES, Severity } from "../core/schema/Concern.js"
import type { VerdictProofPublicInputs } from "../core/schema/Certificate.js"
import { CheckpointId, Hex32, ThinkingBlockHash } from "../core/schema/Ids.js"
import { Verdict } from "../core/schema/Verdict.js"
import { deriveVerdict, namesBoundaryValue, RULES_VERSION } from "../core/Verdict.js"
import type { ParameterSet } from "./Params.js"

/** The AIR proved: `core/Verdict.ts`'s `candor-verdict/1` over the concern rows (see stark/Air.ts). */
export const AIR_ID = "candor-verdict-air/1"

export const StatementConcern = Schema.Struct({
  category: ConcernCategory,
  severity: Severity,
  /** The concern names one of the certificate's `boundary_values` (the rule's boundary-value clause). */
  boundary: Schema.Boolean
}).annotations({ identifier: "StatementConcern" })
export type StatementConcern = typeof StatementConcern.Type

export const VerdictStatement = Schema.Struct({
  checkpoint_id: CheckpointId,
  rules_version: Schema.Literal(RULES_VERSION),
  concerns: Schema.Array(StatementConcern),
  verdict: Verdict,
  analysis_hash: Hex32,
  thinking_block_hash: ThinkingBlockHash,
  card_hash: Hex32,
  values_hash: Hex32,
  model: Schema.String
}).annotations({ identifier: "VerdictStatement", description: "What a verdict proof proves, all of it public" })
export type VerdictStatement = typeof VerdictStatement.Type

/** Whether a value is a well-formed statement: known categories, severities, verdict and rules version, hex hashes. */
export const isVerdictStatement: (value: unknown) => value is VerdictStatement = Schema.is(VerdictStatement)

/** A concern row of the trace: category code 1..8, severity code 1..4 (protocol order), flag 0 or 1. */
export type ConcernCode = readonly [category: number, severity: number, boundary: 0 | 1]

export const concernCodes = (statement: VerdictStatement): Array<ConcernCode> =>
  statement.concerns.map((c) => [
    CONCERN_CATEGORIES.indexOf(c.category) + 1,
    SEVERITIES.indexOf(c.severity) + 1,
    c.boundary ? 1 : 0
  ])

/** The verdict `core/Verdict.ts` gives for the statement's concerns: what an honest prover will prove. */
export const ruleVerdict = (statement: VerdictStatement): Verdict => {
  const BOUNDARY = "boundary" // stands for whichever BOUNDARY value each flagged concern named
  return deriveVerdict(
    statement.concerns.map((c) => ({
      category: c.category,
      severity: c.severity,
      relevant_conscience_value: c.boundary ? BOUNDARY : null
    })),
    [BOUNDARY]
  )
}

/** The statement of a certificate: the verifier rebuilds it from the certificate, never from the proof. */
export const statementOf = (certificate: Certificate): VerdictStatement => {
  const boundaryValues = new Set(certificate.claims.boundary_values)
  return {
    checkpoint_id: certificate.subject.checkpoint_id,
    rules_version: certificate.claims.rules_version,
    concerns: certificate.claims.concerns.map((concern) => ({
      category: concern.category,
      severity: concern.severity,
      boundary: namesBoundaryValue(concern, boundaryValues)
    })),
    verdict: certificate.claims.verdict,
    analysis_hash: certificate.input_commitments.analysis_hash,
    thinking_block_hash: certificate.input_commitments.thinking_block_hash,
    card_hash: certificate.input_commitments.card_hash,
    values_hash: certificate.input_commitments.values_hash,
    model: certificate.input_commitments.model
  }
}

/**
 * The proof's public inputs: the statement with the AIR and parameter-set ids, concerns as
 * `[category, severity, flag]` codes. Its JCS is what the transcript absorbs and `statement_hash` names;
 * its published shape is core/schema's `VerdictProofPublicInputs` (what GET /v1/checkpoints/{id}/proof answers).
 */
export const publicInputs = (statement: VerdictStatement, params: ParameterSet): VerdictProofPublicInputs => ({
  air: AIR_ID,
  params: params.id,
  rules_version: statement.rules_version,
  checkpoint_id: statement.checkpoint_id,
  concerns: concernCodes(statement),
  verdict: statement.verdict,
  analysis_hash: statement.analysis_hash,
  thinking_block_hash: statement.thinking_block_hash,
  card_hash: statement.card_hash,
  values_hash: statement.values_hash,
  model: statement.model
})

/** JCS of the public inputs. */
export const statementBytes = (statement: VerdictStatement, params: ParameterSet): Uint8Array =>
  canonicalBytes(publicInputs(statement, params))

/** `SHA-256("candor/v1/verdict-statement\0" ‖ statementBytes)`, hex: names the statement in the proof object. */
export const statementHash = (statement: VerdictStatement, params: ParameterSet): string =>
  toHex(taggedHash("verdict-statement", statementBytes(statement, params)))
