/**
 * The webhook fan-out: one feed event becomes one delivery per subscribed endpoint (docs/webhooks.md).
 *
 * The endpoints are the active ones of the event's organization (the agent's, when the event names
 * an agent) whose event types and agents select it (adapters/webhooks/WebhookEndpoints.ts), and the
 * agent's own. Their delivery rows and one `webhook` outbox item per new row are stored in one
 * transaction; a row already there for the endpoint and event is left as it is and gets no item, so
 * the feed may hand the same event over any number of times.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { WebhookEnvelope } from "../core/schema/WebhookEvents.js"
import { Store, StoreError } from "../adapters/store/Store.js"
import { transaction } from "../adapters/store/Transaction.js"
import { WebhookRepo } from "../adapters/store/WebhookRepo.js"
import { endpointSelects } from "../adapters/webhooks/WebhookEndpoints.js"
import { deliveryDraft } from "./WebhookDelivery.js"

export const fanOutEvent = (
  envelope: WebhookEnvelope
): Effect.Effect<void, StoreError, SqlClient.SqlClient | WebhookRepo | Store> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const store = yield* Store
    const repo = yield* WebhookRepo
    const at = new Date(yield* Clock.currentTimeMillis)
    yield* transaction(
      sql,
      Effect.gen(function* () {
        const subscribers = (yield* repo.candidates(envelope)).filter((endpoint) => endpointSelects(endpoint, envelope))
        const added = yield* repo.addDeliveries(subscribers, envelope, at)
        yield* store.enqueueOutbox(added.map(deliveryDraft))
      })
    ).pipe(Effect.catchTag("SqlError", (cause) => Effect.fail(new StoreError({ operation: "fanOutEvent", cause }))))
  })
