/**
 * The public verification endpoints (formats in docs/formats.md, shapes in docs/api.md; the response
 * schemas are core/schema's, the one definition of each format): no credentials, JSON, errors
 * `{error}`. Everything they answer can be checked with core/'s verifiers and no trust in Candor: keys, certificates, signed
 * tree heads (with the witness cosignatures collected for them: docs/witnesses.md), inclusion and
 * consistency proofs, verdict proofs, and an agent's whole chain (checked
 * here, or paged out as certificates for `candor reputation verify`).
 *
 * One route is not public: `POST /checkpoints/{id}/prove`, an owner asking for a verdict proof of a
 * checkpoint the sampling did not pick; it carries the Authentication middleware on its own.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { BadRequest, InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import {
  CertificatePage,
  ConsistencyProof,
  InclusionProof,
  IntegrityCertificate,
  KeysResponse,
  MerkleRoot,
  ReputationVerification,
  VerdictProof,
  VerifyResponse
} from "../../../core/schema/Certificate.js"
import { CosignatureList } from "../../../core/schema/Witness.js"
import { IntParam } from "./Checkpoints.js"

const CheckpointPath = Schema.Struct({ checkpoint_id: Schema.String })
const AgentPath = Schema.Struct({ agent_id: Schema.String })
const Positive = IntParam(1, Number.MAX_SAFE_INTEGER)

export class VerificationApi extends HttpApiGroup.make("verification")
  .add(HttpApiEndpoint.get("listSigningKeys", "/keys").addSuccess(KeysResponse))
  .add(
    HttpApiEndpoint.get("getCertificate", "/checkpoints/:checkpoint_id/certificate")
      .setPath(CheckpointPath)
      .addSuccess(IntegrityCertificate)
  )
  .add(
    HttpApiEndpoint.post("verifyCertificate", "/verify")
      .setPayload(
        Schema.Unknown.annotations({
          description:
            "A certificate, or `{certificate, signed_tree_head?}` to also check it against a signed tree head"
        })
      )
      .addSuccess(VerifyResponse)
  )
  .add(HttpApiEndpoint.get("getMerkleRoot", "/agents/:agent_id/merkle-root").setPath(AgentPath).addSuccess(MerkleRoot))
  .add(
    HttpApiEndpoint.get("getCosignatures", "/agents/:agent_id/cosignatures")
      .setPath(AgentPath)
      .setUrlParams(Schema.Struct({ tree_size: Schema.optionalWith(Positive, { exact: true }) }))
      .addSuccess(CosignatureList)
  )
  .add(
    HttpApiEndpoint.get("listAgentCertificates", "/agents/:agent_id/certificates")
      .setPath(AgentPath)
      .setUrlParams(
        Schema.Struct({
          from: Schema.optionalWith(IntParam(0, Number.MAX_SAFE_INTEGER), { default: () => 0, exact: true }),
          limit: Schema.optionalWith(IntParam(1, 1000), { default: () => 100, exact: true })
        })
      )
      .addSuccess(CertificatePage)
  )
  .add(
    HttpApiEndpoint.get("getInclusionProof", "/checkpoints/:checkpoint_id/inclusion-proof")
      .setPath(CheckpointPath)
      .setUrlParams(Schema.Struct({ tree_size: Schema.optionalWith(Positive, { exact: true }) }))
      .addSuccess(InclusionProof)
  )
  .add(
    HttpApiEndpoint.get("getConsistencyProof", "/agents/:agent_id/consistency-proof")
      .setPath(AgentPath)
      .setUrlParams(Schema.Struct({ from: Positive, to: Schema.optionalWith(Positive, { exact: true }) }))
      .addSuccess(ConsistencyProof)
  )
  .add(
    HttpApiEndpoint.get("getVerdictProof", "/checkpoints/:checkpoint_id/proof")
      .setPath(CheckpointPath)
      .addSuccess(VerdictProof)
  )
  .add(
    HttpApiEndpoint.get("verifyAgentChain", "/reputation/:agent_id/verify")
      .setPath(AgentPath)
      .setUrlParams(
        Schema.Struct({
          limit: Schema.optionalWith(IntParam(1, 1000), { default: () => 100, exact: true }),
          offset: Schema.optionalWith(IntParam(0, Number.MAX_SAFE_INTEGER), { default: () => 0, exact: true })
        })
      )
      .addSuccess(ReputationVerification)
  )
  .add(
    HttpApiEndpoint.post("requestVerdictProof", "/checkpoints/:checkpoint_id/prove")
      .setPath(CheckpointPath)
      .addSuccess(VerdictProof, { status: 202 })
      .middleware(Authentication)
  )
  .addError(BadRequest)
  .addError(NotFound)
  .addError(InternalError) {}
