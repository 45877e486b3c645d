/**
 * Containment: a paused or killed agent, as the store keeps it (`agents.settings.containment`), as the
 * gateways enforce it (`AgentState`), and as the gateway's 403 reports it. One schema for all three, so
 * what an admin sets is exactly what every gateway refuses on.
 *
 * `contained_by` is who acted: a user id (also through their API keys), `service` for the service-role
 * key, `system` for auto-containment.
 */
import { Schema } from "effect"
import { ContainedStatus } from "./Agent.js"
import { AgentId, DateTimeString } from "./Ids.js"
import { literalUnion } from "./Literals.js"

const ContainmentStateFields = Schema.Struct({
  status: ContainedStatus,
  reason: Schema.NullOr(Schema.String),
  contained_at: DateTimeString,
  contained_by: Schema.String.annotations({
    description: "Who contained it: a user id, `service` (the service-role key) or `system` (auto-containment)"
  })
})

/**
 * The state written before containment had its API (auto-containment only): `{status, reason, since}`.
 * Still decoded, as contained by `system`: a value a gateway cannot read is skipped, and a gateway
 * started after an upgrade would then take a paused agent for an active one.
 */
const LegacyContainmentState = Schema.transform(
  Schema.Struct({ status: ContainedStatus, reason: Schema.String, since: DateTimeString }),
  Schema.typeSchema(ContainmentStateFields),
  {
    strict: true,
    decode: (legacy) => ({
      status: legacy.status,
      reason: legacy.reason,
      contained_at: legacy.since,
      contained_by: "system"
    }),
    encode: (state) => ({ status: state.status, reason: state.reason ?? "", since: state.contained_at })
  }
)

/** A contained agent: paused (by an Admin, or auto-containment) or killed (by an Owner). Absent or null: active. */
export const ContainmentState = Schema.Union(ContainmentStateFields, LegacyContainmentState).annotations({
  identifier: "ContainmentState",
  description: "A paused or killed agent: why, when and by whom"
})
export type ContainmentState = typeof ContainmentState.Type

/**
 * What a containment covers: `agent`, the one agent (its provider key and `x-candor-agent` name); `key`,
 * every agent derived from its provider key, names not seen yet included (a fleet sharing a key is
 * contained whole). Kept apart: an agent is refused while either its own or its key's containment holds.
 */
export const ContainmentScope = literalUnion(["agent", "key"], { identifier: "ContainmentScope" })
export type ContainmentScope = typeof ContainmentScope.Type

/** What a containment action is named in the containment log (`auto_pause`: reached the agent's threshold). */
export const CONTAINMENT_ACTIONS = ["pause", "resume", "kill", "reactivate", "auto_pause"] as const
export const ContainmentAction = literalUnion(CONTAINMENT_ACTIONS, { identifier: "ContainmentAction" })
export type ContainmentAction = typeof ContainmentAction.Type

/** Why the gateway refused: the machine-readable reason of a `containment_error`. */
export const ContainmentRefusal = literalUnion(["agent_paused", "agent_killed"], { identifier: "ContainmentRefusal" })
export type ContainmentRefusal = typeof ContainmentRefusal.Type

const ContainmentErrorDetail = Schema.Struct({
  type: Schema.Literal("containment_error"),
  reason: ContainmentRefusal,
  agent_id: AgentId,
  scope: ContainmentScope.annotations({
    description: "agent: the agent's own containment; key: its provider key's (every agent of the key)"
  }),
  contained_at: DateTimeString,
  contained_by: Schema.String
})

/**
 * Body of the gateway's 403 for a contained agent: `error` for clients that only read the usual
 * error field, `containment_error` (the contract) for those that act on it; `type` and `reason`
 * repeated at the top for clients that read the top level only.
 */
export const ContainmentError = Schema.Struct({
  error: Schema.String,
  type: Schema.Literal("containment_error"),
  reason: ContainmentRefusal,
  containment_error: ContainmentErrorDetail
}).annotations({ identifier: "ContainmentError", description: "403 body for requests of a paused or killed agent" })
export type ContainmentError = typeof ContainmentError.Type
