/**
 * The catalogue events a transaction wrote to the outbox (kind `event`), for producer tests: each
 * payload decoded as an envelope and its data with its type's schema, so a test that reads an event
 * has also checked it is what the catalogue says.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { WEBHOOK_EVENT_TYPES, WebhookEnvelope, type WebhookEventType } from "../../core/schema/WebhookEvents.js"
import { EVENT_OUTBOX } from "../../adapters/store/EventOutbox.js"

export interface EventFilter {
  readonly agentId?: string
  readonly orgId?: string
  readonly type?: string
}

/**
 * The events written so far matching every given member of `filter`, in the order they were
 * created: those still in the outbox and those the event relay (running in tests with workers)
 * has already published to the store's feed. The outbox is read first: an event the relay moves
 * in between is then seen in both, and counted once.
 */
export const outboxEvents = (filter: EventFilter = {}) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const pending = yield* sql<{ payload: string }>`
      select payload::text as payload from outbox where kind = ${EVENT_OUTBOX} order by id`
    const published = yield* sql<{ payload: string }>`select envelope::text as payload from feed_events order by seq`
    const seen = new Set<string>()
    return [...published, ...pending]
      .map((row) => {
        const envelope = Schema.decodeUnknownSync(WebhookEnvelope)(JSON.parse(row.payload))
        const schema = WEBHOOK_EVENT_TYPES[envelope.type as WebhookEventType].data as Schema.Schema<unknown>
        Schema.decodeUnknownSync(schema)(envelope.data)
        return envelope
      })
      .filter((envelope) => !seen.has(envelope.id) && seen.add(envelope.id) !== undefined)
      .sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at))
      .filter(
        (e) =>
          (filter.agentId === undefined || e.agent_id === filter.agentId) &&
          (filter.orgId === undefined || e.org_id === filter.orgId) &&
          (filter.type === undefined || e.type === filter.type)
      )
  })
