/**
 * The event relay: each catalogue event written to the outbox (adapters/store/EventOutbox.ts) is
 * published to the feed (adapters/bus/EventFeed.ts); the live stream reads the
 * feed and the webhook fan-out (streams/WebhookFanOut.ts) consumes it.
 */
import * as Effect from "effect/Effect"
import { WebhookEnvelope } from "../core/schema/WebhookEvents.js"
import { EventFeed } from "../adapters/bus/EventFeed.js"
import type { OutboxItem } from "../adapters/store/Store.js"
import { decodePayload } from "./OutboxRelay.js"

const decodeEnvelope = decodePayload(WebhookEnvelope)

/** The event relay's handler. */
export const publishEvent = (item: OutboxItem) =>
  Effect.gen(function* () {
    const feed = yield* EventFeed
    yield* feed.publish(yield* decodeEnvelope(item))
  })
