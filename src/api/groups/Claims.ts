/**
 * Claiming an agent: the caller proves possession of the agent's provider key by sending it once;
 * it is hashed exactly as the gateway hashes it (SHA-256, then the agent id with the optional
 * `x-candor-agent` name) and dropped. Path and shape are ours (docs/api.md).
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { BadRequest, Forbidden, InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import { ClaimAgent, ClaimedAgent } from "../../../core/schema/Claim.js"

export class ClaimsApi extends HttpApiGroup.make("claims")
  .add(HttpApiEndpoint.post("claimAgent", "/agents/claim").setPayload(ClaimAgent).addSuccess(ClaimedAgent))
  .addError(BadRequest)
  .addError(Forbidden)
  .addError(NotFound)
  .addError(InternalError)
  .middleware(Authentication) {}
