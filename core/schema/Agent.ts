/**
 * Agents and containment.
 *
 * An agent appears on its first request through the gateway (identified by the hash of its
 * provider key) and is unclaimed until a user claims it: `user_id`, `email`, `claimed_at` and
 * `billing_account_id` are null until then. `last_seen` is null for an agent registered through
 * the API that has sent no traffic yet.
 */
import { Schema } from "effect"
import { literalUnion } from "./Literals.js"
import { AgentId, DateTimeString, Hex32, Identifier } from "./Ids.js"
import { Visibility } from "./Reputation.js"
import { EnforcementMode } from "./Verdict.js"

/** paused (by an admin, or auto-containment) and killed (by an owner) are the contained states. */
export const AGENT_STATUSES = ["active", "paused", "killed"] as const
export const AgentStatus = literalUnion(AGENT_STATUSES, { identifier: "AgentStatus" })
export type AgentStatus = typeof AgentStatus.Type

export const ContainedStatus = literalUnion(["paused", "killed"], { identifier: "ContainedStatus" })
export type ContainedStatus = typeof ContainedStatus.Type

export const Agent = Schema.Struct({
  id: AgentId,
  agent_hash: Hex32.annotations({
    description: "SHA-256 of the provider key (and agent name) that identifies the agent"
  }),
  user_id: Schema.NullOr(Identifier),
  email: Schema.NullOr(Schema.String),
  claimed_at: Schema.NullOr(DateTimeString),
  last_seen: Schema.NullOr(DateTimeString),
  status: AgentStatus,
  public: Schema.Boolean.annotations({ description: "visibility = public (kept for clients of the reference API)" }),
  visibility: Visibility.annotations({
    description: "Who may read the agent's reputation: public (listed), unlisted (by id, the default), private"
  }),
  aip_enforcement_mode: EnforcementMode,
  billing_account_id: Schema.NullOr(Identifier),
  created_at: DateTimeString
}).annotations({ identifier: "Agent" })
export type Agent = typeof Agent.Type
