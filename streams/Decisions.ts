/**
 * Decisions the actors publish after commit (drift alerts, containment), written to the outbox in
 * the commit's transaction and sent by the decision relay: to `<prefix>.alerts.<agent_id>` or
 * `<prefix>.containment.<agent_id>`, where security teams subscribe, and, for containment, through
 * the same transition as a manual pause (services/Containment.ts: stored settings, containment and
 * governance logs, `agent.paused` webhooks, with an enforcement record) and into the agent state every
 * gateway watches.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { Bus } from "../adapters/bus/Bus.js"
import { decisionSubject } from "../adapters/bus/Subjects.js"
import { SYSTEM_ACTOR } from "../adapters/auth/Principal.js"
import type { OutboxDraft, OutboxItem } from "../adapters/store/Store.js"
import { ContainmentState } from "../core/schema/Containment.js"
import { changeContainment, publishContainment } from "../services/Containment.js"
import { decodePayload } from "./OutboxRelay.js"

export const DECISION_OUTBOX = "decision"
export const PROVER_OUTBOX = "prover"

/** A containment decided by the actor, with what triggered it (for the enforcement record). */
export interface ContainmentDecision {
  readonly containment: ContainmentState
  /** The violation that reached the threshold: with the action, the record's idempotency key. */
  readonly checkpoint_id: string | null
  readonly session_id: string | null
  readonly violations: number
}

const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

/** The outbox payload of the `decision` kind. */
export const DecisionPayload = Schema.Struct({
  subject: Schema.String,
  message: Schema.Unknown,
  /** A patch of the agent's gateway settings (containment), applied with the publish. */
  agent_state: optional(
    Schema.Struct({
      agent_id: Schema.String,
      /** What the actor decided (its reason is kept; the time and actor are those of the change). */
      containment: ContainmentState,
      // Absent in items written before enforcement records were kept.
      checkpoint_id: optional(Schema.NullOr(Schema.String)),
      session_id: optional(Schema.NullOr(Schema.String)),
      violations: optional(Schema.Number)
    })
  )
})
export interface DecisionPayload extends Schema.Schema.Type<typeof DecisionPayload> {}

const decodeDecisionPayload = decodePayload(DecisionPayload)

export const decision = (
  prefix: string,
  topic: "alerts" | "containment",
  agentId: string,
  message: unknown,
  state?: ContainmentDecision
): OutboxDraft => ({
  kind: DECISION_OUTBOX,
  payload: {
    subject: decisionSubject(prefix, topic, agentId),
    message,
    ...(state !== undefined ? { agent_state: { agent_id: agentId, ...state } } : {})
  } satisfies DecisionPayload
})

/**
 * The decision relay's handler. Handling an item twice (a crash before it was completed) is
 * harmless: the enforcement record makes the pause apply once (an admin's resume in between is not
 * undone), the gateways get what the store holds now, and the bus deduplicates the publish on the
 * item's id. A pause the transition refuses (the agent is already paused, or killed) changes nothing
 * and is not published: auto-containment never overrides a person's decision.
 */
export const applyDecision = (item: OutboxItem) =>
  Effect.gen(function* () {
    const payload = yield* decodeDecisionPayload(item)
    const state = payload.agent_state
    let message = payload.message
    if (state !== undefined) {
      const checkpointId = state.checkpoint_id ?? null
      const outcome = yield* changeContainment({
        agentId: state.agent_id,
        action: "auto_pause",
        actor: SYSTEM_ACTOR,
        reason: state.containment.reason,
        metadata: { checkpoint_id: checkpointId, violations: state.violations ?? null },
        trigger: {
          checkpoint_id: checkpointId,
          session_id: state.session_id ?? null,
          body: { trigger: "auto_containment", violations: state.violations ?? null }
        }
      })
      yield* publishContainment(state.agent_id, outcome.containment)
      if (outcome._tag === "Refused") return
      // The containment as stored (its time is the change's, not the actor's step's).
      if (outcome._tag === "Changed") message = { agent_id: state.agent_id, ...outcome.containment }
    }
    const bus = yield* Bus
    yield* bus.publish(payload.subject, message, { msgId: item.id })
  })
