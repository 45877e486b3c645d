/**
 * AP-Trace (AAP §5): the structured record of one agent decision, verified after the fact
 * against the Alignment Card.
 *
 * `action.type` and `action.category` are plain strings on input because the interface spec types
 * them as "string": a trace from another AAP producer must not be refused for a value we do not know.
 * The known values are exported for the code that builds or interprets traces.
 */
import { Schema } from "effect"
import { literalUnion } from "./Literals.js"
import { AgentId, CardId, DateTimeString, JsonObject, SessionId, TraceId, UnknownMembers } from "./Ids.js"

const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })
const Probability = Schema.Number.pipe(Schema.between(0, 1))

export const TRACE_ACTION_TYPES = ["recommend", "execute", "escalate", "deny"] as const
export const TraceActionType = literalUnion(TRACE_ACTION_TYPES, { identifier: "TraceActionType" })
export type TraceActionType = typeof TraceActionType.Type

export const TRACE_ACTION_CATEGORIES = ["bounded", "escalation_trigger", "forbidden"] as const
export const TraceActionCategory = literalUnion(TRACE_ACTION_CATEGORIES, { identifier: "TraceActionCategory" })
export type TraceActionCategory = typeof TraceActionCategory.Type

export const ESCALATION_STATUSES = ["pending", "approved", "denied", "timeout"] as const
export const EscalationStatus = literalUnion(ESCALATION_STATUSES, { identifier: "EscalationStatus" })

export const TraceAction = Schema.Struct({
  type: Schema.String.annotations({ description: `Usually one of ${TRACE_ACTION_TYPES.join(", ")}` }),
  name: Schema.String,
  category: Schema.String.annotations({ description: `Usually one of ${TRACE_ACTION_CATEGORIES.join(", ")}` }),
  target: optional(Schema.Struct({ type: Schema.String, identifier: Schema.String }, UnknownMembers)),
  parameters: optional(JsonObject)
}).annotations({ identifier: "TraceAction" })

export const Alternative = Schema.Struct({
  option_id: Schema.String,
  description: Schema.String,
  score: optional(Schema.NullOr(Probability)),
  scoring_factors: optional(Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.Number }))),
  flags: optional(Schema.NullOr(Schema.Array(Schema.String)))
}).annotations({ identifier: "Alternative" })

export const TraceDecision = Schema.Struct({
  alternatives_considered: optional(Schema.Array(Alternative)),
  selected: Schema.String,
  selection_reasoning: Schema.String,
  values_applied: Schema.Array(Schema.String),
  confidence: optional(Schema.NullOr(Probability))
}).annotations({ identifier: "TraceDecision" })

export const TriggerCheck = Schema.Struct({
  trigger: Schema.String,
  matched: Schema.Boolean,
  value_observed: optional(Schema.Unknown)
}).annotations({ identifier: "TriggerCheck" })

export const TraceEscalation = Schema.Struct({
  evaluated: Schema.Boolean,
  triggers_checked: optional(Schema.NullOr(Schema.Array(TriggerCheck))),
  required: Schema.Boolean,
  reason: Schema.String,
  escalation_id: optional(Schema.NullOr(Schema.String)),
  escalation_status: optional(Schema.NullOr(EscalationStatus)),
  principal_response: optional(Schema.NullOr(JsonObject))
}).annotations({ identifier: "TraceEscalation" })

/** Open: AIP enrichment lives in `metadata`, and producers add their own members. */
export const TraceContext = Schema.Struct(
  {
    session_id: optional(Schema.NullOr(SessionId)),
    conversation_turn: optional(Schema.NullOr(Schema.NonNegativeInt)),
    prior_trace_ids: optional(Schema.NullOr(Schema.Array(TraceId))),
    environment: optional(Schema.NullOr(JsonObject)),
    metadata: optional(Schema.NullOr(JsonObject))
  },
  UnknownMembers
).annotations({ identifier: "TraceContext" })

export const TraceVerification = Schema.Struct({
  verified: Schema.Boolean,
  violations: Schema.Array(Schema.String)
}).annotations({ identifier: "TraceVerification" })

const draftFields = {
  trace_id: TraceId,
  agent_id: AgentId,
  card_id: optional(Schema.NullOr(CardId)),
  timestamp: DateTimeString,
  action: TraceAction,
  decision: TraceDecision,
  escalation: optional(TraceEscalation),
  context: optional(TraceContext)
}

/** A trace as the gateway publishes it, before post-hoc verification has run. */
export const APTraceDraft = Schema.Struct(draftFields).annotations({ identifier: "APTraceDraft" })
export type APTraceDraft = typeof APTraceDraft.Type

export const APTrace = Schema.Struct({
  ...draftFields,
  verification: TraceVerification,
  created_at: DateTimeString
}).annotations({ identifier: "APTrace", description: "A structured decision record (AAP AP-Trace)" })
export type APTrace = typeof APTrace.Type
