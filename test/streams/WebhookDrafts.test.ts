/**
 * The actor's step and webhooks, without I/O: which registration gets which event, under which
 * name, once; what a verdict body holds (no evidence, no thinking); and the containment decision
 * carrying what its enforcement record needs (its `agent.paused` is drafted when the decision is applied).
 */
import { describe, expect, it } from "@effect/vitest"
import { emptyLogState } from "../../core/Attestation.js"
import { emptyViolationStreak } from "../../core/Containment.js"
import { emptyAapDriftState } from "../../core/DriftAap.js"
import { type AipDriftState, emptyAipDriftState } from "../../core/DriftAip.js"
import { DEFAULT_CONSCIENCE_VALUES } from "../../core/schema/Conscience.js"
import { generateSigningKey } from "../../core/Signing.js"
import { agentContext, type ContextSettings } from "../../streams/AgentContext.js"
import { type AgentActorState, attestEvent } from "../../streams/AttestEvent.js"
import { DECISION_OUTBOX, type DecisionPayload } from "../../streams/Decisions.js"
import { WEBHOOK_OUTBOX, type WebhookPayload, type WebhookTarget } from "../../streams/Webhooks.js"
import { gatewayEvent, violation } from "../support/Events.js"

const key = generateSigningKey()
const agentId = "agt-hooks"
const target = (registration_id: string, events: ReadonlyArray<string>): WebhookTarget => ({
  registration_id,
  callback_url: `https://hooks.example/${registration_id}`,
  events
})
const targets = [
  target("reg-verdicts", ["verdict", "drift_alert"]),
  target("reg-paused", ["agent.paused"]),
  target("reg-both", ["containment", "agent.paused"])
]

const actorWith = (settings: ContextSettings): AgentActorState => ({
  agentId,
  log: emptyLogState(agentId),
  context: agentContext(undefined, DEFAULT_CONSCIENCE_VALUES, settings, 0),
  aap: emptyAapDriftState,
  streak: emptyViolationStreak,
  contained: false
})

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

const webhooksOf = (outbox: ReadonlyArray<{ readonly kind: string; readonly payload: unknown }>) =>
  outbox.filter((draft) => draft.kind === WEBHOOK_OUTBOX).map((draft) => draft.payload as WebhookPayload)

describe("webhook drafts of the actor's step", () => {
  it("sends each registration what it subscribed to, once, under its own name", () => {
    const actor = actorWith({ autoContainThreshold: 3, contained: false, webhooks: targets })
    const events = [
      gatewayEvent(agentId),
      ...Array.from({ length: 3 }, () => gatewayEvent(agentId, { concerns: [violation] }))
    ]
    const steps = run(actor, events)
    const sent = steps.map(({ outbox }) => webhooksOf(outbox).map((p) => [p.registration_id, p.event]))
    expect(sent[0]).toEqual([["reg-verdicts", "verdict"]])
    expect(sent[1]).toEqual([["reg-verdicts", "verdict"]])
    expect(sent[2]).toEqual([["reg-verdicts", "verdict"]])
    // The third violation in a row: a drift alert (three sustained checks). The pause reaches the
    // threshold too, but is announced by the decision relay when applied (streams/Containment.ts), not here.
    expect(sent[3]).toEqual([
      ["reg-verdicts", "verdict"],
      ["reg-verdicts", "drift_alert"]
    ])
    const last = webhooksOf(steps[3]!.outbox)
    expect(last.every((p) => p.url === `https://hooks.example/${p.registration_id}`)).toBe(true)
    expect(last.every((p) => p.body.agent_id === agentId && p.body.event === p.event)).toBe(true)
    expect(last[1]!.body.data).toMatchObject({ agent_id: agentId, sustained_checks: 3 })
    const decisions = steps[3]!.outbox.filter((draft) => draft.kind === DECISION_OUTBOX)
    expect(decisions.map((d) => (d.payload as DecisionPayload).agent_state?.containment)).toContainEqual(
      expect.objectContaining({ status: "paused", contained_by: "system" })
    )
  })

  it("summarises a verdict without the evidence, which quotes the thinking", () => {
    const event = gatewayEvent(agentId, { concerns: [violation] })
    const [step] = run(actorWith({ autoContainThreshold: undefined, contained: false, webhooks: targets }), [event])
    const [verdict] = webhooksOf(step!.outbox)
    expect(verdict!.body).toMatchObject({
      id: `verdict:${event.checkpoint.checkpoint_id}`,
      event: "verdict",
      data: {
        checkpoint_id: event.checkpoint.checkpoint_id,
        certificate_id: `cert-${event.checkpoint.checkpoint_id.slice(3)}`,
        verdict: "boundary_violation",
        concerns: [
          {
            category: violation.category,
            severity: violation.severity,
            description: violation.description,
            relevant_conscience_value: null
          }
        ]
      }
    })
    expect(JSON.stringify(step!.outbox)).not.toContain(violation.evidence)
  })

  it("drafts nothing without registrations, and no pause for an agent already contained", () => {
    const violations = Array.from({ length: 3 }, () => gatewayEvent(agentId, { concerns: [violation] }))
    const none = run(actorWith({ autoContainThreshold: 3, contained: false, webhooks: [] }), violations)
    expect(none.flatMap(({ outbox }) => webhooksOf(outbox))).toEqual([])
    const decisions = none[2]!.outbox
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
    const contained = run(actorWith({ autoContainThreshold: 3, contained: true, webhooks: targets }), violations)
    const paused = contained
      .flatMap(({ outbox }) => outbox)
      .filter((d) => (d.payload as DecisionPayload).agent_state !== undefined)
    expect(paused).toEqual([])
    expect(contained.flatMap(({ outbox }) => webhooksOf(outbox)).map((p) => p.event)).not.toContain("agent.paused")
  })
})
