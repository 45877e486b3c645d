/**
 * The public verification endpoints (interface.md, "Public verification endpoints"; formats in
 * docs/formats.md, shapes in docs/api.md): no credentials, JSON, errors `{error}`. Everything they
 * answer can be checked with core/'s verifiers and no trust in Candor: keys, certificates, signed
 * tree heads, inclusion and consistency proofs, verdict proofs, and an agent's whole chain.
 *
 * One route is not public: `POST /checkpoints/{id}/prove`, an owner asking for a verdict proof of a
 * checkpoint the sampling did not pick; it carries the Authentication middleware on its own.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { BadRequest, InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import { IntegrityCertificate, SignedNote, VerifyResponse } from "../../../core/schema/Certificate.js"
import { AgentId, Base64String, DateTimeString, Hex32, Identifier, JsonObject } from "../../../core/schema/Ids.js"
import { Verdict } from "../../../core/schema/Verdict.js"
import { IntParam } from "./Checkpoints.js"

const Size = Schema.NonNegativeInt
const HexHashes = Schema.Array(Hex32)

export const PublicSigningKey = Schema.Struct({
  key_id: Identifier.annotations({ description: "Hex of the first 16 bytes of SHA-256(public key)" }),
  algorithm: Schema.Literal("Ed25519"),
  public_key: Base64String.annotations({ description: "The raw 32-byte Ed25519 public key, base64" }),
  status: Schema.Literal("active", "retired").annotations({ description: "`retired` once a newer key was registered; it still verifies" }),
  created_at: DateTimeString,
  retired_at: Schema.NullOr(DateTimeString),
  expires_at: Schema.Null.annotations({ description: "Keys do not expire" })
}).annotations({ identifier: "PublicSigningKey" })

export const PublicKeys = Schema.Struct({
  keys: Schema.Array(PublicSigningKey).annotations({ description: "Every key that ever signed, oldest first" })
}).annotations({ identifier: "PublicKeys" })

export const MerkleRootResponse = Schema.Struct({
  agent_id: AgentId,
  tree_size: Size,
  root: Hex32,
  signed_tree_head: SignedNote,
  checkpoint: SignedNote.annotations({ description: "The same signed tree head (the name DESIGN.md's format uses)" }),
  log_origin: Schema.String.annotations({ description: "`<CANDOR_LOG_ORIGIN>/agents/<agent_id>`: the note's origin and key name" }),
  note_verifier_key: Schema.NullOr(Schema.String).annotations({
    description: "`<origin>+<key hash>+<base64 key>`: the verifier key of the signing key for this log"
  }),
  timestamp: DateTimeString.annotations({ description: "When this tree head was stored" })
}).annotations({ identifier: "MerkleRootResponse" })

export const InclusionProofResponse = Schema.Struct({
  checkpoint_id: Schema.String,
  agent_id: AgentId,
  leaf_index: Size,
  leaf_hash: Hex32,
  tree_size: Size,
  root: Hex32,
  audit_path: HexHashes.annotations({ description: "RFC 9162 inclusion proof, bottom-up" }),
  proof: HexHashes.annotations({ description: "The same path (the name DESIGN.md's format uses)" }),
  signed_tree_head: Schema.NullOr(SignedNote),
  checkpoint: Schema.NullOr(SignedNote).annotations({ description: "The same signed tree head" })
}).annotations({ identifier: "InclusionProofResponse" })

const TreeHeadAt = Schema.Struct({ tree_size: Size, root: Hex32, signed_tree_head: SignedNote })

export const ConsistencyProofResponse = Schema.Struct({
  agent_id: AgentId,
  from: TreeHeadAt,
  to: TreeHeadAt,
  proof: HexHashes.annotations({ description: "RFC 9162 consistency proof from `from.tree_size` to `to.tree_size`" })
}).annotations({ identifier: "ConsistencyProofResponse" })

export const PROOF_STATUSES = ["pending", "proving", "completed", "failed", "not_sampled"] as const

export const ProofStatusResponse = Schema.Struct({
  checkpoint_id: Schema.String,
  agent_id: AgentId,
  status: Schema.Literal(...PROOF_STATUSES),
  sampled: Schema.Boolean.annotations({ description: "Whether the sampling rule (core/ProofSampling.ts) requires a proof" }),
  verdict_proof: Schema.NullOr(JsonObject).annotations({ description: "The proof object the certificate carries, once completed" }),
  attempts: Size,
  error: Schema.NullOr(Schema.String).annotations({ description: "Why the last attempt failed" }),
  updated_at: Schema.NullOr(DateTimeString),
  public_inputs: Schema.Struct({
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
  }).annotations({
    identifier: "VerdictProofPublicInputs",
    description: "What the proof proves, rebuilt from the certificate: its JCS is the statement `statement_hash` names"
  }),
  security: Schema.Struct({ conjectured_bits: Schema.Int, proven_bits: Schema.Int }).annotations({
    description: "Security of the pinned parameter set at this statement's trace length, in bits"
  })
}).annotations({ identifier: "ProofStatusResponse" })

export const ChainReportItem = Schema.Struct({
  checkpoint_id: Schema.String,
  position: Size,
  verdict: Verdict,
  certificate_hash: Hex32.annotations({ description: "SHA-256 of the JCS of the certificate without `verdict_proof`" }),
  chain_hash: Hex32
})

export const ReputationVerification = Schema.Struct({
  agent_id: AgentId,
  valid: Schema.Boolean,
  certificates: Schema.Struct({
    total: Size,
    offset: Size,
    limit: Size,
    items: Schema.Array(ChainReportItem)
  }),
  signatures: Schema.Struct({ valid: Schema.Boolean, checked: Size, failed: Schema.Array(Schema.String) }),
  chain: Schema.Struct({
    valid: Schema.Boolean,
    length: Size,
    head: Schema.NullOr(Hex32),
    errors: Schema.Array(Schema.String)
  }),
  merkle: Schema.Struct({
    valid: Schema.Boolean,
    tree_size: Size,
    root: Schema.NullOr(Hex32).annotations({ description: "The root of the newest signed tree head" }),
    computed_root: Hex32.annotations({ description: "The root rebuilt from the certificates' chain hashes" }),
    signed_tree_head: Schema.NullOr(SignedNote),
    signed_tree_head_valid: Schema.Boolean
  })
}).annotations({ identifier: "ReputationVerification" })

const CheckpointPath = Schema.Struct({ checkpoint_id: Schema.String })
const AgentPath = Schema.Struct({ agent_id: Schema.String })
const Positive = IntParam(1, Number.MAX_SAFE_INTEGER)

export class VerificationApi extends HttpApiGroup.make("verification")
  .add(HttpApiEndpoint.get("listSigningKeys", "/keys").addSuccess(PublicKeys))
  .add(HttpApiEndpoint.get("getCertificate", "/checkpoints/:checkpoint_id/certificate").setPath(CheckpointPath).addSuccess(IntegrityCertificate))
  .add(
    HttpApiEndpoint.post("verifyCertificate", "/verify")
      .setPayload(Schema.Unknown.annotations({
        description: "A certificate, or `{certificate, signed_tree_head?}` to also check it against a signed tree head"
      }))
      .addSuccess(VerifyResponse)
  )
  .add(HttpApiEndpoint.get("getMerkleRoot", "/agents/:agent_id/merkle-root").setPath(AgentPath).addSuccess(MerkleRootResponse))
  .add(
    HttpApiEndpoint.get("getInclusionProof", "/checkpoints/:checkpoint_id/inclusion-proof")
      .setPath(CheckpointPath)
      .setUrlParams(Schema.Struct({ tree_size: Schema.optionalWith(Positive, { exact: true }) }))
      .addSuccess(InclusionProofResponse)
  )
  .add(
    HttpApiEndpoint.get("getConsistencyProof", "/agents/:agent_id/consistency-proof")
      .setPath(AgentPath)
      .setUrlParams(Schema.Struct({ from: Positive, to: Schema.optionalWith(Positive, { exact: true }) }))
      .addSuccess(ConsistencyProofResponse)
  )
  .add(HttpApiEndpoint.get("getVerdictProof", "/checkpoints/:checkpoint_id/proof").setPath(CheckpointPath).addSuccess(ProofStatusResponse))
  .add(
    HttpApiEndpoint.get("verifyAgentChain", "/reputation/:agent_id/verify")
      .setPath(AgentPath)
      .setUrlParams(Schema.Struct({
        limit: Schema.optionalWith(IntParam(1, 1000), { default: () => 100, exact: true }),
        offset: Schema.optionalWith(IntParam(0, Number.MAX_SAFE_INTEGER), { default: () => 0, exact: true })
      }))
      .addSuccess(ReputationVerification)
  )
  .add(
    HttpApiEndpoint.post("requestVerdictProof", "/checkpoints/:checkpoint_id/prove")
      .setPath(CheckpointPath)
      .addSuccess(ProofStatusResponse, { status: 202 })
      .middleware(Authentication)
  )
  .addError(BadRequest)
  .addError(NotFound)
  .addError(InternalError) {}
