/**
 * Catalogue events through the outbox: whatever happened (a verdict, a drift alert, a containment
 * change, a conscience change, a failed proof) is written as one `event` outbox item in the
 * transaction that stores it, so an event is never reported without its change nor lost after it.
 * The event relay publishes each to the feed (adapters/bus/EventFeed.ts); the live stream reads the
 * feed and the webhook fan-out (streams/WebhookFanOut.ts) consumes it.
 */
import * as Effect from "effect/Effect"
import { WebhookEnvelope } from "../core/schema/WebhookEvents.js"
import { EventFeed } from "../adapters/bus/EventFeed.js"
import type { OutboxDraft, OutboxItem } from "../adapters/store/Store.js"
import { decodePayload } from "./OutboxRelay.js"

export const EVENT_OUTBOX = "event"

/** The outbox draft of one event: its envelope, as published. */
export const eventDraft = (envelope: WebhookEnvelope): OutboxDraft => ({ kind: EVENT_OUTBOX, payload: envelope })

const decodeEnvelope = decodePayload(WebhookEnvelope)

/** The event relay's handler. */
export const publishEvent = (item: OutboxItem) =>
  Effect.gen(function* () {
    const feed = yield* EventFeed
    yield* feed.publish(yield* decodeEnvelope(item))
  })
