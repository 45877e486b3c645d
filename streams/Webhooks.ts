/**
 * Webhook deliveries through the outbox: one `webhook` item per registration and event, sent by the
 * webhook relay with `WebhookSender`, retried with the relay's backoff (1 s, 4 s, 16 s, …) and kept
 * as dead after its last attempt. Producers no longer write these: they write catalogue events
 * (streams/Events.ts), which the webhook fan-out turns into deliveries.
 *
 * A draft names its registration, never its secret: the relay reads the secret (and the current
 * URL) at send time, so a rotated secret or a corrected URL applies to pending retries, and no
 * secret ever sits in the outbox. Bodies hold no thinking text: a verdict is summarised from the
 * checkpoint without the concerns' evidence excerpts.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { type OutboxItem, Store } from "../adapters/store/Store.js"
import { WebhookSender } from "../adapters/webhooks/WebhookSender.js"
import { decodePayload } from "./OutboxRelay.js"

export const WEBHOOK_OUTBOX = "webhook"

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

const decodeWebhookPayload = decodePayload(WebhookPayload)

/**
 * The webhook relay's handler: signs with the registration's secret as it is now and sends. A
 * registration deleted, deactivated or no longer subscribed in the meantime means there is no one
 * to deliver to: the item is done.
 */
export const deliverWebhook = (item: OutboxItem) =>
  Effect.gen(function* () {
    const store = yield* Store
    const sender = yield* WebhookSender
    const payload = yield* decodeWebhookPayload(item)
    const registration = yield* store.getWebhook(payload.registration_id)
    if (registration === undefined || !registration.active || !registration.events.includes(payload.event)) {
      return yield* Effect.logInfo("webhook registration gone or unsubscribed; delivery skipped").pipe(
        Effect.annotateLogs({ registration_id: payload.registration_id, event: payload.event, id: item.id })
      )
    }
    yield* sender.send({
      url: registration.callback_url,
      secret: registration.secret,
      body: JSON.stringify(payload.body),
      event: payload.event,
      deliveryId: payload.body.id
    })
  })
