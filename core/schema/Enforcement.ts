/**
 * An agent's enforcement mode and failure policy as the API publishes them, and their updates.
 */
import * as Schema from "effect/Schema"
import { AgentId } from "./Ids.js"
import { EnforcementMode, FailurePolicy } from "./Verdict.js"

export const AgentEnforcement = Schema.Struct({
  agent_id: AgentId,
  enforcement_mode: EnforcementMode
}).annotations({ identifier: "AgentEnforcement" })

export const EnforcementUpdate = Schema.Struct({ mode: EnforcementMode }).annotations({
  identifier: "EnforcementUpdate"
})

export const AgentFailurePolicy = Schema.Struct({
  agent_id: AgentId,
  failure_policy: FailurePolicy
}).annotations({ identifier: "AgentFailurePolicy" })

export const FailurePolicyUpdate = Schema.Struct({ failure_policy: FailurePolicy }).annotations({
  identifier: "FailurePolicyUpdate"
})
