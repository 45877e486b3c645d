/**
 * Every event builder's output is what the catalogue says its type carries: its data decodes with
 * the type's schema (with excess properties refused, so a field the catalogue does not declare is
 * not published by accident), its envelope with the envelope schema, and its id follows the type's
 * source rule. No builder lets content through (evidence, reasoning summaries).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import {
  blockedEvent,
  conscienceEvent,
  containmentEvent,
  containmentEventType,
  driftEvent,
  policyBlockReason,
  policyViolationEvent,
  proofFailedEvent,
  responsePolicyViolation,
  verdictEvent
} from "../../core/EventData.js"
import { type EventOccurrence, eventId, newEnvelope } from "../../core/Events.js"
import type { IntegrityCheckpoint } from "../../core/schema/Checkpoint.js"
import type { DriftAlert } from "../../core/schema/Drift.js"
import { WEBHOOK_EVENT_TYPES, WebhookEnvelope } from "../../core/schema/WebhookEvents.js"
import { gatewayEvent, violation } from "../support/Events.js"

const at = new Date("2026-11-01T12:00:00.000Z")
const agentId = "agt-data"
const checkpointId = "ic-00000000-0000-4000-8000-000000000001"

/** The envelope of `occurrence`, its data decoded strictly with its type's schema; the data returned. */
const checked = (occurrence: EventOccurrence | undefined) => {
  expect(occurrence).toBeDefined()
  const envelope = newEnvelope(occurrence!)
  Schema.decodeUnknownSync(WebhookEnvelope)(envelope)
  expect(envelope.id).toBe(eventId(occurrence!.type, occurrence!.source))
  const schema = WEBHOOK_EVENT_TYPES[occurrence!.type].data as Schema.Schema<unknown>
  Schema.decodeUnknownSync(schema, { onExcessProperty: "error" })(envelope.data)
  return envelope
}

const checkpoint = (verdict: IntegrityCheckpoint["verdict"]): IntegrityCheckpoint => ({
  ...gatewayEvent(agentId, { concerns: [violation] }).checkpoint,
  checkpoint_id: checkpointId,
  verdict,
  reasoning_summary: "SUMMARY-NOT-PUBLISHED"
})

describe("event data builders", () => {
  it("verdicts: boundary_violation and review_needed, none for clear; no evidence or summary", () => {
    for (const verdict of ["boundary_violation", "review_needed"] as const) {
      const envelope = checked(verdictEvent(checkpoint(verdict), "cert-1", "org-1", at))
      expect(envelope).toMatchObject({ type: `verdict.${verdict}`, org_id: "org-1", agent_id: agentId })
      expect(envelope.id).toBe(eventId(`verdict.${verdict}`, checkpointId))
      expect(JSON.stringify(envelope)).not.toContain(violation.evidence)
      expect(JSON.stringify(envelope)).not.toContain("SUMMARY-NOT-PUBLISHED")
    }
    expect(verdictEvent(checkpoint("clear"), "cert-1", null, at)).toBeUndefined()
  })

  it("drift alerts (AIP and AAP), sourced by the alert id", () => {
    const alert: DriftAlert = {
      alert_id: "drift-1",
      agent_id: agentId,
      session_id: "ses-1",
      checkpoint_ids: [checkpointId],
      trace_ids: ["tr-1"],
      sustained_checks: 3,
      severity: "medium",
      drift_direction: "value_drift",
      message: "3 consecutive traces below similarity",
      detection_timestamp: at.toISOString(),
      integrity_similarity: 0.5
    }
    const envelope = checked(driftEvent(alert, null, at))
    expect(envelope).toMatchObject({ type: "drift.detected", id: eventId("drift.detected", "drift-1"), org_id: null })
    expect(envelope.data).toEqual(alert)
  })

  it("containment: each action's type, the log id as source, the same data for manual and automatic", () => {
    const types = (["pause", "auto_pause", "resume", "reactivate", "kill"] as const).map((action) => {
      const envelope = checked(
        containmentEvent(
          {
            id: `ctl-${action}`,
            agent_id: agentId,
            action,
            actor: action === "auto_pause" ? "system" : "user-1",
            reason: null,
            previous_status: "active",
            new_status: "paused"
          },
          "org-1",
          at
        )
      )
      expect(envelope.id).toBe(eventId(containmentEventType(action), `ctl-${action}`))
      return envelope.type
    })
    expect(types).toEqual(["agent.paused", "agent.paused", "agent.resumed", "agent.resumed", "agent.killed"])
  })

  it("conscience.values_updated: one organization event, no agent, sourced by the log entry", () => {
    const envelope = checked(
      conscienceEvent({ org_id: "org-1", entry_id: 42, action: "create", value_id: "cv-1", actor: "user-1" }, at)
    )
    expect(envelope).toEqual({
      id: eventId("conscience.values_updated", "42"),
      type: "conscience.values_updated",
      created_at: at.toISOString(),
      org_id: "org-1",
      data: { org_id: "org-1", action: "create", value_id: "cv-1", actor: "user-1" }
    })
  })

  it("proof.failed, sourced by the checkpoint", () => {
    const envelope = checked(
      proofFailedEvent(
        { checkpoint_id: checkpointId, agent_id: agentId, error: "failed: worker crashed", attempts: 3 },
        null,
        at
      )
    )
    expect(envelope.id).toBe(eventId("proof.failed", checkpointId))
  })

  it("policy.violation of a request (fresh source) and of a response (its checkpoint); none when it passed", () => {
    const finding = {
      type: "unmapped_denied" as const,
      tool: "new_tool",
      reason: "unmapped",
      severity: "low" as const,
      grace_until: at.toISOString()
    }
    const evaluation = { verdict: "warn" as const, violations: [], warnings: [finding] }
    const request = checked(
      policyViolationEvent({ agentId, checkpointId: null, phase: "request", mode: "warn", evaluation }, "u-1", null, at)
    )
    expect(request.id).toBe(eventId("policy.violation", "u-1"))
    expect(request.data).toMatchObject({ warnings: [{ tool: "new_tool" }], checkpoint_id: null })
    const response = responsePolicyViolation(agentId, checkpointId, {
      policy_verdict: "fail",
      policy: { mode: "enforce", violations: [{ ...finding, severity: "high" }], warnings: [] }
    })
    expect(checked(policyViolationEvent(response!, "unused", "org-1", at)).id).toBe(
      eventId("policy.violation", checkpointId)
    )
    expect(
      policyViolationEvent(
        {
          agentId,
          checkpointId: null,
          phase: "request",
          mode: "enforce",
          evaluation: { ...evaluation, verdict: "pass" }
        },
        "u-2",
        null,
        at
      )
    ).toBeUndefined()
    expect(responsePolicyViolation(agentId, checkpointId, { provider: "anthropic" })).toBeUndefined()
  })

  it("enforcement.blocked for each rule; an enforce block is sourced by its checkpoint", () => {
    for (const rule of ["containment", "policy"] as const) {
      const envelope = checked(
        blockedEvent(
          {
            agentId,
            sessionId: "ses-1",
            provider: "anthropic",
            rule,
            reason: rule === "policy" ? policyBlockReason({ violations: [] }) : "agent_paused",
            checkpointId: null
          },
          "u-3",
          null,
          at
        )
      )
      expect(envelope.id).toBe(eventId("enforcement.blocked", "u-3"))
    }
    const enforce = checked(
      blockedEvent(
        {
          agentId,
          sessionId: null,
          provider: "openai",
          rule: "enforce",
          reason: "boundary_violation",
          checkpointId
        },
        "unused",
        null,
        at
      )
    )
    expect(enforce.id).toBe(eventId("enforcement.blocked", checkpointId))
  })
})
