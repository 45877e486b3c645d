/**
 * A catalogue event as an outbox item: whatever happened (a verdict, a drift alert, a containment
 * change, a conscience change, a failed proof) is written as one `event` outbox item in the
 * transaction that stores it, so an event is never reported without its change nor lost after it.
 * The writers (the domain services, the workers) build the item here; the event relay
 * (streams/Events.ts) publishes it.
 */
import type { WebhookEnvelope } from "../../core/schema/WebhookEvents.js"
import type { OutboxDraft } from "./Store.js"

export const EVENT_OUTBOX = "event"

/** The outbox draft of one event: its envelope, as published. */
export const eventDraft = (envelope: WebhookEnvelope): OutboxDraft => ({ kind: EVENT_OUTBOX, payload: envelope })
