/**
 * Enforcement records (issue 26): every act of enforcement, one record each. The gateway's refusals
 * (a 403 for containment, tool policy, transaction or an enforce-mode boundary violation) and the
 * nudges it injects; every containment change (a person's pause, resume, kill or reactivate, and
 * auto-containment). The same shape is the entry of `GET /v1/agents/{agent_id}/enforcement-records`,
 * a line of the evidence export, and what a gateway publishes on the bus for the workers to store.
 *
 * `kind` is an open enum (docs/formats.md): readers must accept kinds they do not know, so a
 * feature may add one without breaking them. `record_id` is made once, where the act happens, and
 * the store keeps a record once per id: a redelivered message stores nothing more.
 */
import { Schema } from "effect"
import { AgentId, DateTimeString, Identifier, SessionId } from "./Ids.js"

/** The kinds Candor writes today; later features add theirs (docs/formats.md). */
export const ENFORCEMENT_KINDS = [
  "blocked",
  "nudged",
  "paused",
  "resumed",
  "killed",
  "reactivated",
  // the MCP gateway (docs/mcp.md): a tools/call forwarded under a warn-mode policy finding, a tool definition changed
  "warned",
  "tool_changed"
] as const

/** A kind: a lowercase word, with underscores (open: any such word decodes). */
export const EnforcementKind = Schema.String.pipe(Schema.pattern(/^[a-z][a-z_]{0,63}$/)).annotations({
  identifier: "EnforcementKind",
  description: `What was done: ${ENFORCEMENT_KINDS.join(", ")}, or a kind a later feature adds`,
  message: () => ({ message: "must be a lowercase word (letters and underscores, at most 64)", override: true })
})

export const ENFORCEMENT_RECORD_ID_PREFIX = "enf-"

/** A short text of the record (a rule, a reason, an actor): bounded, as every stored field. */
const RecordText = (max: number) => Schema.String.pipe(Schema.minLength(1), Schema.maxLength(max))

export const EnforcementRecord = Schema.Struct({
  record_id: Schema.String.pipe(Schema.startsWith(ENFORCEMENT_RECORD_ID_PREFIX), Schema.maxLength(64)).annotations({
    description: "`enf-<uuid>`, made where the act happened: the record is stored once per id"
  }),
  agent_id: AgentId,
  kind: EnforcementKind,
  rule: RecordText(64).annotations({
    description:
      "Which rule acted: `containment`, `policy`, `transaction`, `enforce` (blocked); the mode that left the nudge (nudged); `containment`, `key_containment`, `auto_containment` (containment changes)"
  }),
  reason: RecordText(2000).annotations({
    description: "Why: the 403's reason, `boundary_violation` for a nudge, the reason given for a containment change"
  }),
  checkpoint_id: Schema.optionalWith(Identifier, { exact: true }).annotations({
    description: "The checkpoint that triggered it, when one did"
  }),
  session_id: Schema.optionalWith(SessionId, { exact: true }),
  actor: RecordText(256).annotations({
    description: "`gateway` for the gateway's acts, `system` for auto-containment, else a user id or `service`"
  }),
  created_at: DateTimeString
}).annotations({ identifier: "EnforcementRecord", description: "One act of enforcement" })
export type EnforcementRecord = typeof EnforcementRecord.Type

/** The actor of the gateway's own acts (a refusal, a nudge injected). */
export const GATEWAY_ACTOR = "gateway"

export const EnforcementRecordList = Schema.Struct({
  records: Schema.Array(EnforcementRecord).annotations({ description: "Newest first" }),
  total: Schema.NonNegativeInt.annotations({ description: "Records matching the filters, all pages" }),
  limit: Schema.Int,
  offset: Schema.NonNegativeInt
}).annotations({ identifier: "EnforcementRecordList" })
