/**
 * Decisions the actors publish after commit (drift alerts, containment), written to the outbox in
 * the commit's transaction and sent by the decision relay: to `<prefix>.alerts.<agent_id>` or
 * `<prefix>.containment.<agent_id>`, where security teams subscribe, and, for containment, into
 * the agent state every gateway watches.
 */
import type { OutboxDraft } from "../adapters/store/Store.js"
import type { ContainmentRecord } from "../core/containment.js"

export const DECISION_OUTBOX = "decision"
export const PROVER_OUTBOX = "prover"

export interface DecisionPayload {
  readonly subject: string
  readonly message: unknown
  /** A patch of the agent's gateway settings (containment), applied with the publish. */
  readonly agent_state?: { readonly agent_id: string; readonly containment: ContainmentRecord }
}

export const decision = (
  prefix: string,
  topic: "alerts" | "containment",
  agentId: string,
  message: unknown,
  state?: { readonly containment: ContainmentRecord }
): OutboxDraft => ({
  kind: DECISION_OUTBOX,
  payload: {
    subject: `${prefix}.${topic}.${agentId}`,
    message,
    ...(state !== undefined ? { agent_state: { agent_id: agentId, containment: state.containment } } : {})
  } satisfies DecisionPayload
})
