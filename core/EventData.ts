/**
 * What each catalogue event (core/schema/WebhookEvents.ts) says, built in one place from what the
 * producer holds: the actor's step (verdicts, drift, a response's tool policy), the containment
 * write path, the organization conscience API, the proof relay, the gateway (its request
 * policy and its 403s) and the dead-letter recorder. Each builder returns the occurrence `newEnvelope` (core/Events.ts) turns
 * into the published envelope, with the type's source rule, so every producer names the same
 * occurrence the same way.
 *
 * Data is built field by field from kept lists, never by spreading a record: a field added to a
 * checkpoint or a log row later is not published by accident, and no event carries content (no
 * thinking, prompt, response, evidence excerpt or reasoning summary).
 */
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { EventOccurrence } from "./Events.js"
import type { PolicyEvaluation, PolicyFinding, PolicyVerdict } from "./Policy.js"
import type { AgentStatus } from "./schema/Agent.js"
import type { Approval } from "./schema/Approval.js"
import type { IntegrityCheckpoint } from "./schema/Checkpoint.js"
import { PolicyFinding as PolicyFindingSchema, PolicyVerdict as PolicyVerdictSchema } from "./schema/Policy.js"
import type { ContainmentAction, ContainmentScope } from "./schema/Containment.js"
import type { DeadLetter } from "./schema/DeadLetter.js"
import type { DriftAlert } from "./schema/Drift.js"
import type { Grade } from "./schema/Reputation.js"
import type { WebhookEventType } from "./schema/WebhookEvents.js"

interface Occurrence<T extends WebhookEventType> extends EventOccurrence {
  readonly type: T
}

// ---- verdicts --------------------------------------------------------------------------------

/** The event of a certified verdict; none for `clear`. */
export const verdictEventType = (
  verdict: IntegrityCheckpoint["verdict"]
): "verdict.boundary_violation" | "verdict.review_needed" | undefined =>
  verdict === "boundary_violation"
    ? "verdict.boundary_violation"
    : verdict === "review_needed"
      ? "verdict.review_needed"
      : undefined

/** As in the public certificate: the concerns without their evidence excerpt (it quotes the thinking). */
export const verdictData = (checkpoint: IntegrityCheckpoint, certificateId: string) => ({
  checkpoint_id: checkpoint.checkpoint_id,
  certificate_id: certificateId,
  agent_id: checkpoint.agent_id,
  session_id: checkpoint.session_id,
  verdict: checkpoint.verdict,
  timestamp: checkpoint.timestamp,
  concerns: checkpoint.concerns.map((concern) => ({
    category: concern.category,
    severity: concern.severity,
    description: concern.description
  }))
})

/** Source: the checkpoint id. Undefined for a clear verdict. */
export const verdictEvent = (
  checkpoint: IntegrityCheckpoint,
  certificateId: string,
  orgId: string | null,
  at: Date
): Occurrence<"verdict.boundary_violation" | "verdict.review_needed"> | undefined => {
  const type = verdictEventType(checkpoint.verdict)
  return type === undefined
    ? undefined
    : {
        type,
        source: checkpoint.checkpoint_id,
        org_id: orgId,
        agent_id: checkpoint.agent_id,
        created_at: at,
        data: verdictData(checkpoint, certificateId)
      }
}

// ---- drift -----------------------------------------------------------------------------------

export const driftData = (alert: DriftAlert): DriftAlert => ({
  alert_id: alert.alert_id,
  agent_id: alert.agent_id,
  session_id: alert.session_id,
  checkpoint_ids: alert.checkpoint_ids,
  ...(alert.trace_ids === undefined ? {} : { trace_ids: alert.trace_ids }),
  sustained_checks: alert.sustained_checks,
  severity: alert.severity,
  drift_direction: alert.drift_direction,
  message: alert.message,
  detection_timestamp: alert.detection_timestamp,
  ...(alert.integrity_similarity === undefined ? {} : { integrity_similarity: alert.integrity_similarity })
})

/** Source: the alert id (AIP and AAP alerts alike). */
export const driftEvent = (alert: DriftAlert, orgId: string | null, at: Date): Occurrence<"drift.detected"> => ({
  type: "drift.detected",
  source: alert.alert_id,
  org_id: orgId,
  agent_id: alert.agent_id,
  created_at: at,
  data: driftData(alert)
})

// ---- containment -----------------------------------------------------------------------------

/** The public event of a containment change: resume and reactivate both make the agent active again. */
export const containmentEventType = (action: ContainmentAction): "agent.paused" | "agent.resumed" | "agent.killed" => {
  switch (action) {
    case "pause":
    case "auto_pause":
      return "agent.paused"
    case "resume":
    case "reactivate":
      return "agent.resumed"
    case "kill":
      return "agent.killed"
  }
}

/** The part of a containment log row the event publishes. */
export interface ContainmentChangeRecord {
  /** The containment log id (`ctl-<uuid>`). */
  readonly id: string
  readonly agent_id: string
  readonly action: ContainmentAction
  readonly actor: string
  readonly reason: string | null
  readonly previous_status: AgentStatus
  readonly new_status: AgentStatus
  /** The agent's own containment (absent: the same) or its provider key's. */
  readonly scope?: ContainmentScope
}

export const containmentData = (entry: ContainmentChangeRecord, orgId: string | null) => ({
  agent_id: entry.agent_id,
  org_id: orgId,
  action: entry.action,
  actor: entry.actor,
  reason: entry.reason,
  previous_status: entry.previous_status,
  new_status: entry.new_status,
  scope: entry.scope ?? "agent"
})

/** Source: the containment log id. An automatic pause is the same event as a manual one (`actor` "system"). */
export const containmentEvent = (
  entry: ContainmentChangeRecord,
  orgId: string | null,
  at: Date
): Occurrence<"agent.paused" | "agent.resumed" | "agent.killed"> => ({
  type: containmentEventType(entry.action),
  source: entry.id,
  org_id: orgId,
  agent_id: entry.agent_id,
  created_at: at,
  data: containmentData(entry, orgId)
})

// ---- organization conscience -------------------------------------------------------------------

export interface ConscienceChangeRecord {
  readonly org_id: string
  /** The organization conscience log's entry id. */
  readonly entry_id: number
  readonly action: string
  readonly value_id: string | null
  readonly actor: string
}

/** Source: the conscience log entry id. One event per change, for the organization (no agent). */
export const conscienceEvent = (change: ConscienceChangeRecord, at: Date): Occurrence<"conscience.values_updated"> => ({
  type: "conscience.values_updated",
  source: String(change.entry_id),
  org_id: change.org_id,
  created_at: at,
  data: { org_id: change.org_id, action: change.action, value_id: change.value_id, actor: change.actor }
})

// ---- proofs ----------------------------------------------------------------------------------

export interface ProofFailure {
  readonly checkpoint_id: string
  readonly agent_id: string
  /** The prover's reason and message (shown to API callers too: no secrets, no content). */
  readonly error: string
  readonly attempts: number
}

/** Source: the checkpoint id (a proof asked again and failed again is the same occurrence: one event). */
export const proofFailedEvent = (
  failure: ProofFailure,
  orgId: string | null,
  at: Date
): Occurrence<"proof.failed"> => ({
  type: "proof.failed",
  source: failure.checkpoint_id,
  org_id: orgId,
  agent_id: failure.agent_id,
  created_at: at,
  data: {
    checkpoint_id: failure.checkpoint_id,
    agent_id: failure.agent_id,
    error: failure.error,
    attempts: failure.attempts
  }
})

// ---- dead letters ---------------------------------------------------------------------------

/** Source: the dead letter's id (a notice recorded again is the same occurrence). Never the payload. */
export const deadLetteredEvent = (
  entry: DeadLetter,
  orgId: string | null,
  at: Date
): Occurrence<"pipeline.dead_lettered"> => ({
  type: "pipeline.dead_lettered",
  source: entry.dead_letter_id,
  org_id: orgId,
  ...(entry.agent_id === null ? {} : { agent_id: entry.agent_id }),
  created_at: at,
  data: {
    dead_letter_id: entry.dead_letter_id,
    subject: entry.subject,
    agent_id: entry.agent_id,
    reason: entry.reason,
    deliveries: entry.deliveries,
    dead_lettered_at: entry.dead_lettered_at
  }
})

// ---- human approval --------------------------------------------------------------------------

/** Source: the approval id. The approval as the API lists it (the arguments only as their hash). */
export const approvalRequestedEvent = (approval: Approval): Occurrence<"approval.requested"> => ({
  type: "approval.requested",
  source: approval.approval_id,
  org_id: approval.org_id,
  agent_id: approval.agent_id,
  created_at: new Date(approval.requested_at),
  data: {
    approval_id: approval.approval_id,
    org_id: approval.org_id,
    agent_id: approval.agent_id,
    server_id: approval.server_id,
    tool: approval.tool,
    arguments_hash: approval.arguments_hash,
    reason: approval.reason,
    requested_at: approval.requested_at,
    expires_at: approval.expires_at,
    status: approval.status,
    decided_at: approval.decided_at,
    decided_by: approval.decided_by,
    decision_reason: approval.decision_reason
  }
})

// ---- tool policy -----------------------------------------------------------------------------

const finding = (f: PolicyFinding) => ({ type: f.type, tool: f.tool, reason: f.reason, severity: f.severity })

export interface PolicyViolation {
  readonly agentId: string
  /** The response's checkpoint; null for a request. */
  readonly checkpointId: string | null
  readonly phase: "request" | "response"
  readonly mode: string
  readonly evaluation: Pick<PolicyEvaluation, "verdict" | "violations" | "warnings">
}

/** Whether an evaluation is worth an event: its verdict is warn or fail. */
export const isPolicyViolation = (verdict: PolicyVerdict): verdict is "warn" | "fail" => verdict !== "pass"

export const policyViolationData = (violation: PolicyViolation & { readonly verdict: "warn" | "fail" }) => ({
  agent_id: violation.agentId,
  checkpoint_id: violation.checkpointId,
  phase: violation.phase,
  verdict: violation.verdict,
  mode: violation.mode,
  violations: violation.evaluation.violations.map(finding),
  warnings: violation.evaluation.warnings.map(finding)
})

/**
 * Source: the checkpoint id for a response (its tool calls are judged once), `source` (a fresh UUID)
 * for a request. Undefined when the policy passed.
 */
export const policyViolationEvent = (
  violation: PolicyViolation,
  source: string,
  orgId: string | null,
  at: Date
): Occurrence<"policy.violation"> | undefined => {
  const verdict = violation.evaluation.verdict
  if (!isPolicyViolation(verdict)) return undefined
  return {
    type: "policy.violation",
    source: violation.checkpointId ?? source,
    org_id: orgId,
    agent_id: violation.agentId,
    created_at: at,
    data: policyViolationData({ ...violation, verdict })
  }
}

/**
 * The response's tool policy as the gateway records it in the trace's `context.metadata`
 * (adapters/gateway/ResponseEvent.ts: `policy_verdict` and `policy {mode, violations, warnings}`).
 */
const TracePolicy = Schema.Struct({
  policy_verdict: PolicyVerdictSchema,
  policy: Schema.Struct({
    mode: Schema.String,
    violations: Schema.Array(PolicyFindingSchema),
    warnings: Schema.Array(PolicyFindingSchema)
  })
})
const decodeTracePolicy = Schema.decodeUnknownOption(TracePolicy)

/** The policy violation of a response, from its trace's metadata; undefined without a policy or when it passed. */
export const responsePolicyViolation = (
  agentId: string,
  checkpointId: string,
  metadata: unknown
): PolicyViolation | undefined =>
  Option.match(decodeTracePolicy(metadata), {
    onNone: () => undefined,
    onSome: ({ policy, policy_verdict }) =>
      isPolicyViolation(policy_verdict)
        ? {
            agentId,
            checkpointId,
            phase: "response",
            mode: policy.mode,
            evaluation: { verdict: policy_verdict, violations: policy.violations, warnings: policy.warnings }
          }
        : undefined
  })

// ---- gateway refusals ------------------------------------------------------------------------

export interface GatewayBlock {
  readonly agentId: string
  readonly sessionId: string | null
  readonly provider: string
  readonly rule: "enforce" | "policy" | "containment" | "transaction" | "tool_changed" | "approval"
  readonly reason: string
  /** The blocked response's checkpoint (rule `enforce`). */
  readonly checkpointId: string | null
}

export const blockedData = (block: GatewayBlock) => ({
  agent_id: block.agentId,
  session_id: block.sessionId,
  provider: block.provider,
  rule: block.rule,
  reason: block.reason,
  checkpoint_id: block.checkpointId
})

/** Source: the checkpoint id of an enforce block, else `source` (a fresh UUID: each 403 is its own occurrence). */
export const blockedEvent = (
  block: GatewayBlock,
  source: string,
  orgId: string | null,
  at: Date
): Occurrence<"enforcement.blocked"> => ({
  type: "enforcement.blocked",
  source: block.checkpointId ?? source,
  org_id: orgId,
  agent_id: block.agentId,
  created_at: at,
  data: blockedData(block)
})

/** An MCP server's tool listed with another definition than its pin (issue 28, docs/mcp.md). */
export interface ToolChanged {
  readonly agentId: string
  readonly orgId: string
  readonly serverId: string
  readonly tool: string
  readonly previousHash: string
  readonly hash: string
}

/** Source: server, tool and new hash: each change is one occurrence, however many gateways or agents see it. */
export const toolChangedEvent = (change: ToolChanged, at: Date): Occurrence<"mcp.tool_changed"> => ({
  type: "mcp.tool_changed",
  source: `${change.serverId}/${change.tool}/${change.hash}`,
  org_id: change.orgId,
  agent_id: change.agentId,
  created_at: at,
  data: {
    server_id: change.serverId,
    tool_name: change.tool,
    previous_hash: change.previousHash,
    definition_hash: change.hash,
    agent_id: change.agentId
  }
})

/** The `reason` of a policy block: the tools the policy forbids, never the request itself. */
export const policyBlockReason = (evaluation: Pick<PolicyEvaluation, "violations">): string =>
  `forbidden tools: ${[...new Set(evaluation.violations.map((v) => v.tool))].join(", ")}`

/** The `reason` of a policy block of a request whose tools cannot be read. */
export const UNREADABLE_REQUEST_REASON = "request body unreadable (not JSON) and the policy does not fail open"

// ---- teams -----------------------------------------------------------------------------------

export interface TeamRef {
  readonly team_id: string
  readonly org_id: string
  readonly name: string
}

/** Source: the team id (a team is created once). */
export const teamCreatedEvent = (
  team: TeamRef,
  agentIds: ReadonlyArray<string>,
  at: Date
): Occurrence<"team.created"> => ({
  type: "team.created",
  source: team.team_id,
  org_id: team.org_id,
  created_at: at,
  data: {
    team_id: team.team_id,
    org_id: team.org_id,
    name: team.name,
    member_count: agentIds.length,
    agent_ids: [...agentIds]
  }
})

/** Source: the team id (archiving is final: it happens once). */
export const teamArchivedEvent = (team: TeamRef, at: Date): Occurrence<"team.archived"> => ({
  type: "team.archived",
  source: team.team_id,
  org_id: team.org_id,
  created_at: at,
  data: { team_id: team.team_id, org_id: team.org_id, name: team.name }
})

export interface RosterChangeRecord {
  readonly team_id: string
  readonly org_id: string
  /** The roster change's id (one per agent added or removed). */
  readonly change_id: number
  readonly agent_id: string
  readonly actor: string
  /** The team's member count after the change. */
  readonly member_count: number
}

/** Source: the roster change id. One event per agent; `agent_id` set, so the agent's own endpoints get it too. */
export const teamMemberEvent = (
  type: "team.member_added" | "team.member_removed",
  change: RosterChangeRecord,
  at: Date
): Occurrence<"team.member_added" | "team.member_removed"> => ({
  type,
  source: `${change.team_id}/${change.change_id}`,
  org_id: change.org_id,
  agent_id: change.agent_id,
  created_at: at,
  data: {
    team_id: change.team_id,
    agent_id: change.agent_id,
    actor_id: change.actor,
    member_count: change.member_count
  }
})

export interface TeamCardChange {
  readonly team_id: string
  readonly org_id: string
  /** The new version's card id (one per version). */
  readonly card_id: string
  readonly card_source: string
  readonly actor: string
}

/** Source: the version's card id. */
export const teamCardUpdatedEvent = (change: TeamCardChange, at: Date): Occurrence<"team.card_updated"> => ({
  type: "team.card_updated",
  source: change.card_id,
  org_id: change.org_id,
  created_at: at,
  data: { team_id: change.team_id, card_id: change.card_id, card_source: change.card_source, actor_id: change.actor }
})

// ---- reputation ------------------------------------------------------------------------------

/** What the reputation events need of a computed score. */
export interface ScoredReputation {
  readonly agent_id: string
  readonly score: number
  readonly grade: Grade
  readonly computed_at: string
  readonly components: ReadonlyArray<{ readonly key: string; readonly score: number }>
}

/** Source: the agent and the computation's time (a recomputation retried at the same time is the same occurrence). */
export const reputationScoreEvent = (
  reputation: ScoredReputation,
  notifiedScore: number,
  orgId: string | null,
  at: Date
): Occurrence<"reputation.score_changed"> => ({
  type: "reputation.score_changed",
  source: `${reputation.agent_id}@${reputation.computed_at}`,
  org_id: orgId,
  agent_id: reputation.agent_id,
  created_at: at,
  data: {
    agent_id: reputation.agent_id,
    score_before: notifiedScore,
    score_after: reputation.score,
    grade: reputation.grade,
    components: Object.fromEntries(reputation.components.map((c) => [c.key, c.score]))
  }
})

export const reputationGradeEvent = (
  reputation: ScoredReputation,
  gradeBefore: Grade,
  orgId: string | null,
  at: Date
): Occurrence<"reputation.grade_changed"> => ({
  type: "reputation.grade_changed",
  source: `${reputation.agent_id}@${reputation.computed_at}`,
  org_id: orgId,
  agent_id: reputation.agent_id,
  created_at: at,
  data: {
    agent_id: reputation.agent_id,
    grade_before: gradeBefore,
    grade_after: reputation.grade,
    score: reputation.score
  }
})

// ---- team reputation -----------------------------------------------------------------------

export interface TeamScoreChange {
  readonly team_id: string
  readonly org_id: string
  /** The computation's assessment id (one per computation). */
  readonly assessment_id: string
  /** The last NOTIFIED score, not the previous one: a slow slide alerts too. */
  readonly score_before: number
  readonly score_after: number
  readonly grade: string
  readonly components: ReadonlyArray<{ readonly key: string; readonly score: number }>
}

/** Source: the computation's assessment id. */
export const teamScoreChangedEvent = (
  change: TeamScoreChange,
  at: Date
): Occurrence<"team_reputation.score_changed"> => ({
  type: "team_reputation.score_changed",
  source: change.assessment_id,
  org_id: change.org_id,
  created_at: at,
  data: {
    team_id: change.team_id,
    score_before: change.score_before,
    score_after: change.score_after,
    grade: change.grade,
    components: Object.fromEntries(change.components.map((c) => [c.key, c.score]))
  }
})

export interface TeamGradeChange {
  readonly team_id: string
  readonly org_id: string
  readonly assessment_id: string
  /** The last notified grade. */
  readonly grade_before: string
  readonly grade_after: string
  readonly score: number
}

/** Source: the computation's assessment id. */
export const teamGradeChangedEvent = (
  change: TeamGradeChange,
  at: Date
): Occurrence<"team_reputation.grade_changed"> => ({
  type: "team_reputation.grade_changed",
  source: change.assessment_id,
  org_id: change.org_id,
  created_at: at,
  data: {
    team_id: change.team_id,
    grade_before: change.grade_before,
    grade_after: change.grade_after,
    score: change.score
  }
})

export interface TeamQuotaNotice {
  readonly org_id: string
  /** `YYYY-MM`: each notice is sent once per organization and month. */
  readonly period: string
  readonly usage_percent: number
  readonly computations_used: number
  readonly computations_included: number
}

/** Source: the organization and the month. */
export const teamQuotaEvent = (
  type: "quota.team_reputation_warning" | "quota.team_reputation_exceeded",
  notice: TeamQuotaNotice,
  at: Date
): Occurrence<"quota.team_reputation_warning" | "quota.team_reputation_exceeded"> => ({
  type,
  source: `${notice.org_id}/${notice.period}`,
  org_id: notice.org_id,
  created_at: at,
  data: {
    org_id: notice.org_id,
    usage_percent: notice.usage_percent,
    computations_used: notice.computations_used,
    computations_included: notice.computations_included
  }
})
