/**
 * Claiming an agent: the caller proves possession of the agent's provider key by sending it once;
 * it is hashed exactly as the gateway hashes it (SHA-256, then the agent id with the optional
 * `x-candor-agent` name) and dropped. Path and shape are ours (docs/api.md).
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { BadRequest, Forbidden, InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import { AgentId, AgentName, DateTimeString, Hex32, Identifier } from "../../../core/schema/Ids.js"

export const ClaimAgent = Schema.Struct({
  provider_key: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(4096)).annotations({
    description: "The provider API key the agent calls the gateway with; hashed at once, never stored"
  }),
  agent_name: Schema.optionalWith(AgentName, { exact: true }).annotations({
    description: "The x-candor-agent header the agent sends, if any (1 to 128 printable ASCII characters)"
  }),
  org_id: Schema.optionalWith(Identifier, { exact: true }).annotations({
    description: "Claim into this organization (needs Admin there); absent: a personal agent"
  })
}).annotations({ identifier: "ClaimAgent" })

export const ClaimedAgent = Schema.Struct({
  agent_id: AgentId,
  agent_hash: Hex32,
  user_id: Identifier,
  org_id: Schema.NullOr(Identifier),
  claimed_at: DateTimeString
}).annotations({ identifier: "ClaimedAgent" })

export class ClaimsApi extends HttpApiGroup.make("claims")
  .add(HttpApiEndpoint.post("claimAgent", "/agents/claim").setPayload(ClaimAgent).addSuccess(ClaimedAgent))
  .addError(BadRequest)
  .addError(Forbidden)
  .addError(NotFound)
  .addError(InternalError)
  .middleware(Authentication) {}
