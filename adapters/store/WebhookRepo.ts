/**
 * Webhook endpoints and their deliveries on the store (migrations/0011_webhook_endpoints.ts).
 *
 * An endpoint belongs to an organization or to an agent (`EndpointOwner`); every read and change
 * through the API names its owner, so an endpoint of another owner is simply not found. Secrets are
 * sealed before they reach SQL (WebhookSecrets.ts) and opened only to sign (`secrets`, and
 * `attemptContext` for the delivery relay); the listing types here never carry them.
 *
 * A delivery is one endpoint and one event (unique), holding the envelope it sends. Everything runs
 * in the caller's transaction when there is one: the fan-out stores the deliveries with their outbox
 * items, a redelivery its reset with its new item.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"
import * as Schema from "effect/Schema"
import { WebhookDelivery, type WebhookDeliveryStatus } from "../../core/schema/Webhook.js"
import type { WebhookEnvelope } from "../../core/schema/WebhookEvents.js"
import { SecretKeys } from "../keys/SecretKeys.js"
import { Count, decodeAll, decodeFirst, IsoTimestamp, json, toCount, toIso } from "./Rows.js"
import { StoreError, storeError } from "./Store.js"
import { transaction } from "./Transaction.js"
import { openPreviousSecret, openWebhookSecret, sealPreviousSecret, sealWebhookSecret } from "./WebhookSecrets.js"

/** Whose endpoint: an organization's (every agent of it) or an agent's. */
export interface EndpointOwner {
  readonly scope: "org" | "agent"
  readonly id: string
}

export const orgEndpointOwner = (orgId: string): EndpointOwner => ({ scope: "org", id: orgId })
export const agentEndpointOwner = (agentId: string): EndpointOwner => ({ scope: "agent", id: agentId })

export interface WebhookEndpoint {
  /** `whe-<uuid>` (`reg-<uuid>` for the per-agent webhooks stored before 0011). */
  readonly endpoint_id: string
  readonly owner: EndpointOwner
  readonly url: string
  readonly description: string
  /** Empty: every event type. */
  readonly event_types: ReadonlyArray<string>
  /** Empty: every agent (of the organization). */
  readonly agent_ids: ReadonlyArray<string>
  readonly is_active: boolean
  readonly disabled_reason: string | null
  readonly consecutive_failures: number
  /** While a rotation's previous secret still signs. */
  readonly previous_secret_expires_at: string | null
  readonly created_at: string
  readonly updated_at: string
}

export interface EndpointFields {
  readonly url: string
  readonly description: string
  readonly event_types: ReadonlyArray<string>
  readonly agent_ids: ReadonlyArray<string>
}

export interface EndpointPatch extends Partial<EndpointFields> {
  readonly is_active?: boolean
}

/** The published delivery status (core/schema/Webhook.ts). */
export type DeliveryStatus = WebhookDeliveryStatus

/**
 * A `webhook_deliveries` row: the published delivery (core/schema/Webhook.ts, `delivery_id` is
 * `whd-<uuid>`) with the driver's counts and timestamps, and its `sequence`: 1, then one more per
 * redelivery (an outbox item of an earlier sequence does nothing).
 */
const DeliveryRow = Schema.Struct({
  ...WebhookDelivery.fields,
  attempts: Count,
  last_status: Schema.NullOr(Count),
  next_attempt_at: Schema.NullOr(IsoTimestamp),
  created_at: IsoTimestamp,
  delivered_at: Schema.NullOr(IsoTimestamp),
  latency_ms: Schema.NullOr(Count),
  sequence: Count
})
export type WebhookDeliveryRecord = typeof DeliveryRow.Type

/** A delivery with what it sends. */
export interface DeliveryToSend extends WebhookDeliveryRecord {
  readonly envelope: WebhookEnvelope
}

/**
 * What an attempt of a delivery needs, read in one statement (`attemptContext`): the delivery with
 * its endpoint and the secrets that sign now; or, when the endpoint was deleted or is disabled, the
 * delivery alone to end as failed (its secrets are then not opened).
 */
export type AttemptContext =
  | {
      readonly _tag: "Send"
      readonly delivery: DeliveryToSend
      readonly endpoint: WebhookEndpoint
      /** The current secret first, then the previous one while it lives (as `secrets`). */
      readonly secrets: ReadonlyArray<string>
    }
  | { readonly _tag: "EndpointDeleted"; readonly delivery: DeliveryToSend }
  | { readonly _tag: "EndpointDisabled"; readonly delivery: DeliveryToSend; readonly endpoint: WebhookEndpoint }

export interface DeliveryQuery {
  readonly endpoint_id?: string | undefined
  readonly status?: DeliveryStatus | undefined
  readonly limit: number
  readonly offset: number
}

/** What one attempt left: the delivery's new state. */
export interface AttemptOutcome {
  readonly status: DeliveryStatus
  readonly last_status: number | null
  readonly last_error: string | null
  readonly latency_ms: number
  readonly next_attempt_at: Date | null
  readonly at: Date
}

/** An endpoint fanned out to: what a delivery row needs of it. */
export interface Subscriber {
  readonly endpoint_id: string
  readonly owner: EndpointOwner
  readonly event_types: ReadonlyArray<string>
  readonly agent_ids: ReadonlyArray<string>
}

/** Failed attempts in a row after which an endpoint is disabled. */
export const DISABLE_AFTER_FAILURES = 100

export class WebhookRepo extends Context.Tag("candor/adapters/store/WebhookRepo")<
  WebhookRepo,
  {
    readonly count: (owner: EndpointOwner) => Effect.Effect<number, StoreError>
    readonly create: (
      owner: EndpointOwner,
      fields: EndpointFields,
      secret: string,
      at: Date
    ) => Effect.Effect<WebhookEndpoint, StoreError>
    /** Oldest first. */
    readonly list: (owner: EndpointOwner) => Effect.Effect<ReadonlyArray<WebhookEndpoint>, StoreError>
    readonly get: (owner: EndpointOwner, endpointId: string) => Effect.Effect<WebhookEndpoint | undefined, StoreError>
    /** Whoever owns it. */
    readonly find: (endpointId: string) => Effect.Effect<WebhookEndpoint | undefined, StoreError>
    /** `is_active: true` also clears `disabled_reason` and the failure count. */
    readonly update: (
      owner: EndpointOwner,
      endpointId: string,
      patch: EndpointPatch,
      at: Date
    ) => Effect.Effect<WebhookEndpoint | undefined, StoreError>
    readonly remove: (
      owner: EndpointOwner,
      endpointId: string
    ) => Effect.Effect<WebhookEndpoint | undefined, StoreError>
    /** A new current secret; the one it replaces keeps signing until `previousExpiresAt`. */
    readonly rotate: (
      owner: EndpointOwner,
      endpointId: string,
      secret: string,
      previousExpiresAt: Date,
      at: Date
    ) => Effect.Effect<WebhookEndpoint | undefined, StoreError>
    /** The secrets that sign at `now`: the current one first, then the previous one while it lives. */
    readonly secrets: (endpointId: string, now: Date) => Effect.Effect<ReadonlyArray<string>, StoreError>
    /**
     * For each event, the active endpoints it may go to: those of the agent's organization (when the
     * event names an agent, its organization as claimed now; else the event's `org_id`) and the
     * agent's own, oldest first. One statement for a fan-out batch's events, however many.
     */
    readonly candidates: (
      events: ReadonlyArray<{ readonly org_id: string | null; readonly agent_id?: string | undefined }>
    ) => Effect.Effect<ReadonlyArray<ReadonlyArray<Subscriber>>, StoreError>
    /**
     * Inserts one pending delivery per event and subscriber (none twice per event), every event of
     * a fan-out batch in one statement; returns those inserted.
     */
    readonly addDeliveries: (
      fanOut: ReadonlyArray<{ readonly envelope: WebhookEnvelope; readonly subscribers: ReadonlyArray<Subscriber> }>,
      at: Date
    ) => Effect.Effect<ReadonlyArray<WebhookDeliveryRecord>, StoreError>
    /** Newest first, with the total of the filter. */
    readonly deliveries: (
      owner: EndpointOwner,
      query: DeliveryQuery
    ) => Effect.Effect<{ readonly items: ReadonlyArray<WebhookDeliveryRecord>; readonly total: number }, StoreError>
    readonly delivery: (
      owner: EndpointOwner,
      deliveryId: string
    ) => Effect.Effect<WebhookDeliveryRecord | undefined, StoreError>
    readonly deliveryToSend: (deliveryId: string) => Effect.Effect<DeliveryToSend | undefined, StoreError>
    /**
     * The delivery relay's read for one attempt (one statement): undefined unless the delivery is
     * pending at `sequence` (redelivered since, done, or unknown: nothing to send); else its endpoint
     * and the secrets that sign at `now`.
     */
    readonly attemptContext: (
      deliveryId: string,
      sequence: number,
      now: Date
    ) => Effect.Effect<AttemptContext | undefined, StoreError>
    /** Records an attempt of `sequence` (nothing when the delivery has moved on to another). */
    readonly recordAttempt: (
      deliveryId: string,
      sequence: number,
      outcome: AttemptOutcome
    ) => Effect.Effect<void, StoreError>
    /** Ends a delivery as failed without an attempt (its endpoint deleted or disabled). */
    readonly abandon: (
      deliveryId: string,
      sequence: number,
      reason: string,
      at: Date
    ) => Effect.Effect<void, StoreError>
    /**
     * Counts an attempt against its endpoint: a success resets the failures, a failure adds one and
     * disables the endpoint at `DISABLE_AFTER_FAILURES` (`lastFailure` says why). Returns whether it disabled it now.
     */
    readonly endpointAttempt: (
      endpointId: string,
      ok: boolean,
      lastFailure: string,
      at: Date
    ) => Effect.Effect<boolean, StoreError>
    /** A new attempt sequence: pending again, attempts from 0, the same event and envelope. */
    readonly redeliver: (
      owner: EndpointOwner,
      deliveryId: string,
      at: Date
    ) => Effect.Effect<WebhookDeliveryRecord | undefined, StoreError>
  }
>() {}

interface EndpointRow {
  readonly registration_id: string
  readonly org_id: string | null
  readonly agent_id: string | null
  readonly callback_url: string
  readonly description: string
  readonly events: ReadonlyArray<string>
  readonly agent_ids: ReadonlyArray<string>
  readonly active: boolean
  readonly disabled_reason: string | null
  readonly consecutive_failures: unknown
  readonly previous_secret_expires_at: unknown
  readonly created_at: unknown
  readonly updated_at: unknown
}

const ENDPOINT_COLUMNS = `registration_id, org_id, agent_id, callback_url, description, events, agent_ids, active,
  disabled_reason, consecutive_failures, previous_secret_expires_at, created_at, updated_at`

/** The columns a delivery is signed from (`secrets`, `attemptContext`), opened only to sign. */
interface SecretRow {
  readonly registration_id: string
  readonly secret_sealed: string | null
  readonly legacy_secret: string | null
  readonly previous_secret_sealed: string | null
  readonly previous_secret_expires_at: unknown
}

const SECRET_COLUMNS =
  "registration_id, secret_sealed, legacy_secret, previous_secret_sealed, previous_secret_expires_at"

const ownerOf = (row: { readonly org_id: string | null; readonly agent_id: string | null }): EndpointOwner =>
  row.org_id !== null ? orgEndpointOwner(row.org_id) : agentEndpointOwner(row.agent_id ?? "")

const endpointOf = (row: EndpointRow): WebhookEndpoint => ({
  endpoint_id: row.registration_id,
  owner: ownerOf(row),
  url: row.callback_url,
  description: row.description,
  event_types: row.events,
  agent_ids: row.agent_ids,
  is_active: row.active,
  disabled_reason: row.disabled_reason,
  consecutive_failures: toCount(row.consecutive_failures),
  previous_secret_expires_at: row.previous_secret_expires_at === null ? null : toIso(row.previous_secret_expires_at),
  created_at: toIso(row.created_at),
  updated_at: toIso(row.updated_at)
})

/**
 * A delivery joined with its endpoint (`attemptContext`): the endpoint's columns, with its timestamps
 * renamed, or only a null `registration_id` when the endpoint was deleted. The delivery's columns
 * are decoded with its schema; the envelope is passed on as stored.
 */
type AttemptRow = { readonly envelope: WebhookEnvelope } & (
  | { readonly registration_id: null }
  | (Omit<EndpointRow, "created_at" | "updated_at"> &
      SecretRow & { readonly endpoint_created_at: unknown; readonly endpoint_updated_at: unknown })
)

const DELIVERY_COLUMNS = `delivery_id, endpoint_id, event_id, event_type, status, attempts, last_status, last_error,
  next_attempt_at, created_at, delivered_at, latency_ms, sequence`

const decodeDeliveries = decodeAll(DeliveryRow)
const decodeDelivery = decodeFirst(DeliveryRow)

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const keys = yield* SecretKeys

  const ownedBy = (owner: EndpointOwner) =>
    owner.scope === "org" ? sql`org_id = ${owner.id}` : sql`org_id is null and agent_id = ${owner.id}`

  const selectEndpoint = (owner: EndpointOwner, endpointId: string) =>
    sql<EndpointRow>`select ${sql.literal(ENDPOINT_COLUMNS)} from webhooks
      where registration_id = ${endpointId} and ${ownedBy(owner)}`.pipe(
      Effect.map(([row]) => (row === undefined ? undefined : endpointOf(row)))
    )

  const count: WebhookRepo["Type"]["count"] = (owner) =>
    sql<{ n: unknown }>`select count(*) as n from webhooks where ${ownedBy(owner)}`.pipe(
      Effect.map(([row]) => toCount(row?.n)),
      storeError("webhooks.count")
    )

  const create: WebhookRepo["Type"]["create"] = (owner, fields, secret, at) => {
    const endpointId = `whe-${randomUUID()}`
    const iso = at.toISOString()
    return sql<EndpointRow>`
      insert into webhooks (registration_id, org_id, agent_id, callback_url, description, events, agent_ids,
        secret_sealed, active, created_at, updated_at)
      values (${endpointId}, ${owner.scope === "org" ? owner.id : null}, ${owner.scope === "agent" ? owner.id : null},
        ${fields.url}, ${fields.description}, ${json(fields.event_types)}::jsonb, ${json(fields.agent_ids)}::jsonb,
        ${sealWebhookSecret(keys.active, endpointId, secret)}, true, ${iso}::timestamptz, ${iso}::timestamptz)
      returning ${sql.literal(ENDPOINT_COLUMNS)}`.pipe(
      Effect.map(([row]) => endpointOf(row!)),
      storeError("webhooks.create")
    )
  }

  const list: WebhookRepo["Type"]["list"] = (owner) =>
    sql<EndpointRow>`select ${sql.literal(ENDPOINT_COLUMNS)} from webhooks where ${ownedBy(owner)}
      order by created_at, registration_id`.pipe(
      Effect.map((rows) => rows.map(endpointOf)),
      storeError("webhooks.list")
    )

  const update: WebhookRepo["Type"]["update"] = (owner, endpointId, patch, at) => {
    const sets = [
      patch.url === undefined ? undefined : sql`callback_url = ${patch.url}`,
      patch.description === undefined ? undefined : sql`description = ${patch.description}`,
      patch.event_types === undefined ? undefined : sql`events = ${json(patch.event_types)}::jsonb`,
      patch.agent_ids === undefined ? undefined : sql`agent_ids = ${json(patch.agent_ids)}::jsonb`,
      patch.is_active === undefined
        ? undefined
        : patch.is_active
          ? sql`active = true, disabled_reason = null, consecutive_failures = 0`
          : sql`active = false, disabled_reason = coalesce(disabled_reason, 'disabled through the API')`,
      sql`updated_at = ${at.toISOString()}::timestamptz`
    ].filter((set) => set !== undefined)
    return sql<EndpointRow>`update webhooks set ${sql.csv(sets)}
      where registration_id = ${endpointId} and ${ownedBy(owner)}
      returning ${sql.literal(ENDPOINT_COLUMNS)}`.pipe(
      Effect.map(([row]) => (row === undefined ? undefined : endpointOf(row))),
      storeError("webhooks.update")
    )
  }

  const remove: WebhookRepo["Type"]["remove"] = (owner, endpointId) =>
    sql<EndpointRow>`delete from webhooks where registration_id = ${endpointId} and ${ownedBy(owner)}
      returning ${sql.literal(ENDPOINT_COLUMNS)}`.pipe(
      Effect.map(([row]) => (row === undefined ? undefined : endpointOf(row))),
      storeError("webhooks.remove")
    )

  const rotate: WebhookRepo["Type"]["rotate"] = (owner, endpointId, secret, previousExpiresAt, at) =>
    Effect.gen(function* () {
      const [row] = yield* sql<{ registration_id: string; secret_sealed: string | null; legacy_secret: string | null }>`
        select registration_id, secret_sealed, legacy_secret from webhooks
        where registration_id = ${endpointId} and ${ownedBy(owner)} for update`
      if (row === undefined) return undefined
      const current = yield* openWebhookSecret(keys.all, row)
      const [updated] = yield* sql<EndpointRow>`
        update webhooks set secret_sealed = ${sealWebhookSecret(keys.active, endpointId, secret)}, legacy_secret = null,
          previous_secret_sealed = ${sealPreviousSecret(keys.active, endpointId, current)},
          previous_secret_expires_at = ${previousExpiresAt.toISOString()}::timestamptz,
          updated_at = ${at.toISOString()}::timestamptz
        where registration_id = ${endpointId}
        returning ${sql.literal(ENDPOINT_COLUMNS)}`
      return updated === undefined ? undefined : endpointOf(updated)
    }).pipe(
      (effect) => transaction(sql, effect),
      Effect.mapError((cause) => new StoreError({ operation: "webhooks.rotate", cause }))
    )

  /** The secrets of a row that sign at `now`: the current one, then the previous one while it lives. */
  const openSecrets = (row: SecretRow, now: Date) =>
    Effect.map(openWebhookSecret(keys.all, row), (current) => {
      const previousLives =
        row.previous_secret_sealed !== null &&
        row.previous_secret_expires_at !== null &&
        Date.parse(toIso(row.previous_secret_expires_at)) > now.getTime()
      const previous = previousLives
        ? openPreviousSecret(keys.all, row.registration_id, row.previous_secret_sealed!)
        : undefined
      return previous === undefined ? [current] : [current, previous]
    })

  const secrets: WebhookRepo["Type"]["secrets"] = (endpointId, now) =>
    Effect.gen(function* () {
      const [row] = yield* sql<SecretRow>`select ${sql.literal(SECRET_COLUMNS)}
         from webhooks where registration_id = ${endpointId}`
      if (row === undefined) return []
      return yield* openSecrets(row, now)
    }).pipe(Effect.mapError((cause) => new StoreError({ operation: "webhooks.secrets", cause })))

  const candidates: WebhookRepo["Type"]["candidates"] = (events) =>
    events.length === 0
      ? Effect.succeed([])
      : sql<{
          i: number
          registration_id: string
          org_id: string | null
          agent_id: string | null
          events: ReadonlyArray<string>
          agent_ids: ReadonlyArray<string>
        }>`select k.i, w.registration_id, w.org_id, w.agent_id, w.events, w.agent_ids
          from json_to_recordset(${json(events.map((event, i) => ({ i, agent_id: event.agent_id ?? null, org_id: event.org_id })))}::json)
            as k(i int, agent_id text, org_id text)
          join webhooks w on w.active and (
            w.org_id = case when k.agent_id is null then k.org_id
              else (select c.org_id from agent_claims c where c.agent_id = k.agent_id) end
            or (k.agent_id is not null and w.org_id is null and w.agent_id = k.agent_id))
          order by k.i, w.created_at, w.registration_id`.pipe(
          Effect.map((rows) => {
            const found = events.map((): Array<Subscriber> => [])
            for (const row of rows)
              found[row.i]!.push({
                endpoint_id: row.registration_id,
                owner: ownerOf(row),
                event_types: row.events,
                agent_ids: row.agent_ids
              })
            return found
          }),
          storeError("webhooks.candidates")
        )

  const addDeliveries: WebhookRepo["Type"]["addDeliveries"] = (fanOut, at) => {
    const rows = fanOut.flatMap(({ envelope, subscribers }) =>
      subscribers.map((subscriber) => ({
        delivery_id: `whd-${randomUUID()}`,
        endpoint_id: subscriber.endpoint_id,
        owner_scope: subscriber.owner.scope,
        owner_id: subscriber.owner.id,
        event_id: envelope.id,
        event_type: envelope.type,
        envelope
      }))
    )
    return rows.length === 0
      ? Effect.succeed([])
      : sql`
          insert into webhook_deliveries (delivery_id, endpoint_id, owner_scope, owner_id, event_id, event_type,
            envelope, status, next_attempt_at, created_at)
          select r.delivery_id, r.endpoint_id, r.owner_scope, r.owner_id, r.event_id, r.event_type,
            r.envelope, 'pending', ${at.toISOString()}::timestamptz, ${at.toISOString()}::timestamptz
          from json_to_recordset(${json(rows)}::json)
            as r(delivery_id text, endpoint_id text, owner_scope text, owner_id text, event_id text, event_type text,
              envelope jsonb)
          on conflict (endpoint_id, event_id) do nothing
          returning ${sql.literal(DELIVERY_COLUMNS)}`.pipe(
          Effect.flatMap(decodeDeliveries),
          storeError("webhooks.addDeliveries")
        )
  }

  const deliveries: WebhookRepo["Type"]["deliveries"] = (owner, query) => {
    const where = sql.and([
      sql`owner_scope = ${owner.scope}`,
      sql`owner_id = ${owner.id}`,
      ...(query.endpoint_id === undefined ? [] : [sql`endpoint_id = ${query.endpoint_id}`]),
      ...(query.status === undefined ? [] : [sql`status = ${query.status}`])
    ])
    return Effect.all([
      sql`select ${sql.literal(DELIVERY_COLUMNS)} from webhook_deliveries where ${where}
        order by created_at desc, delivery_id desc limit ${query.limit} offset ${query.offset}`,
      sql<{ n: unknown }>`select count(*) as n from webhook_deliveries where ${where}`
    ]).pipe(
      Effect.flatMap(([rows, [total]]) =>
        Effect.map(decodeDeliveries(rows), (items) => ({ items, total: toCount(total?.n) }))
      ),
      storeError("webhooks.deliveries")
    )
  }

  const delivery: WebhookRepo["Type"]["delivery"] = (owner, deliveryId) =>
    sql`select ${sql.literal(DELIVERY_COLUMNS)} from webhook_deliveries
      where delivery_id = ${deliveryId} and owner_scope = ${owner.scope} and owner_id = ${owner.id}`.pipe(
      Effect.flatMap(decodeDelivery),
      storeError("webhooks.delivery")
    )

  const deliveryToSend: WebhookRepo["Type"]["deliveryToSend"] = (deliveryId) =>
    // The envelope is passed on as stored (what was signed for it is its JSON), not decoded: the one
    // column of these rows still typed by the query rather than by a schema.
    sql<{ envelope: WebhookEnvelope }>`
      select ${sql.literal(DELIVERY_COLUMNS)}, envelope from webhook_deliveries where delivery_id = ${deliveryId}`.pipe(
      Effect.flatMap((rows) =>
        Effect.map(decodeDelivery(rows), (delivery) =>
          delivery === undefined ? undefined : { ...delivery, envelope: rows[0]!.envelope }
        )
      ),
      storeError("webhooks.deliveryToSend")
    )

  const attemptContext: WebhookRepo["Type"]["attemptContext"] = (deliveryId, sequence, now) =>
    Effect.gen(function* () {
      // The delivery and its endpoint's row in one statement per attempt; no foreign key ties them,
      // so a deleted endpoint leaves its columns null. Only `created_at` is in both tables: the
      // endpoint's timestamps are renamed.
      const rows = yield* sql<AttemptRow>`
        select d.delivery_id, d.endpoint_id, d.event_id, d.event_type, d.status, d.attempts, d.last_status,
          d.last_error, d.next_attempt_at, d.created_at, d.delivered_at, d.latency_ms, d.sequence, d.envelope,
          w.registration_id, w.org_id, w.agent_id, w.callback_url, w.description, w.events, w.agent_ids, w.active,
          w.disabled_reason, w.consecutive_failures, w.previous_secret_expires_at,
          w.created_at as endpoint_created_at, w.updated_at as endpoint_updated_at,
          w.secret_sealed, w.legacy_secret, w.previous_secret_sealed
        from webhook_deliveries d left join webhooks w on w.registration_id = d.endpoint_id
        where d.delivery_id = ${deliveryId} and d.sequence = ${sequence} and d.status = 'pending'`
      const [row] = rows
      const decoded = yield* decodeDelivery(rows)
      if (row === undefined || decoded === undefined) return undefined
      // The envelope passed on as stored, as `deliveryToSend` does.
      const delivery: DeliveryToSend = { ...decoded, envelope: row.envelope }
      if (row.registration_id === null) return { _tag: "EndpointDeleted", delivery } as const
      const endpoint = endpointOf({ ...row, created_at: row.endpoint_created_at, updated_at: row.endpoint_updated_at })
      if (!endpoint.is_active) return { _tag: "EndpointDisabled", delivery, endpoint } as const
      // Opened only for an attempt that signs: a deleted or disabled endpoint's delivery ends without them.
      const secrets = yield* openSecrets(row, now)
      return { _tag: "Send", delivery, endpoint, secrets } as const
    }).pipe(Effect.mapError((cause) => new StoreError({ operation: "webhooks.attemptContext", cause })))

  const recordAttempt: WebhookRepo["Type"]["recordAttempt"] = (deliveryId, sequence, outcome) =>
    sql`update webhook_deliveries set status = ${outcome.status}, attempts = attempts + 1,
        last_status = ${outcome.last_status}, last_error = ${outcome.last_error}, latency_ms = ${outcome.latency_ms},
        next_attempt_at = ${outcome.next_attempt_at === null ? null : outcome.next_attempt_at.toISOString()}::timestamptz,
        delivered_at = ${outcome.status === "delivered" ? outcome.at.toISOString() : null}::timestamptz
      where delivery_id = ${deliveryId} and sequence = ${sequence}`.pipe(
      Effect.asVoid,
      storeError("webhooks.recordAttempt")
    )

  const abandon: WebhookRepo["Type"]["abandon"] = (deliveryId, sequence, reason) =>
    sql`update webhook_deliveries set status = 'failed', last_error = ${reason}, next_attempt_at = null
      where delivery_id = ${deliveryId} and sequence = ${sequence} and status = 'pending'`.pipe(
      Effect.asVoid,
      storeError("webhooks.abandon")
    )

  const endpointAttempt: WebhookRepo["Type"]["endpointAttempt"] = (endpointId, ok, lastFailure, at) =>
    (ok
      ? sql<{ disabled: boolean }>`update webhooks set consecutive_failures = 0
          where registration_id = ${endpointId} and consecutive_failures <> 0 returning false as disabled`
      : sql<{ disabled: boolean }>`
          update webhooks set consecutive_failures = consecutive_failures + 1,
            active = active and consecutive_failures + 1 < ${DISABLE_AFTER_FAILURES},
            disabled_reason = case when active and consecutive_failures + 1 >= ${DISABLE_AFTER_FAILURES}
              then ${`disabled after ${DISABLE_AFTER_FAILURES} consecutive failed deliveries; last: ${lastFailure}`}
              else disabled_reason end,
            updated_at = case when active and consecutive_failures + 1 >= ${DISABLE_AFTER_FAILURES}
              then ${at.toISOString()}::timestamptz else updated_at end
          where registration_id = ${endpointId}
          returning (active = false and consecutive_failures = ${DISABLE_AFTER_FAILURES}) as disabled`
    ).pipe(
      Effect.map(([row]) => row?.disabled === true),
      storeError("webhooks.endpointAttempt")
    )

  const redeliver: WebhookRepo["Type"]["redeliver"] = (owner, deliveryId, at) =>
    sql`update webhook_deliveries set status = 'pending', sequence = sequence + 1, attempts = 0,
        last_status = null, last_error = null, latency_ms = null, delivered_at = null,
        next_attempt_at = ${at.toISOString()}::timestamptz
      where delivery_id = ${deliveryId} and owner_scope = ${owner.scope} and owner_id = ${owner.id}
      returning ${sql.literal(DELIVERY_COLUMNS)}`.pipe(Effect.flatMap(decodeDelivery), storeError("webhooks.redeliver"))

  return WebhookRepo.of({
    count,
    create,
    list,
    get: (owner, endpointId) => selectEndpoint(owner, endpointId).pipe(storeError("webhooks.get")),
    find: (endpointId) =>
      sql<EndpointRow>`select ${sql.literal(ENDPOINT_COLUMNS)} from webhooks where registration_id = ${endpointId}`.pipe(
        Effect.map(([row]) => (row === undefined ? undefined : endpointOf(row))),
        storeError("webhooks.find")
      ),
    update,
    remove,
    rotate,
    secrets,
    candidates,
    addDeliveries,
    deliveries,
    delivery,
    deliveryToSend,
    attemptContext,
    recordAttempt,
    abandon,
    endpointAttempt,
    redeliver
  })
})

/** On the process's SqlClient, sealing and opening secrets with its key-encryption key. */
export const layer: Layer.Layer<WebhookRepo, never, SqlClient.SqlClient | SecretKeys> = Layer.effect(WebhookRepo, make)
