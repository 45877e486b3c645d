/**
 * The actor's step and the catalogue, without I/O: which events a step writes to its outbox
 * (`verdict.*` but nothing for clear, `drift.detected`, `policy.violation` from the response's tool
 * calls), with ids derived from the checkpoint and alert ids, the agent's organization, data the
 * catalogue's schema decodes and no content; and the containment decision carrying what its
 * enforcement record needs (its `agent.paused` is written when the decision is applied).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import { emptyLogState } from "../../core/Attestation.js"
import { emptyViolationStreak } from "../../core/Containment.js"
import { emptyAapDriftState } from "../../core/DriftAap.js"
import { type AipDriftState, emptyAipDriftState } from "../../core/DriftAip.js"
import { eventId } from "../../core/Events.js"
import { resolveConscience } from "../../core/ConscienceResolution.js"
import { WEBHOOK_EVENT_TYPES, WebhookEnvelope, type WebhookEventType } from "../../core/schema/WebhookEvents.js"
import { generateSigningKey } from "../../core/Signing.js"
import { agentContext, type ContextSettings } from "../../streams/AgentContext.js"
import { type AgentActorState, attestEvent } from "../../streams/AttestEvent.js"
import { DECISION_OUTBOX, type DecisionPayload } from "../../streams/Decisions.js"
import { EVENT_OUTBOX } from "../../adapters/store/EventOutbox.js"
import { gatewayEvent, violation } from "../support/Events.js"

const key = generateSigningKey()
const agentId = "agt-events"
const ORG = "org-events"

const actorWith = (settings: Partial<ContextSettings> = {}): AgentActorState => ({
  agentId,
  log: emptyLogState(agentId),
  context: agentContext(
    undefined,
    resolveConscience({ org: undefined, agentValues: [] }),
    { autoContainThreshold: undefined, contained: false, orgId: ORG, ...settings },
    0
  ),
  aap: emptyAapDriftState,
  streak: emptyViolationStreak,
  contained: false
})

const review = { ...violation, severity: "medium" as const, category: "undeclared_intent" as const }

/** Runs events through the step in order; returns each step's outbox. */
const run = (actor: AgentActorState, events: ReadonlyArray<ReturnType<typeof gatewayEvent>>) => {
  let state = actor
  let session: AipDriftState = emptyAipDriftState
  return events.map((event) => {
    const step = attestEvent(state, session, event, {
      key,
      logOrigin: "candor.test",
      now: new Date(),
      subjectPrefix: "candor"
    })
    state = step.actor
    session = step.session
    return { event, outbox: step.input.outbox }
  })
}

/** The step's events, each checked against the envelope and its type's data schema. */
const eventsOf = (outbox: ReadonlyArray<{ readonly kind: string; readonly payload: unknown }>) =>
  outbox
    .filter((draft) => draft.kind === EVENT_OUTBOX)
    .map((draft) => {
      const envelope = Schema.decodeUnknownSync(WebhookEnvelope)(draft.payload)
      const type = envelope.type as WebhookEventType
      Schema.decodeUnknownSync(WEBHOOK_EVENT_TYPES[type].data as Schema.Schema<unknown>)(envelope.data)
      return envelope
    })

describe("catalogue events of the actor's step", () => {
  it("a verdict event for review_needed and boundary_violation, none for clear; drift.detected with the alert", () => {
    const actor = actorWith({ autoContainThreshold: 3 })
    const events = [
      gatewayEvent(agentId),
      gatewayEvent(agentId, { concerns: [review] }),
      ...Array.from({ length: 3 }, () => gatewayEvent(agentId, { concerns: [violation] }))
    ]
    const steps = run(actor, events)
    const types = steps.map(({ outbox }) => eventsOf(outbox).map((e) => e.type))
    expect(types[0]).toEqual([])
    expect(types[1]).toEqual(["verdict.review_needed"])
    expect(types[2]).toEqual(["verdict.boundary_violation"])
    // The third violation in a row (four non-clear checks): a drift alert. The pause reaches the
    // threshold too, but is announced when applied (services/Containment.ts), not here.
    expect(types.slice(3).flat()).toContain("drift.detected")
    const all = steps.flatMap(({ outbox }) => eventsOf(outbox))
    expect(all.every((e) => e.org_id === ORG && e.agent_id === agentId)).toBe(true)
    expect(all.map((e) => e.type)).not.toContain("agent.paused")

    const drift = all.find((e) => e.type === "drift.detected")!
    const alert = drift.data as { alert_id: string; agent_id: string }
    expect(drift.id).toBe(eventId("drift.detected", alert.alert_id))
    expect(alert.agent_id).toBe(agentId)
    const decisions = steps[4]!.outbox.filter((draft) => draft.kind === DECISION_OUTBOX)
    expect(decisions.map((d) => (d.payload as DecisionPayload).agent_state?.containment)).toContainEqual(
      expect.objectContaining({ status: "paused", contained_by: "system" })
    )
  })

  it("a tool result's violations move neither the violation streak, AIP drift nor auto-containment (issue 28)", () => {
    const read = () => {
      const event = gatewayEvent(agentId, { concerns: [violation] })
      return {
        ...event,
        checkpoint: {
          ...event.checkpoint,
          analysis_metadata: { ...event.checkpoint.analysis_metadata, analysis_scope: "tool_result" as const }
        }
      }
    }
    const steps = run(actorWith({ autoContainThreshold: 2 }), [read(), read(), read(), read()])
    const all = steps.flatMap(({ outbox }) => eventsOf(outbox)).map((e) => e.type)
    // Recorded: each is a certified boundary violation.
    expect(all).toEqual(Array.from({ length: 4 }, () => "verdict.boundary_violation"))
    // Counted, two in a row would pause the agent and four would raise a drift alert.
    expect(steps.flatMap(({ outbox }) => outbox.filter((draft) => draft.kind === DECISION_OUTBOX))).toEqual([])
  })

  it("a verdict's data is the certificate's view: no evidence, no reasoning summary; its id is the checkpoint's", () => {
    const base = gatewayEvent(agentId, { concerns: [violation] })
    const event = { ...base, checkpoint: { ...base.checkpoint, reasoning_summary: "SUMMARY-NOT-PUBLISHED" } }
    const [step] = run(actorWith(), [event])
    const [verdict] = eventsOf(step!.outbox)
    expect(verdict).toEqual({
      id: eventId("verdict.boundary_violation", event.checkpoint.checkpoint_id),
      type: "verdict.boundary_violation",
      created_at: expect.any(String),
      org_id: ORG,
      agent_id: agentId,
      data: {
        checkpoint_id: event.checkpoint.checkpoint_id,
        certificate_id: `cert-${event.checkpoint.checkpoint_id.slice(3)}`,
        agent_id: agentId,
        session_id: event.session_id,
        verdict: "boundary_violation",
        timestamp: event.checkpoint.timestamp,
        concerns: [{ category: violation.category, severity: violation.severity, description: violation.description }]
      }
    })
    const drafted = JSON.stringify(eventsOf(step!.outbox))
    expect(drafted).not.toContain(violation.evidence)
    expect(drafted).not.toContain("SUMMARY-NOT-PUBLISHED")
    // Replayed (a redelivered event), the step names the same occurrence.
    const [again] = run(actorWith(), [event])
    expect(eventsOf(again!.outbox)[0]!.id).toBe(verdict!.id)
  })

  it("policy.violation for a response whose tool calls broke the policy, with its checkpoint; none when it passed", () => {
    const withPolicy = (verdict: "pass" | "warn" | "fail") => {
      const event = gatewayEvent(agentId, { tool: "shell_exec" })
      const finding = { type: "forbidden", tool: "shell_exec", reason: "no shell access", severity: "high" }
      return {
        ...event,
        trace: {
          ...event.trace,
          context: {
            ...event.trace.context,
            metadata: {
              provider: "anthropic",
              policy_verdict: verdict,
              policy: {
                mode: "warn",
                request_verdict: "pass",
                tools_evaluated: 1,
                violations: verdict === "fail" ? [finding] : [],
                warnings: verdict === "warn" ? [{ ...finding, severity: "low" }] : []
              }
            }
          }
        }
      }
    }
    const failed = withPolicy("fail")
    const steps = run(actorWith({ orgId: null }), [failed, withPolicy("warn"), withPolicy("pass")])
    const [fail, warn, pass] = steps.map(({ outbox }) => eventsOf(outbox).filter((e) => e.type === "policy.violation"))
    expect(fail).toEqual([
      {
        id: eventId("policy.violation", failed.checkpoint.checkpoint_id),
        type: "policy.violation",
        created_at: expect.any(String),
        org_id: null,
        agent_id: agentId,
        data: {
          agent_id: agentId,
          checkpoint_id: failed.checkpoint.checkpoint_id,
          phase: "response",
          verdict: "fail",
          mode: "warn",
          violations: [{ type: "forbidden", tool: "shell_exec", reason: "no shell access", severity: "high" }],
          warnings: []
        }
      }
    ])
    expect(warn!.map((e) => (e.data as { verdict: string }).verdict)).toEqual(["warn"])
    expect(pass).toEqual([])
  })

  it("no pause decision for an agent already contained", () => {
    const violations = Array.from({ length: 3 }, () => gatewayEvent(agentId, { concerns: [violation] }))
    const free = run(actorWith({ autoContainThreshold: 3 }), violations)
    const decisions = free[2]!.outbox
      .filter((draft) => draft.kind === DECISION_OUTBOX)
      .map((d) => d.payload as DecisionPayload)
    const pause = decisions.find((d) => d.agent_state !== undefined)
    expect(pause?.agent_state).toMatchObject({
      agent_id: agentId,
      checkpoint_id: violations[2]!.checkpoint.checkpoint_id,
      session_id: violations[2]!.session_id,
      violations: 3,
      containment: { status: "paused" }
    })
    const contained = run(actorWith({ autoContainThreshold: 3, contained: true }), violations)
    const paused = contained
      .flatMap(({ outbox }) => outbox)
      .filter((d) => (d.payload as DecisionPayload).agent_state !== undefined)
    expect(paused).toEqual([])
  })
})
