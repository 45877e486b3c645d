/**
 * Containment: a paused or killed agent, as the store keeps it (`agents.settings.containment`), as the
 * gateways enforce it (`AgentState`), and as the gateway's 403 reports it. One schema for all three, so
 * what an admin sets is exactly what every gateway refuses on.
 *
 * `contained_by` is who acted: a user id (also through their API keys), `service` for the service-role
 * key, `system` for auto-containment.
 */
import { Schema } from "effect"
import { ContainedStatus, AgentStatus } from "./Agent.js"
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

const MAX_REASON_LENGTH = 1000

/** At least two: one violation is not a streak (the judge can be wrong once). */
const MIN_AUTO_CONTAINMENT_THRESHOLD = 2

const Reason = Schema.NullOr(Schema.String.pipe(Schema.maxLength(MAX_REASON_LENGTH))).annotations({
  message: () => ({ message: `must be a string of at most ${MAX_REASON_LENGTH} characters, or null`, override: true })
})

const Scope = ContainmentScope.annotations({
  message: () => ({ message: 'must be "agent" or "key"', override: true }),
  description: "agent (the default): this agent only; key: every agent derived from its provider key"
})

const ReasonFields = Schema.Struct({
  reason: Schema.optionalWith(Reason, { exact: true }),
  scope: Schema.optionalWith(Scope, { exact: true })
})

const ScopeFields = Schema.Struct({ scope: Schema.optionalWith(Scope, { exact: true }) })

const SCOPE_JSON_SCHEMA = { type: "string", enum: ["agent", "key"] }

/**
 * Pause and kill: the body is optional (none, `{}`, `{reason}`, `{scope}` or both). An empty body
 * arrives as null, read as `{}` (a union with null would report every field error twice, once per member).
 */
export const ContainmentReason = Schema.transform(Schema.Unknown, ReasonFields, {
  strict: false,
  decode: (body) => body ?? {},
  encode: (body) => body
}).annotations({
  identifier: "ContainmentReason",
  jsonSchema: {
    type: "object",
    properties: { reason: { type: ["string", "null"], maxLength: MAX_REASON_LENGTH }, scope: SCOPE_JSON_SCHEMA },
    additionalProperties: false
  }
})

/** Resume and reactivate: none, `{}` or `{scope}`. */
export const ContainmentScopeBody = Schema.transform(Schema.Unknown, ScopeFields, {
  strict: false,
  decode: (body) => body ?? {},
  encode: (body) => body
}).annotations({
  identifier: "ContainmentScopeBody",
  jsonSchema: { type: "object", properties: { scope: SCOPE_JSON_SCHEMA }, additionalProperties: false }
})

export const AgentContained = Schema.Struct({
  agent_id: AgentId,
  containment_scope: ContainmentScope,
  containment_status: ContainedStatus,
  contained_at: DateTimeString,
  contained_by: Schema.String.annotations({ description: "A user id, `service` or `system`" }),
  containment_reason: Schema.NullOr(Schema.String)
}).annotations({ identifier: "AgentContained" })

export const AgentActive = Schema.Struct({
  agent_id: AgentId,
  containment_scope: ContainmentScope,
  containment_status: Schema.Literal("active").annotations({
    description: "The scope acted on is active; the agent may still be contained at the other (GET …/containment)"
  })
}).annotations({ identifier: "AgentActive" })

export const ContainmentLogItem = Schema.Struct({
  action: ContainmentAction,
  actor: Schema.String,
  reason: Schema.NullOr(Schema.String),
  previous_status: AgentStatus,
  new_status: AgentStatus,
  scope: ContainmentScope,
  created_at: DateTimeString
}).annotations({ identifier: "ContainmentLogItem" })

/** One scope's containment. */
export const ContainmentView = Schema.Struct({
  status: AgentStatus,
  contained_at: Schema.NullOr(DateTimeString),
  contained_by: Schema.NullOr(Schema.String),
  reason: Schema.NullOr(Schema.String)
}).annotations({ identifier: "ContainmentView" })

export const AgentContainment = Schema.Struct({
  agent_id: AgentId,
  containment_status: AgentStatus.annotations({
    description: "In force: the agent's own containment or its key's, the more severe (killed over paused)"
  }),
  containment_scope: Schema.NullOr(ContainmentScope).annotations({
    description: "Which containment is in force; null when the agent is active"
  }),
  contained_at: Schema.NullOr(DateTimeString),
  contained_by: Schema.NullOr(Schema.String),
  containment_reason: Schema.NullOr(Schema.String),
  agent_containment: ContainmentView.annotations({ description: "The agent's own containment (scope agent)" }),
  key_containment: Schema.NullOr(ContainmentView).annotations({
    description: "Its provider key's (scope key); null when Candor does not know the key (the agent is not claimed)"
  }),
  auto_containment_threshold: Schema.NullOr(Schema.Int),
  log: Schema.Array(ContainmentLogItem).annotations({ description: "Newest first, at most 100" })
}).annotations({ identifier: "AgentContainment" })

const Threshold = Schema.NullOr(
  Schema.Int.pipe(Schema.greaterThanOrEqualTo(MIN_AUTO_CONTAINMENT_THRESHOLD))
).annotations({
  message: () => ({
    message: `must be an integer of at least ${MIN_AUTO_CONTAINMENT_THRESHOLD}, or null (never)`,
    override: true
  })
})

export const ContainmentPolicy = Schema.Struct({
  auto_containment_threshold: Threshold.annotations({
    description: "Pause the agent after this many consecutive boundary violations; null: never"
  })
}).annotations({ identifier: "ContainmentPolicy" })

export const AgentContainmentPolicy = Schema.Struct({
  agent_id: AgentId,
  auto_containment_threshold: Schema.NullOr(Schema.Int)
}).annotations({ identifier: "AgentContainmentPolicy" })
