/**
 * What each catalogue event (core/schema/WebhookEvents.ts) says, built in one place from what the
 * producer holds: the actor's step (verdicts, drift, a response's tool policy), the containment
 * write path, the organization conscience API, the proof relay and the gateway (its request
 * policy and its 403s). Each builder returns the occurrence `newEnvelope` (core/Events.ts) turns
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
import type { IntegrityCheckpoint } from "./schema/Checkpoint.js"
import { PolicyFinding as PolicyFindingSchema, PolicyVerdict as PolicyVerdictSchema } from "./schema/Policy.js"
import type { ContainmentAction } from "./schema/Containment.js"
import type { DriftAlert } from "./schema/Drift.js"
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
}

export const containmentData = (entry: ContainmentChangeRecord, orgId: string | null) => ({
  agent_id: entry.agent_id,
  org_id: orgId,
  action: entry.action,
  actor: entry.actor,
  reason: entry.reason,
  previous_status: entry.previous_status,
  new_status: entry.new_status
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
  readonly rule: "enforce" | "policy" | "containment"
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

/** The `reason` of a policy block: the tools the policy forbids, never the request itself. */
export const policyBlockReason = (evaluation: Pick<PolicyEvaluation, "violations">): string =>
  `forbidden tools: ${[...new Set(evaluation.violations.map((v) => v.tool))].join(", ")}`

/** The `reason` of a policy block of a request whose tools cannot be read. */
export const UNREADABLE_REQUEST_REASON = "request body unreadable (not JSON) and the policy does not fail open"
