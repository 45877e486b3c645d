/**
 * A webhook delivery as an outbox item: the row of a delivery (stored by the fan-out, or reset by a
 * redelivery) is announced to the `webhook` relay (streams/WebhookDelivery.ts) by an outbox item in
 * the same transaction, naming the delivery and the attempt sequence it was stored with.
 */
import * as Schema from "effect/Schema"
import type { OutboxDraft } from "./Store.js"
import type { WebhookDeliveryRecord } from "./WebhookRepo.js"

export const WEBHOOK_OUTBOX = "webhook"

/** The outbox payload of the `webhook` kind: which delivery, and which of its attempt sequences. */
export const WebhookDeliveryItem = Schema.Struct({ delivery_id: Schema.String, sequence: Schema.Int })
export interface WebhookDeliveryItem extends Schema.Schema.Type<typeof WebhookDeliveryItem> {}

export const deliveryDraft = (delivery: WebhookDeliveryRecord): OutboxDraft => ({
  kind: WEBHOOK_OUTBOX,
  payload: { delivery_id: delivery.delivery_id, sequence: delivery.sequence } satisfies WebhookDeliveryItem
})
