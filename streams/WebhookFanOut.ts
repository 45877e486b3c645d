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

/** The first of the items of each key, in order. */
const firstOfEach = <A>(items: ReadonlyArray<A>, key: (item: A) => string): ReadonlyArray<A> => {
  const seen = new Set<string>()
  return items.filter((item) => {
    const k = key(item)
    if (seen.has(k)) return false
    seen.add(k)
    return true
  })
}

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
        // The batch's events once each, and the candidates of each of its agents (or, for an event
        // naming none, organizations), read in one statement.
        const unique = firstOfEach(envelopes, (envelope) => envelope.id)
        const keyOf = (envelope: WebhookEnvelope) =>
          envelope.agent_id === undefined ? `org:${envelope.org_id}` : `agent:${envelope.agent_id}`
        const looked = firstOfEach(unique, keyOf)
        const found = yield* repo.candidates(looked)
        const candidates = new Map<string, ReadonlyArray<Subscriber>>(
          looked.map((envelope, i) => [keyOf(envelope), found[i]!])
        )
        const fanOut = unique.map((envelope) => ({
          envelope,
          subscribers: candidates.get(keyOf(envelope))!.filter((endpoint) => endpointSelects(endpoint, envelope))
        }))
        const added = yield* repo.addDeliveries(fanOut, at)
        yield* store.enqueueOutbox(added.map(deliveryDraft))
      })
    ).pipe(Effect.catchTag("SqlError", (cause) => Effect.fail(new StoreError({ operation: "fanOutEvents", cause }))))
  })

/** One event fanned out on its own. */
export const fanOutEvent = (
  envelope: WebhookEnvelope
): Effect.Effect<void, StoreError, SqlClient.SqlClient | WebhookRepo | Store> => fanOutEvents([envelope])
