/**
 * Webhooks through the outbox. What happened (a verdict or a drift alert in the actor's step, a
 * containment change in streams/Containment.ts) becomes one outbox draft per matching registration,
 * in the transaction that stores it; the webhook relay sends each with `WebhookSender` after the
 * commit, retried with the relay's backoff (1 s, 4 s, 16 s, …) and kept as dead after its last attempt.
 *
 * A draft names its registration, never its secret: the relay reads the secret (and the current
 * URL) at send time, so a rotated secret or a corrected URL applies to pending retries, and no
 * secret ever sits in the outbox. Bodies hold no thinking text: a verdict is summarised from the
 * checkpoint without the concerns' evidence excerpts.
 */
import * as Schema from "effect/Schema"
import type { IntegrityCheckpoint } from "../core/schema/Checkpoint.js"
import type { DriftAlert } from "../core/schema/Drift.js"
import type { ContainmentLogEntry, OutboxDraft, WebhookSubscription } from "../adapters/store/Store.js"

export const WEBHOOK_OUTBOX = "webhook"

/** What an actor keeps of a registration: where and for what, never the secret. */
export interface WebhookTarget {
  readonly registration_id: string
  readonly callback_url: string
  readonly events: ReadonlyArray<string>
}

export const webhookTarget = (registration: WebhookSubscription): WebhookTarget => ({
  registration_id: registration.registration_id,
  callback_url: registration.callback_url,
  events: registration.events
})

/** The JSON a receiver gets. */
export const WebhookBody = Schema.Struct({
  /** The same for every registration and every retry of one occurrence: receivers deduplicate on it. */
  id: Schema.String,
  /** The name the registration subscribed to. */
  event: Schema.String,
  agent_id: Schema.String,
  /** RFC 3339: when Candor decided it. */
  created_at: Schema.String,
  data: Schema.Unknown
})
export interface WebhookBody extends Schema.Schema.Type<typeof WebhookBody> {}

/** The outbox payload of the `webhook` kind. */
export const WebhookPayload = Schema.Struct({
  registration_id: Schema.String,
  /** Where it was addressed when decided (for operators reading the outbox); sent to the registration's current URL. */
  url: Schema.String,
  event: Schema.String,
  body: WebhookBody
})
export interface WebhookPayload extends Schema.Schema.Type<typeof WebhookPayload> {}

/** Something that happened, under every event name a registration may know it by. */
export interface Occurrence {
  readonly names: ReadonlyArray<string>
  readonly id: string
  readonly data: unknown
}

/** A verdict, from the checkpoint by a list of kept fields (a field added later is not sent by accident). */
export const verdictOccurrence = (checkpoint: IntegrityCheckpoint, certificateId: string): Occurrence => ({
  names: ["verdict"],
  id: `verdict:${checkpoint.checkpoint_id}`,
  data: {
    checkpoint_id: checkpoint.checkpoint_id,
    certificate_id: certificateId,
    agent_id: checkpoint.agent_id,
    session_id: checkpoint.session_id,
    card_id: checkpoint.card_id,
    timestamp: checkpoint.timestamp,
    provider: checkpoint.provider,
    model: checkpoint.model,
    verdict: checkpoint.verdict,
    // As in the public certificate: no `evidence`, which quotes the thinking.
    concerns: checkpoint.concerns.map((concern) => ({
      category: concern.category,
      severity: concern.severity,
      description: concern.description,
      relevant_conscience_value: concern.relevant_conscience_value ?? null
    })),
    reasoning_summary: checkpoint.reasoning_summary,
    window_position: checkpoint.window_position,
    thinking_block_hash: checkpoint.thinking_block_hash,
    linked_trace_id: checkpoint.linked_trace_id,
    analysis_model: checkpoint.analysis_metadata.analysis_model,
    synthetic_reason: checkpoint.synthetic_reason ?? null
  }
})

export const driftAlertOccurrence = (alert: DriftAlert): Occurrence => ({
  names: ["drift_alert"],
  id: `drift_alert:${alert.alert_id}`,
  data: alert
})

/** The public event of a containment change: resume and reactivate both make the agent active again. */
export const containmentEvent = (action: ContainmentLogEntry["action"]): string => {
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

/**
 * A containment change, from its containment log row: an automatic pause is sent exactly like a
 * manual one (`agent.paused`, the same data, `actor` "system"). A pause also goes to registrations of
 * the older `containment` event, which auto-containment sent before the containment API existed.
 */
export const containmentOccurrence = (entry: ContainmentLogEntry, orgId: string | null): Occurrence => {
  const event = containmentEvent(entry.action)
  return {
    names: event === "agent.paused" ? [event, "containment"] : [event],
    id: `containment:${entry.id}`,
    data: {
      agent_id: entry.agent_id,
      org_id: orgId,
      action: entry.action,
      actor: entry.actor,
      reason: entry.reason,
      previous_status: entry.previous_status,
      new_status: entry.new_status
    }
  }
}

/** One draft per registration and occurrence it subscribed to (under either of the occurrence's names: once). */
export const webhookDrafts = (
  targets: ReadonlyArray<WebhookTarget>,
  agentId: string,
  occurrences: ReadonlyArray<Occurrence>,
  now: Date
): ReadonlyArray<OutboxDraft> =>
  targets.flatMap((target) =>
    occurrences.flatMap((occurrence) => {
      const event = occurrence.names.find((name) => target.events.includes(name))
      if (event === undefined) return []
      const body: WebhookBody = {
        id: occurrence.id,
        event,
        agent_id: agentId,
        created_at: now.toISOString(),
        data: occurrence.data
      }
      return [
        {
          kind: WEBHOOK_OUTBOX,
          payload: {
            registration_id: target.registration_id,
            url: target.callback_url,
            event,
            body
          } satisfies WebhookPayload
        }
      ]
    })
  )
