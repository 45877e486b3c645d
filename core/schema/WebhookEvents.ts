/**
 * The public event catalogue: every event type a webhook endpoint or the live alert stream can carry,
 * each with the schema of its `data`, and the envelope every delivery and stream event shares. The
 * spec's fifteen events come first; Candor's own follow (verdicts, drift, policy, blocked requests,
 * failed proofs, dead letters). A type whose feature does not exist yet is declared and accepted in subscriptions
 * now (`status: "declared"`) and fires once the feature lands.
 */
import { Schema } from "effect"
import { AgentStatus } from "./Agent.js"
import { Approval } from "./Approval.js"
import { ContainmentAction, ContainmentScope } from "./Containment.js"
import { ConcernCategory, Severity } from "./Concern.js"
import { DeadLetter } from "./DeadLetter.js"
import { DriftAlert } from "./Drift.js"
import { AgentId, CheckpointId, DateTimeString, Identifier, SessionId } from "./Ids.js"
import { Verdict } from "./Verdict.js"

const Nullable = <S extends Schema.Schema.Any>(schema: S) => Schema.NullOr(schema)

const AgentScore = {
  score_before: Schema.Number,
  score_after: Schema.Number,
  grade: Schema.String,
  components: Schema.Record({ key: Schema.String, value: Schema.Number })
}

const Quota = Schema.Struct({
  org_id: Identifier,
  usage_percent: Schema.Number,
  computations_used: Schema.NonNegativeInt,
  computations_included: Schema.NonNegativeInt
})

const Containment = Schema.Struct({
  agent_id: AgentId,
  org_id: Nullable(Identifier),
  action: ContainmentAction,
  actor: Schema.String,
  reason: Nullable(Schema.String),
  previous_status: AgentStatus,
  new_status: AgentStatus,
  scope: ContainmentScope.annotations({
    description:
      "agent: the agent's own containment; key: its provider key's (every agent of the key; the statuses are the key's)"
  })
})

const VerdictData = Schema.Struct({
  checkpoint_id: CheckpointId,
  certificate_id: Schema.String,
  agent_id: AgentId,
  session_id: SessionId,
  verdict: Verdict,
  timestamp: DateTimeString,
  concerns: Schema.Array(
    Schema.Struct({ category: ConcernCategory, severity: Severity, description: Schema.String })
  ).annotations({ description: "As in the certificate: no evidence excerpts" })
})

const PolicyFinding = Schema.Struct({
  type: Schema.String,
  tool: Schema.String,
  reason: Schema.String.annotations({ description: "The policy rule's own reason, never the request's content" }),
  severity: Severity
})

const TeamMember = Schema.Struct({
  team_id: Identifier,
  agent_id: AgentId,
  actor_id: Schema.String,
  member_count: Schema.NonNegativeInt
})

export type EventStatus = "active" | "declared"

interface EventType {
  readonly description: string
  readonly data: Schema.Schema.AnyNoContext
  /** `declared`: accepted in subscriptions, fires when its feature lands. */
  readonly status: EventStatus
}

const event = (description: string, data: Schema.Schema.AnyNoContext, status: EventStatus = "declared"): EventType => ({
  description,
  data,
  status
})

export const WEBHOOK_EVENT_TYPES = {
  "reputation.score_changed": event(
    "An agent's score moved more than 10 points from the last score notified",
    Schema.Struct({ agent_id: AgentId, ...AgentScore }),
    "active"
  ),
  "reputation.grade_changed": event(
    "An agent's letter grade changed",
    Schema.Struct({ agent_id: AgentId, grade_before: Schema.String, grade_after: Schema.String, score: Schema.Number }),
    "active"
  ),
  "team.created": event(
    "A team was created",
    Schema.Struct({
      team_id: Identifier,
      org_id: Identifier,
      name: Schema.String,
      member_count: Schema.NonNegativeInt,
      agent_ids: Schema.Array(AgentId)
    }),
    "active"
  ),
  "team.archived": event(
    "A team was archived",
    Schema.Struct({ team_id: Identifier, org_id: Identifier, name: Schema.String }),
    "active"
  ),
  "team.member_added": event("An agent joined a team", TeamMember, "active"),
  "team.member_removed": event("An agent left a team", TeamMember, "active"),
  "team.card_updated": event(
    "A team card was updated",
    Schema.Struct({ team_id: Identifier, card_id: Schema.String, card_source: Schema.String, actor_id: Schema.String }),
    "active"
  ),
  "team_reputation.score_changed": event(
    "A team's score moved more than 10 points from the last score notified",
    Schema.Struct({ team_id: Identifier, ...AgentScore }),
    "active"
  ),
  "team_reputation.grade_changed": event(
    "A team's letter grade changed",
    Schema.Struct({
      team_id: Identifier,
      grade_before: Schema.String,
      grade_after: Schema.String,
      score: Schema.Number
    }),
    "active"
  ),
  "quota.team_reputation_exceeded": event("The team reputation computation quota is exceeded", Quota, "active"),
  "quota.team_reputation_warning": event("80% of the team reputation computation quota is used", Quota, "active"),
  "conscience.values_updated": event(
    "An organization's conscience values or mode changed",
    Schema.Struct({
      org_id: Identifier,
      action: Schema.String,
      value_id: Nullable(Schema.String),
      actor: Schema.String
    }),
    "active"
  ),
  "agent.paused": event("An agent was paused, by a person or by auto-containment", Containment, "active"),
  "agent.resumed": event("A paused agent was resumed, or a killed one reactivated", Containment, "active"),
  "agent.killed": event("An agent was killed", Containment, "active"),
  "verdict.boundary_violation": event("A checkpoint was certified boundary_violation", VerdictData, "active"),
  "verdict.review_needed": event("A checkpoint was certified review_needed", VerdictData, "active"),
  "drift.detected": event("An AIP or AAP drift alert was raised", DriftAlert, "active"),
  "policy.violation": event(
    "A request's declared tools or a response's tool calls broke the agent's tool policy (warn or fail)",
    Schema.Struct({
      agent_id: AgentId,
      /** The response's checkpoint; null for a request (judged before it is forwarded). */
      checkpoint_id: Nullable(CheckpointId),
      phase: Schema.Literal("request", "response"),
      verdict: Schema.Literal("warn", "fail").annotations({
        description: "The policy's verdict; `mode` says what was done about it (enforce blocks a request)"
      }),
      mode: Schema.String,
      violations: Schema.Array(PolicyFinding),
      warnings: Schema.Array(PolicyFinding)
    }),
    "active"
  ),
  "enforcement.blocked": event(
    "The gateway answered 403 (enforce, policy, containment or transaction): the rule and reason, never the content",
    Schema.Struct({
      agent_id: AgentId,
      session_id: Nullable(SessionId),
      provider: Schema.String,
      rule: Schema.Literal("enforce", "policy", "containment", "transaction", "tool_changed", "approval"),
      reason: Schema.String.annotations({
        description:
          "containment: agent_paused | agent_killed; policy: the forbidden tools, or that the body could not be read; enforce: boundary_violation; transaction: transaction_unknown | transaction_expired; tool_changed: the MCP tool whose changed definition waits for acceptance"
      }),
      /** The blocked response's checkpoint (rule `enforce`); null otherwise. */
      checkpoint_id: Nullable(CheckpointId)
    }),
    "active"
  ),
  "mcp.tool_changed": event(
    "An MCP server listed a tool with another definition than the one pinned (name, description, input schema): calls to it wait for an Owner's or Admin's acceptance under an enforcing policy",
    Schema.Struct({
      server_id: Schema.String,
      tool_name: Schema.String,
      previous_hash: Schema.String.annotations({ description: "sha256:<hex> of the pinned definition's JCS" }),
      definition_hash: Schema.String.annotations({ description: "sha256:<hex> of the listed definition's JCS" }),
      agent_id: AgentId.annotations({ description: "The agent whose tools/list revealed the change" })
    }),
    "active"
  ),
  "proof.failed": event(
    "A verdict proof failed after its last attempt",
    Schema.Struct({
      checkpoint_id: CheckpointId,
      agent_id: AgentId,
      error: Schema.String,
      attempts: Schema.NonNegativeInt
    }),
    "active"
  ),
  "pipeline.dead_lettered": event(
    "The pipeline gave up on a gateway event (not decodable, or delivered the most times it may): no checkpoint will come of it. Subject, agent, reason and time, never the payload",
    DeadLetter,
    "active"
  ),
  "approval.requested": event(
    "A tool call is held for a person's decision (an approve escalation trigger): the approval, never the call's arguments",
    Approval,
    "active"
  )
} as const satisfies Readonly<Record<string, EventType>>

export type WebhookEventType = keyof typeof WEBHOOK_EVENT_TYPES
export const WEBHOOK_EVENT_TYPE_NAMES = Object.keys(WEBHOOK_EVENT_TYPES) as ReadonlyArray<WebhookEventType>

export const isWebhookEventType = (name: string): name is WebhookEventType =>
  Object.prototype.hasOwnProperty.call(WEBHOOK_EVENT_TYPES, name)

/** The names in a subscription that are not in the catalogue (a subscription with any is refused). */
export const unknownEventTypes = (names: ReadonlyArray<string>): ReadonlyArray<string> =>
  names.filter((name) => !isWebhookEventType(name))

/** What every delivery's body and every stream event is. */
export const WebhookEnvelope = Schema.Struct({
  id: Schema.String.pipe(Schema.startsWith("evt-")).annotations({
    description: "The same on every retry and in the stream: receivers deduplicate on it"
  }),
  type: Schema.String,
  created_at: DateTimeString,
  org_id: Nullable(Identifier),
  agent_id: Schema.optionalWith(AgentId, { exact: true }),
  data: Schema.Unknown
}).annotations({ identifier: "WebhookEnvelope", description: "One event, as delivered and streamed" })
export type WebhookEnvelope = typeof WebhookEnvelope.Type

export const EventTypeInfo = Schema.Struct({
  type: Schema.String,
  description: Schema.String,
  status: Schema.Literal("active", "declared").annotations({
    description: "`declared`: may be subscribed to now, fires once its feature lands"
  }),
  data_schema: Schema.Unknown.annotations({ description: "JSON Schema (draft-07) of the event's `data`" })
}).annotations({ identifier: "EventTypeInfo" })

export const EventTypes = Schema.Struct({ event_types: Schema.Array(EventTypeInfo) }).annotations({
  identifier: "EventTypes"
})
