/**
 * Decisions the actors publish after commit (drift alerts, containment), written to the outbox in
 * the commit's transaction and sent by the decision relay: to `<prefix>.alerts.<agent_id>` or
 * `<prefix>.containment.<agent_id>`, where security teams subscribe, and, for containment, into
 * the agent's stored settings (with an enforcement record) and the agent state every gateway watches.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { Bus } from "../adapters/bus/Bus.js"
import { AgentState } from "../adapters/bus/AgentState.js"
import { decisionSubject } from "../adapters/bus/Subjects.js"
import { type OutboxDraft, type OutboxItem, Store } from "../adapters/store/Store.js"
import type { ContainmentRecord } from "../core/Containment.js"
import { decodePayload } from "./OutboxRelay.js"

export const DECISION_OUTBOX = "decision"
export const PROVER_OUTBOX = "prover"

/** The enforcement record of an automatic pause. */
export const PAUSE_ACTION = "pause"

/** A containment decided by the actor, with what triggered it (for the enforcement record). */
export interface ContainmentDecision {
  readonly containment: ContainmentRecord
  /** The violation that reached the threshold: with the action, the record's idempotency key. */
  readonly checkpoint_id: string | null
  readonly session_id: string | null
  readonly violations: number
}

const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

/** core/Containment.ts's `ContainmentRecord`, as the outbox stores it. */
const StoredContainment: Schema.Schema<ContainmentRecord> = Schema.Struct({
  status: Schema.Literal("paused"),
  reason: Schema.String,
  since: Schema.String
})

/** The outbox payload of the `decision` kind. */
export const DecisionPayload = Schema.Struct({
  subject: Schema.String,
  message: Schema.Unknown,
  /** A patch of the agent's gateway settings (containment), applied with the publish. */
  agent_state: optional(
    Schema.Struct({
      agent_id: Schema.String,
      containment: StoredContainment,
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
 * harmless: the enforcement record and the settings patch apply once, the gateways get what the
 * store holds now (so an admin's resume in between is not undone), and the bus deduplicates the
 * publish on the item's id.
 */
export const applyDecision = (item: OutboxItem) =>
  Effect.gen(function* () {
    const payload = yield* decodeDecisionPayload(item)
    const state = payload.agent_state
    if (state !== undefined) {
      const store = yield* Store
      const agentState = yield* AgentState
      const { settings } = yield* store.recordEnforcement(
        {
          agent_id: state.agent_id,
          checkpoint_id: state.checkpoint_id ?? null,
          session_id: state.session_id ?? null,
          action: PAUSE_ACTION,
          body: { trigger: "auto_containment", containment: state.containment, violations: state.violations ?? null }
        },
        { containment: state.containment }
      )
      yield* agentState.update(state.agent_id, { containment: settings.containment ?? undefined })
    }
    const bus = yield* Bus
    yield* bus.publish(payload.subject, payload.message, { msgId: item.id })
  })
