/**
 * Public verification documents: the Integrity Certificate, Merkle inclusion proofs and roots,
 * signing keys, verification results and verdict proofs. Third parties verify these without our
 * code, so field names and formats are fixed: hashes are 64 lowercase hex characters, keys and
 * signatures padded base64, `checkpoint` a C2SP signed note.
 */
import { Schema } from "effect"
import { Disclaimer } from "./Disclaimer.js"
import { literalUnion } from "./Literals.js"
import { ConcernCategory, Severity } from "./Concern.js"
import {
  AgentId,
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
})
  .pipe(Schema.filter(leafInsideTree))
  .annotations({ identifier: "CertificateMerkle" })

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
    extraction_confidence: Schema.NullOr(Schema.Number.pipe(Schema.between(0, 1))),
    /**
     * Added (issue 28), present only on a tool result's checkpoint: the verdict is on text a tool
     * returned to the agent, and counts toward neither reputation, drift nor auto-containment
     * (core/ToolResultScope.ts). Absent on every other certificate, so their signed bytes are unchanged.
     */
    analysis_scope: Schema.optionalWith(Schema.Literal("tool_result"), { exact: true })
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

const HexHashes = Schema.Array(Hex32)

export const InclusionProof = Schema.Struct({
  checkpoint_id: CheckpointId,
  agent_id: AgentId,
  leaf_index: LeafIndex,
  leaf_hash: Hex32,
  tree_size: TreeSize,
  root: Hex32,
  audit_path: HexHashes.annotations({ description: "RFC 9162 inclusion proof, bottom-up" }),
  proof: HexHashes.annotations({ description: "The same path, under its older name" }),
  signed_tree_head: SignedNote.annotations({ description: "The signed tree head of exactly `tree_size` leaves" }),
  checkpoint: SignedNote.annotations({ description: "The same signed tree head, under its older name" })
})
  .pipe(Schema.filter(leafInsideTree))
  .annotations({
    identifier: "InclusionProof",
    description: "RFC 6962 inclusion proof of a checkpoint in its agent's log"
  })
export type InclusionProof = typeof InclusionProof.Type

export const MerkleRoot = Schema.Struct({
  agent_id: AgentId,
  tree_size: TreeSize,
  root: Hex32,
  signed_tree_head: SignedNote,
  checkpoint: SignedNote.annotations({ description: "The same signed tree head, under its older name" }),
  log_origin: Schema.String.annotations({
    description: "`<CANDOR_LOG_ORIGIN>/agents/<agent_id>`: the note's origin and key name"
  }),
  note_verifier_key: Schema.NullOr(Schema.String).annotations({
    description: "`<origin>+<key hash>+<base64 key>`: the verifier key of the signing key for this log"
  }),
  timestamp: DateTimeString.annotations({ description: "When this tree head was stored" })
}).annotations({ identifier: "MerkleRoot", description: "Signed head of an agent's Merkle log" })
export type MerkleRoot = typeof MerkleRoot.Type

/** A tree head of a given size, as a consistency proof names its two ends. */
export const SizedTreeHead = Schema.Struct({
  tree_size: TreeSize,
  root: Hex32,
  signed_tree_head: SignedNote
}).annotations({ identifier: "SizedTreeHead" })
export type SizedTreeHead = typeof SizedTreeHead.Type

export const ConsistencyProof = Schema.Struct({
  agent_id: AgentId,
  from: SizedTreeHead,
  to: SizedTreeHead,
  proof: HexHashes.annotations({ description: "RFC 9162 consistency proof from `from.tree_size` to `to.tree_size`" })
}).annotations({
  identifier: "ConsistencyProof",
  description: "Proof that an agent's log only grew between two tree heads"
})
export type ConsistencyProof = typeof ConsistencyProof.Type

export const SIGNING_KEY_STATUSES = ["active", "retired"] as const
export const SigningKeyStatus = literalUnion(SIGNING_KEY_STATUSES, { identifier: "SigningKeyStatus" })

export const SigningKeyInfo = Schema.Struct({
  key_id: Identifier.annotations({ description: "Hex of the first 16 bytes of SHA-256(public key)" }),
  algorithm: Schema.Literal("Ed25519"),
  public_key: Ed25519PublicKeyBase64.annotations({ description: "The raw 32-byte Ed25519 public key, base64" }),
  status: SigningKeyStatus.annotations({ description: "`retired` once a newer key was registered; it still verifies" }),
  created_at: DateTimeString,
  retired_at: Schema.NullOr(DateTimeString),
  expires_at: Schema.Null.annotations({ description: "Keys do not expire" })
}).annotations({
  identifier: "SigningKeyInfo",
  description: "A signing key; retired keys stay listed so old certificates verify"
})
export type SigningKeyInfo = typeof SigningKeyInfo.Type

export const KeysResponse = Schema.Struct({
  keys: Schema.Array(SigningKeyInfo).annotations({ description: "Every key that ever signed, oldest first" })
}).annotations({ identifier: "KeysResponse" })
export type KeysResponse = typeof KeysResponse.Type

export const VerifyResponse = Schema.Struct({
  valid: Schema.Boolean,
  checks: Schema.Struct({
    signature: Schema.Boolean,
    chain: Schema.Boolean,
    merkle: Schema.Boolean,
    verdict: Schema.Boolean.annotations({
      description: "The verdict follows from the certified concerns by the rules"
    }),
    verdict_proof: Schema.NullOr(Schema.Boolean).annotations({ description: "null: no proof attached yet" })
  }),
  errors: Schema.Array(Schema.String),
  disclaimer: Disclaimer
}).annotations({ identifier: "VerifyResponse" })
export type VerifyResponse = typeof VerifyResponse.Type

/** A proof job's states, and `not_sampled`: the sampling rule does not require one and nobody asked. */
export const VERDICT_PROOF_STATUSES = ["pending", "proving", "completed", "failed", "not_sampled"] as const
export const VerdictProofStatus = literalUnion(VERDICT_PROOF_STATUSES, { identifier: "VerdictProofStatus" })
export type VerdictProofStatus = typeof VerdictProofStatus.Type

/** What a verdict proof proves, rebuilt from the certificate: its JCS is the statement `statement_hash` names. */
export const VerdictProofPublicInputs = Schema.Struct({
  air: Schema.String,
  params: Schema.String,
  rules_version: Schema.String,
  checkpoint_id: Schema.String,
  concerns: Schema.Array(Schema.Tuple(Schema.Int, Schema.Int, Schema.Int)).annotations({
    description: "One `[category code, severity code, names-a-BOUNDARY-value flag]` per concern, in certificate order"
  }),
  verdict: Verdict,
  analysis_hash: Hex32,
  thinking_block_hash: Schema.String,
  card_hash: Hex32,
  values_hash: Hex32,
  model: Schema.String
}).annotations({ identifier: "VerdictProofPublicInputs" })
export type VerdictProofPublicInputs = typeof VerdictProofPublicInputs.Type

/** The verdict proof of a checkpoint and where its job stands (`GET /v1/checkpoints/{id}/proof`). */
export const VerdictProof = Schema.Struct({
  checkpoint_id: CheckpointId,
  agent_id: AgentId,
  status: VerdictProofStatus,
  sampled: Schema.Boolean.annotations({
    description: "Whether the sampling rule (core/ProofSampling.ts) requires a proof"
  }),
  verdict_proof: Schema.NullOr(JsonObject).annotations({
    description: "The proof object the certificate carries, once completed"
  }),
  attempts: Schema.NonNegativeInt,
  error: Schema.NullOr(Schema.String).annotations({ description: "Why the last attempt failed" }),
  updated_at: Schema.NullOr(DateTimeString),
  public_inputs: VerdictProofPublicInputs,
  security: Schema.Struct({ conjectured_bits: Schema.Int, proven_bits: Schema.Int }).annotations({
    description: "Security of the pinned parameter set at this statement's trace length, in bits"
  }),
  analysis_json: Schema.optionalWith(Schema.String, { exact: true }).annotations({
    description:
      "The judge's analysis as committed, `JCS(analysisOf(checkpoint))`: `analysis_hash` is SHA-256(\"candor/v1/analysis\\0\" ‖ these bytes). Only for callers who may read the agent's checkpoints (Member and up): it holds evidence excerpts of the thinking. Anonymous callers get the hashes only."
  })
}).annotations({
  identifier: "VerdictProof",
  description: "STARK proof that the verdict follows from the concerns, and its job"
})
export type VerdictProof = typeof VerdictProof.Type

/** `GET /v1/agents/{agent_id}/certificates`: a page of an agent's certificates, in log order. */
export const CertificatePage = Schema.Struct({
  agent_id: AgentId,
  from: Schema.NonNegativeInt.annotations({ description: "The first chain position asked for" }),
  limit: Schema.Int.pipe(Schema.between(1, 1000)),
  tree_size: TreeSize.annotations({
    description: "The size of the newest signed tree head: the page holds positions below it only"
  }),
  certificates: Schema.Array(IntegrityCertificate).annotations({
    description: "Certificates at positions from `from`, ascending; a position removed by retention is skipped"
  }),
  next: Schema.NullOr(Schema.NonNegativeInt).annotations({
    description: "The `from` of the next page; null when this page reaches the tree head"
  })
}).annotations({ identifier: "CertificatePage" })
export type CertificatePage = typeof CertificatePage.Type

export const ChainReportItem = Schema.Struct({
  checkpoint_id: CheckpointId,
  position: Schema.NonNegativeInt,
  verdict: Verdict,
  certificate_hash: Hex32.annotations({ description: "SHA-256 of the JCS of the certificate without `verdict_proof`" }),
  chain_hash: Hex32
}).annotations({ identifier: "ChainReportItem" })
export type ChainReportItem = typeof ChainReportItem.Type

/** `GET /v1/reputation/{agent_id}/verify`: an agent's whole record recomputed from its certificates. */
export const ReputationVerification = Schema.Struct({
  agent_id: AgentId,
  valid: Schema.Boolean,
  certificates: Schema.Struct({
    total: Schema.NonNegativeInt,
    offset: Schema.NonNegativeInt,
    limit: Schema.NonNegativeInt,
    items: Schema.Array(ChainReportItem)
  }),
  signatures: Schema.Struct({
    valid: Schema.Boolean,
    checked: Schema.NonNegativeInt,
    failed: Schema.Array(Schema.String)
  }),
  chain: Schema.Struct({
    valid: Schema.Boolean,
    length: Schema.NonNegativeInt,
    head: Schema.NullOr(Hex32),
    errors: Schema.Array(Schema.String)
  }),
  merkle: Schema.Struct({
    valid: Schema.Boolean,
    tree_size: TreeSize,
    root: Schema.NullOr(Hex32).annotations({ description: "The root of the newest signed tree head" }),
    computed_root: Hex32.annotations({ description: "The root rebuilt from the certificates' chain hashes" }),
    signed_tree_head: Schema.NullOr(SignedNote),
    signed_tree_head_valid: Schema.Boolean
  }),
  disclaimer: Disclaimer
}).annotations({ identifier: "ReputationVerification" })
export type ReputationVerification = typeof ReputationVerification.Type
