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
import { type Subscriber, WebhookRepo } from "../adapters/store/WebhookRepo.js"
import { endpointSelects } from "../adapters/webhooks/WebhookEndpoints.js"
import { deliveryDraft } from "../adapters/store/WebhookDeliveryOutbox.js"

export const fanOutEvents = (
  envelopes: ReadonlyArray<WebhookEnvelope>
): Effect.Effect<void, StoreError, SqlClient.SqlClient | WebhookRepo | Store> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const store = yield* Store
    const repo = yield* WebhookRepo
    const at = new Date(yield* Clock.currentTimeMillis)
    yield* transaction(
      sql,
      Effect.gen(function* () {
        /** The candidates of each agent (or, for an event naming none, organization) of the batch. */
        const candidates = new Map<string, ReadonlyArray<Subscriber>>()
        const seen = new Set<string>()
        const fanOut: Array<{ envelope: WebhookEnvelope; subscribers: ReadonlyArray<Subscriber> }> = []
        for (const envelope of envelopes) {
          if (seen.has(envelope.id)) continue
          seen.add(envelope.id)
          const key = envelope.agent_id === undefined ? `org:${envelope.org_id}` : `agent:${envelope.agent_id}`
          let found = candidates.get(key)
          if (found === undefined) candidates.set(key, (found = yield* repo.candidates(envelope)))
          fanOut.push({ envelope, subscribers: found.filter((endpoint) => endpointSelects(endpoint, envelope)) })
        }
        const added = yield* repo.addDeliveries(fanOut, at)
        yield* store.enqueueOutbox(added.map(deliveryDraft))
      })
    ).pipe(Effect.catchTag("SqlError", (cause) => Effect.fail(new StoreError({ operation: "fanOutEvents", cause }))))
  })

/** One event fanned out on its own. */
export const fanOutEvent = (
  envelope: WebhookEnvelope
): Effect.Effect<void, StoreError, SqlClient.SqlClient | WebhookRepo | Store> => fanOutEvents([envelope])
