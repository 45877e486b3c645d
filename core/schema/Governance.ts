/**
 * The governance log: every action a person (or auto-containment) takes on an agent or an
 * organization — containment, enforcement mode, card, conscience values, policy, trust edges — as an
 * append-only RFC 6962 log per agent and per organization, with C2SP signed tree heads, like the
 * checkpoint logs.
 *
 * A leaf is the RFC 6962 leaf hash of the JCS (RFC 8785) bytes of a `GovernanceRecord`. The record
 * names its log's origin, so an entry cannot be replayed into another log, and holds hashes of the
 * new card, values or policy rather than the documents themselves (they are served by their own routes).
 */
import { Schema } from "effect"
import { SignedNote } from "./Certificate.js"
import { DateTimeString, Hex32 } from "./Ids.js"
import { literalUnion } from "./Literals.js"

export const GOVERNANCE_ACTIONS = [
  // containment, on the agent's log
  "containment.pause",
  "containment.resume",
  "containment.kill",
  "containment.reactivate",
  "containment.auto_pause",
  "containment.policy",
  // settings and documents of one agent, on the agent's log
  "enforcement.mode",
  "enforcement.failure_policy",
  "card.update",
  "conscience.agent_values",
  "policy.put",
  "policy.delete",
  "agent.visibility",
  // the agent's display name (PATCH /v1/agents/{agent_id}); never on a public route
  "agent.display_name",
  // organization conscience values, on the organization's log (policy.put/delete too, for its policy)
  "conscience.create",
  "conscience.update",
  "conscience.delete",
  "conscience.activate",
  "conscience.deactivate",
  "conscience.reorder",
  "conscience.mode_change",
  // the organization's evidence redaction (PUT /v1/orgs/{org_id}/evidence-redaction), on its log
  "evidence_redaction.set",
  // webhook endpoints, on the organization's or the agent's log (never holding a secret)
  "webhook.create",
  "webhook.update",
  "webhook.delete",
  "webhook.rotate_secret",
  "webhook.redeliver",
  // teams of the organization, on the organization's log (card_put with the team card's hash)
  "team.create",
  "team.update",
  "team.archive",
  "team.member_add",
  "team.member_remove",
  "team.card_put",
  // trust edges the agent declares, on the declaring (source) agent's log
  "trust_edge.create",
  "trust_edge.delete",
  // a checkpoint's verdict reclassified (card_gap or behavior_gap), on the agent's log; the
  // certificate is never changed, reputation reads this entry
  "reclassification.create",
  // one AIP re-evaluation call (POST /v1/agents/{agent_id}/reverify/aip), on the agent's log: the
  // verdicts it changed and the concerns it dropped (core/schema/Reevaluation.ts); certificates stay
  "aip.reevaluation",
  // a scoped transaction opened or closed (docs/transactions.md), on the agent's log; its expiry
  // needs no entry (expires_at is in the open entry's new state)
  "transaction.open",
  "transaction.close",
  // the MCP gateway (docs/mcp.md): servers on the organization's log, agent tokens on the agent's
  // (never the token, only its id), a changed tool definition accepted on the organization's log
  "mcp_server.create",
  "mcp_server.update",
  "mcp_server.delete",
  "mcp_token.create",
  "mcp_token.revoke",
  "mcp_tool.accept",
  // a held tool call's approval decided by a person (docs/approvals.md), on the agent's log, the
  // approver as actor; an expiry or a cancellation needs no entry (nobody decided)
  "approval.approve",
  "approval.deny"
] as const
export const GovernanceAction = literalUnion(GOVERNANCE_ACTIONS, { identifier: "GovernanceAction" })
export type GovernanceAction = typeof GovernanceAction.Type

/** Hashes of the documents an action put in force (hex SHA-256 of their JCS, as certificates bind them). */
export const GovernanceHashes = Schema.Struct({
  card_hash: Schema.optionalWith(Hex32, { exact: true }),
  values_hash: Schema.optionalWith(Hex32, { exact: true }),
  policy_hash: Schema.optionalWith(Hex32, { exact: true }),
  /** The reclassified checkpoint's certificate: its chain hash (`chain.hash`, the checkpoint log leaf's content). */
  chain_hash: Schema.optionalWith(Hex32, { exact: true }).annotations({
    description: "reclassification.create: the reclassified checkpoint's chain hash (its certificate's `chain.hash`)"
  }),
  /**
   * The same chain hash under its former name, in reclassification entries signed before the rename
   * (docs/formats.md). Kept so those records decode whole and still hash to their leaves; new entries
   * write `chain_hash`.
   */
  certificate_hash: Schema.optionalWith(Hex32, { exact: true }).annotations({
    description: "Entries signed before `chain_hash`: the same chain hash under its former name; never written now"
  })
}).annotations({ identifier: "GovernanceHashes" })
export type GovernanceHashes = typeof GovernanceHashes.Type

/** JSON: whatever state the action read before and left after (small: statuses, modes, ids, hashes). */
const State = Schema.Unknown.annotations({ description: "The state before or after the action (JSON), or null" })

export const GovernanceRecord = Schema.Struct({
  origin: Schema.String.annotations({
    description: "The log's origin, `<CANDOR_LOG_ORIGIN>/agents/<agent_id>/governance` or `/orgs/<org_id>/governance`"
  }),
  action: GovernanceAction,
  actor: Schema.String.annotations({
    description: "The user id acting (also for their API keys), `service` for the service-role key, `system`"
  }),
  reason: Schema.NullOr(Schema.String),
  previous_state: State,
  new_state: State,
  hashes: GovernanceHashes,
  created_at: DateTimeString
}).annotations({ identifier: "GovernanceRecord", description: "One governance action: a leaf of a governance log" })
export type GovernanceRecord = typeof GovernanceRecord.Type

export const GovernanceLogEntry = Schema.Struct({
  index: Schema.NonNegativeInt.annotations({ description: "The leaf index in the log" }),
  leaf_hash: Hex32.annotations({ description: "RFC 6962 leaf hash of the JCS of `record`" }),
  record: GovernanceRecord
}).annotations({ identifier: "GovernanceLogEntry" })
export type GovernanceLogEntry = typeof GovernanceLogEntry.Type

const Size = Schema.NonNegativeInt

/** A page of a governance log with the signed tree head it belongs to. */
export const GovernanceLogPage = Schema.Struct({
  origin: Schema.String,
  tree_size: Size,
  root: Schema.NullOr(Hex32).annotations({ description: "Null while the log is empty" }),
  signed_tree_head: Schema.NullOr(SignedNote).annotations({
    description: "The signed tree head of `tree_size` leaves"
  }),
  offset: Size,
  limit: Size,
  entries: Schema.Array(GovernanceLogEntry)
}).annotations({ identifier: "GovernanceLogPage", description: "Governance log entries in index order" })
export type GovernanceLogPage = typeof GovernanceLogPage.Type

/**
 * Everything needed to check one entry offline (`candor verify <file>`): the record, its leaf, the
 * audit path and the signed tree head of `tree_size` leaves.
 */
export const GovernanceInclusionProof = Schema.Struct({
  origin: Schema.String,
  index: Size,
  leaf_hash: Hex32,
  record: GovernanceRecord,
  tree_size: Size,
  root: Hex32,
  audit_path: Schema.Array(Hex32).annotations({ description: "RFC 9162 inclusion proof, bottom-up" }),
  signed_tree_head: SignedNote
}).annotations({
  identifier: "GovernanceInclusionProof",
  description: "RFC 6962 inclusion proof of a governance log entry"
})
export type GovernanceInclusionProof = typeof GovernanceInclusionProof.Type

export const GovernanceTreeHead = Schema.Struct({
  tree_size: Size,
  root: Hex32,
  signed_tree_head: SignedNote
}).annotations({ identifier: "GovernanceTreeHead" })

export const GovernanceConsistencyProof = Schema.Struct({
  origin: Schema.String,
  from: GovernanceTreeHead,
  to: GovernanceTreeHead,
  proof: Schema.Array(Hex32).annotations({ description: "RFC 9162 consistency proof from `from` to `to`" })
}).annotations({
  identifier: "GovernanceConsistencyProof",
  description: "Proof that a governance log only grew between two signed tree heads"
})
export type GovernanceConsistencyProof = typeof GovernanceConsistencyProof.Type
