/**
 * Human approval (docs/approvals.md, issue 28): a tool call held by an `approve` escalation trigger
 * until a person decides. One shape, as the API lists it, the store's rows decode to it and the
 * `approval.requested` event carries it.
 */
import { Schema } from "effect"
import { AgentId, DateTimeString, Identifier } from "./Ids.js"
import { literalUnion } from "./Literals.js"

export const APPROVAL_STATUSES = ["pending", "approved", "denied", "expired", "cancelled"] as const
export const ApprovalStatus = literalUnion(APPROVAL_STATUSES, {
  identifier: "ApprovalStatus",
  description:
    "pending: waiting for a decision; approved or denied: decided by a person; expired: undecided by expires_at (the call is denied); cancelled: the client left first (the call is never sent)"
})
export type ApprovalStatus = typeof ApprovalStatus.Type

export const APPROVAL_DECISIONS = ["approve", "deny"] as const
export type ApprovalDecision = (typeof APPROVAL_DECISIONS)[number]

/** `apr-` and a UUID. */
export const ApprovalId = Schema.String.pipe(
  Schema.pattern(/^apr-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, {
    message: () => "must be an approval id (apr-<uuid>)"
  })
).annotations({ identifier: "ApprovalId" })

/** The limit of a reason, a person's or the policy's. */
export const APPROVAL_REASON_MAX = 1000

const Reason = Schema.String.pipe(Schema.maxLength(APPROVAL_REASON_MAX))

export const ArgumentsHash = Schema.String.pipe(
  Schema.pattern(/^[0-9a-f]{64}$/, { message: () => "must be a hex SHA-256" })
).annotations({
  identifier: "ArgumentsHash",
  description: "Hex SHA-256 of the held call's arguments (their RFC 8785 JSON): the approval releases that call only"
})

/** The longest tool name an approval names (a longer one's call is refused, not held). */
export const TOOL_NAME_MAX = 256

export const Approval = Schema.Struct({
  approval_id: ApprovalId,
  org_id: Identifier,
  agent_id: AgentId,
  server_id: Schema.NullOr(Identifier).annotations({ description: "The MCP server the call is for; null: none" }),
  tool: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(TOOL_NAME_MAX)),
  arguments_hash: ArgumentsHash,
  reason: Reason.annotations({ description: "The approve trigger's reason (the policy's words, never the call's)" }),
  requested_at: DateTimeString,
  expires_at: DateTimeString,
  status: ApprovalStatus,
  decided_at: Schema.NullOr(DateTimeString).annotations({ description: "When it left pending; null while pending" }),
  decided_by: Schema.NullOr(Schema.String).annotations({
    description: "The approver (a user id, or `service`); null unless approved or denied"
  }),
  decision_reason: Schema.NullOr(Reason).annotations({ description: "The approver's reason; null without one" })
}).annotations({ identifier: "Approval", description: "A tool call held for a person's decision" })
export type Approval = typeof Approval.Type

export const ApprovalPage = Schema.Struct({
  approvals: Schema.Array(Approval).annotations({ description: "Newest request first" }),
  total: Schema.NonNegativeInt,
  limit: Schema.NonNegativeInt,
  offset: Schema.NonNegativeInt
}).annotations({ identifier: "ApprovalPage" })
export type ApprovalPage = typeof ApprovalPage.Type

/** Unknown members are ignored, as in every body. */
export const ApprovalDecisionBody = Schema.Struct({
  reason: Schema.optionalWith(Schema.NullOr(Reason), { exact: true })
}).annotations({ identifier: "ApprovalDecisionBody" })

/**
 * What the side holding a call asks for (adapters/bus/ApprovalDesk.ts): it travels from a gateway to
 * a process with the store (over NATS, or the embedded default's thread bridge), so it is decoded
 * there like any input.
 */
export const ApprovalAsk = Schema.Struct({
  org_id: Identifier,
  agent_id: AgentId,
  server_id: Schema.NullOr(Identifier),
  tool: Approval.fields.tool,
  arguments_hash: ArgumentsHash,
  reason: Reason,
  /** core/Approval.ts `approvalTimeoutSeconds`: clamped to the bounds by the service. */
  timeout_seconds: Schema.Int.pipe(Schema.positive())
}).annotations({ identifier: "ApprovalAsk" })
export type ApprovalAsk = typeof ApprovalAsk.Type
