/**
 * Claiming an agent (POST /v1/agents/claim): the request and the claimed agent.
 */
import * as Schema from "effect/Schema"
import { AgentId, AgentName, DateTimeString, Hex32, Identifier } from "./Ids.js"

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
