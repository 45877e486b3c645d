/**
 * Public verification documents: the Integrity Certificate, Merkle inclusion proofs and roots,
 * signing keys, verification results and verdict proofs. Third parties verify these without our
 * code, so field names and formats are fixed: hashes are 64 lowercase hex characters, keys and
 * signatures padded base64, `checkpoint` a C2SP signed note.
 */
import { Schema } from "effect"
import { literalUnion } from "./Literals.js"
import { ConcernCategory, Severity } from "./Concern.js"
import {
  AgentId,
  Base64String,
  CardId,
  CheckpointId,
  DateTimeString,
  Ed25519PublicKeyBase64,
  Ed25519SignatureBase64,
  Hex32,
  Identifier,
  JsonObject,
  SessionId,
  ThinkingBlockHash
} from "./Ids.js"
import { RULES_VERSION } from "../Verdict.js"
import { Verdict } from "./Verdict.js"

export const CERTIFICATE_TYPE = "IntegrityCertificate"
export const CERTIFICATE_VERSION = "candor-certificate/1"

const LeafIndex = Schema.NonNegativeInt
const TreeSize = Schema.NonNegativeInt

/** A leaf must lie inside the tree it is proved against. */
const leafInsideTree = (m: { readonly leaf_index: number; readonly tree_size: number }) =>
  m.leaf_index < m.tree_size || { path: ["leaf_index"], message: "leaf_index must be less than tree_size" }

/** Signed-note text (C2SP tlog-checkpoint): origin, size, base64 root, blank line, signature lines. */
export const SignedNote = Schema.String.pipe(Schema.minLength(1)).annotations({
  identifier: "SignedNote",
  description: "C2SP tlog-checkpoint signed note for the tree head"
})

export const CertificateConcern = Schema.Struct({
  category: ConcernCategory,
  severity: Severity,
  description: Schema.String,
  relevant_conscience_value: Schema.NullOr(Schema.String)
}).annotations({ identifier: "CertificateConcern", description: "A concern as certified: no evidence excerpt" })

export const CertificateMerkle = Schema.Struct({
  leaf_index: LeafIndex,
  leaf_hash: Hex32,
  tree_size: TreeSize,
  root: Hex32,
  inclusion_proof: Schema.Array(Hex32)
}).pipe(Schema.filter(leafInsideTree)).annotations({ identifier: "CertificateMerkle" })

export const IntegrityCertificate = Schema.Struct({
  type: Schema.Literal(CERTIFICATE_TYPE),
  version: Schema.Literal(CERTIFICATE_VERSION),
  certificate_id: Identifier,
  issued_at: DateTimeString,
  key_id: Identifier,
  subject: Schema.Struct({
    checkpoint_id: CheckpointId,
    agent_id: AgentId,
    session_id: SessionId,
    card_id: CardId,
    timestamp: DateTimeString
  }),
  claims: Schema.Struct({
    verdict: Verdict,
    concerns: Schema.Array(CertificateConcern),
    concerns_hash: Hex32,
    rules_version: Schema.Literal(RULES_VERSION),
    boundary_values: Schema.Array(Schema.String),
    reasoning_summary: Schema.String,
    analysis_model: Schema.String,
    extraction_confidence: Schema.NullOr(Schema.Number.pipe(Schema.between(0, 1)))
  }),
  input_commitments: Schema.Struct({
    thinking_block_hash: ThinkingBlockHash,
    card_hash: Hex32,
    values_hash: Hex32,
    analysis_hash: Hex32,
    model: Schema.String
  }),
  chain: Schema.Struct({
    position: Schema.NonNegativeInt,
    prev_hash: Hex32,
    hash: Hex32
  }),
  merkle: CertificateMerkle,
  /** Attached after signing (proofs arrive later), hence outside the signature; its shape is the prover's. */
  verdict_proof: Schema.NullOr(JsonObject),
  signature: Ed25519SignatureBase64
}).annotations({
  identifier: "IntegrityCertificate",
  description: "Signed statement of one verdict, its inputs, and its place in the hash chain and Merkle log"
})
export type IntegrityCertificate = typeof IntegrityCertificate.Type

/** What the Ed25519 signature covers (as RFC 8785 JSON): everything but `signature` and `verdict_proof`. */
export type SignedCertificateBody = Omit<IntegrityCertificate, "signature" | "verdict_proof">

export const InclusionProof = Schema.Struct({
  checkpoint_id: CheckpointId,
  agent_id: AgentId,
  leaf_index: LeafIndex,
  tree_size: TreeSize,
  leaf_hash: Hex32,
  root: Hex32,
  proof: Schema.Array(Hex32),
  checkpoint: SignedNote
}).pipe(Schema.filter(leafInsideTree)).annotations({ identifier: "InclusionProof", description: "RFC 6962 inclusion proof of a checkpoint in its agent's log" })
export type InclusionProof = typeof InclusionProof.Type

export const MerkleRoot = Schema.Struct({
  agent_id: AgentId,
  tree_size: TreeSize,
  root: Hex32,
  checkpoint: SignedNote,
  timestamp: DateTimeString
}).annotations({ identifier: "MerkleRoot", description: "Signed head of an agent's Merkle log" })
export type MerkleRoot = typeof MerkleRoot.Type

export const SIGNING_KEY_STATUSES = ["active", "retired"] as const
export const SigningKeyStatus = literalUnion(SIGNING_KEY_STATUSES, { identifier: "SigningKeyStatus" })

export const SigningKeyInfo = Schema.Struct({
  key_id: Identifier,
  algorithm: Schema.Literal("Ed25519"),
  public_key: Ed25519PublicKeyBase64,
  status: SigningKeyStatus,
  created_at: DateTimeString,
  expires_at: Schema.NullOr(DateTimeString)
}).annotations({ identifier: "SigningKeyInfo", description: "A signing key; retired keys stay listed so old certificates verify" })
export type SigningKeyInfo = typeof SigningKeyInfo.Type

export const KeysResponse = Schema.Struct({ keys: Schema.Array(SigningKeyInfo) }).annotations({ identifier: "KeysResponse" })
export type KeysResponse = typeof KeysResponse.Type

export const VerifyResponse = Schema.Struct({
  valid: Schema.Boolean,
  checks: Schema.Struct({
    signature: Schema.Boolean,
    chain: Schema.Boolean,
    merkle: Schema.Boolean,
    verdict: Schema.Boolean.annotations({ description: "The verdict follows from the certified concerns by the rules" }),
    verdict_proof: Schema.NullOr(Schema.Boolean).annotations({ description: "null: no proof attached yet" })
  }),
  errors: Schema.Array(Schema.String)
}).annotations({ identifier: "VerifyResponse" })
export type VerifyResponse = typeof VerifyResponse.Type

export const VERDICT_PROOF_STATUSES = ["pending", "proving", "completed", "failed"] as const
export const VerdictProofStatus = literalUnion(VERDICT_PROOF_STATUSES, { identifier: "VerdictProofStatus" })
export type VerdictProofStatus = typeof VerdictProofStatus.Type

export const VerdictProof = Schema.Struct({
  checkpoint_id: CheckpointId,
  status: VerdictProofStatus,
  proof: Schema.NullOr(Base64String).annotations({ description: "The STARK proof, base64; null until completed" }),
  public_inputs: Schema.NullOr(JsonObject),
  security_bits: Schema.NullOr(Schema.NonNegative),
  error: Schema.NullOr(Schema.String)
}).annotations({ identifier: "VerdictProof", description: "STARK proof that the verdict follows from the concerns" })
export type VerdictProof = typeof VerdictProof.Type
