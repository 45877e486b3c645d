/**
 * Webhook endpoints (docs/webhooks.md): the writes of an organization's or an agent's endpoints and
 * their deliveries, for the API and any other caller. Every change is stored with its governance entry
 * (on the organization's or the agent's log) in one transaction. Entries and answers never hold a
 * signing secret, except the answers of create and rotate-secret, which show the new one once; a
 * governance entry records the URL's origin only (a path or query may carry a receiver's token).
 *
 * Who may act is the caller's to decide before it asks for a scope (`orgScope`, `agentScope`); the
 * actor it names is the one recorded.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { randomUUID } from "node:crypto"
import { GovernanceLog } from "../adapters/store/GovernanceLog.js"
import { IdentityRepo } from "../adapters/store/identity/IdentityRepo.js"
import { Store, StoreError } from "../adapters/store/Store.js"
import { transaction } from "../adapters/store/Transaction.js"
import { deliveryDraft } from "../adapters/store/WebhookDeliveryOutbox.js"
import {
  agentEndpointOwner,
  type EndpointOwner,
  type EndpointPatch,
  orgEndpointOwner,
  type WebhookDeliveryRecord,
  type WebhookEndpoint,
  WebhookRepo
} from "../adapters/store/WebhookRepo.js"
import {
  MAX_ENDPOINTS_PER_OWNER,
  newSigningSecret,
  PREVIOUS_SECRET_TTL_MS,
  TEST_EVENT_TYPE
} from "../adapters/webhooks/WebhookEndpoints.js"
import { describeFailure, make as makeSender, WebhookSender } from "../adapters/webhooks/WebhookSender.js"
import { checkWebhookUrl } from "../adapters/webhooks/WebhookUrlGuard.js"
import { eventId } from "../core/Events.js"
import { agentGovernanceLog, type GovernanceLogRef, orgGovernanceLog } from "../core/Governance.js"
import type { GovernanceAction } from "../core/schema/Governance.js"
import { unknownEventTypes } from "../core/schema/WebhookEvents.js"

const body = { error: Schema.String }

/** No such endpoint, delivery or organization, for this owner. */
export class WebhookNotFound extends Schema.TaggedError<WebhookNotFound>()(
  "WebhookNotFound",
  body,
  HttpApiSchema.annotations({ status: 404 })
) {}

/** A field the rules of endpoints refuse: the URL, unknown event types, foreign agents. */
export class WebhookInvalid extends Schema.TaggedError<WebhookInvalid>()(
  "WebhookInvalid",
  body,
  HttpApiSchema.annotations({ status: 400 })
) {}

/** The owner already has as many endpoints as it may. */
export class WebhookConflict extends Schema.TaggedError<WebhookConflict>()(
  "WebhookConflict",
  body,
  HttpApiSchema.annotations({ status: 409 })
) {}

/** Whose endpoints a request is about, where its changes are logged, and the organization of its events. */
export interface Scope {
  readonly owner: EndpointOwner
  readonly log: GovernanceLogRef
  /** The organization (of the agent, on the agent path); null for an agent outside any. */
  readonly orgId: string | null
  readonly agentId: string | undefined
}

/** An organization's endpoints; 404 when it does not exist (the service-role key has every role, also there). */
const orgScope = (orgId: string) =>
  Effect.gen(function* () {
    if ((yield* (yield* IdentityRepo).getOrg(orgId)) === undefined)
      return yield* new WebhookNotFound({ error: `organization ${orgId} not found` })
    return { owner: orgEndpointOwner(orgId), log: orgGovernanceLog(orgId), orgId, agentId: undefined } satisfies Scope
  })

/** An agent's endpoints, its events those of its organization (none when unclaimed). */
const agentScope = (agentId: string) =>
  Effect.map(
    Effect.flatMap(IdentityRepo, (repo) => repo.claimOf(agentId)),
    (claim) => ({
      owner: agentEndpointOwner(agentId),
      log: agentGovernanceLog(agentId),
      orgId: claim?.org_id ?? null,
      agentId
    })
  ) satisfies Effect.Effect<Scope, unknown, unknown>

const endpointView = (endpoint: WebhookEndpoint) => ({
  endpoint_id: endpoint.endpoint_id,
  url: endpoint.url,
  description: endpoint.description,
  event_types: endpoint.event_types,
  agent_ids: endpoint.agent_ids,
  is_active: endpoint.is_active,
  disabled_reason: endpoint.disabled_reason,
  created_at: endpoint.created_at,
  updated_at: endpoint.updated_at
})

const deliveryView = ({ sequence: _sequence, ...delivery }: WebhookDeliveryRecord) => delivery

/** What a governance entry keeps of an endpoint: never a secret, and of the URL only its origin. */
const governanceState = (endpoint: WebhookEndpoint) => ({
  endpoint_id: endpoint.endpoint_id,
  url_origin: URL.canParse(endpoint.url) ? new URL(endpoint.url).origin : null,
  event_types: endpoint.event_types,
  agent_ids: endpoint.agent_ids,
  is_active: endpoint.is_active
})

const endpointNotFound = (endpointId: string) =>
  new WebhookNotFound({ error: `webhook endpoint ${endpointId} not found` })

const sqlFailure = (operation: string) => (cause: unknown) => Effect.fail(new StoreError({ operation, cause }))

const uniq = (values: ReadonlyArray<string>): ReadonlyArray<string> => [...new Set(values)]

/** The checked, normalised fields of a create or update (only those given). */
const checkFields = (scope: Scope, fields: EndpointPatch) =>
  Effect.gen(function* () {
    if (fields.url !== undefined)
      yield* checkWebhookUrl(fields.url).pipe(Effect.mapError((error) => new WebhookInvalid({ error: error.message })))
    const eventTypes = fields.event_types === undefined ? undefined : uniq(fields.event_types)
    if (eventTypes !== undefined) {
      const unknown = unknownEventTypes(eventTypes)
      if (unknown.length > 0)
        return yield* new WebhookInvalid({
          error: `event_types: unknown event types: ${unknown.join(", ")} (see GET /v1/webhooks/event-types)`
        })
    }
    const agentIds = fields.agent_ids === undefined ? undefined : uniq(fields.agent_ids)
    if (agentIds !== undefined && agentIds.length > 0) {
      const allowed =
        scope.owner.scope === "org"
          ? new Set(yield* (yield* IdentityRepo).agentsOfOrg(scope.owner.id))
          : new Set([scope.owner.id])
      const strangers = agentIds.filter((agentId) => !allowed.has(agentId))
      if (strangers.length > 0)
        return yield* new WebhookInvalid({
          error:
            scope.owner.scope === "org"
              ? `agent_ids: not agents of organization ${scope.owner.id}: ${strangers.join(", ")}`
              : `agent_ids: an agent's endpoint receives only that agent's events: ${strangers.join(", ")}`
        })
    }
    return {
      ...fields,
      ...(eventTypes === undefined ? {} : { event_types: eventTypes }),
      ...(agentIds === undefined ? {} : { agent_ids: agentIds })
    } satisfies EndpointPatch
  })

/** `change` and its governance entry, in one transaction. */
const logged = <A, E, R>(
  scope: Scope,
  actor: string,
  operation: string,
  change: Effect.Effect<A, E, R>,
  entry: (result: A, actor: string) => { action: GovernanceAction; previous_state: unknown; new_state: unknown }
) =>
  Effect.gen(function* () {
    const governance = yield* GovernanceLog
    return yield* transaction(
      yield* SqlClient.SqlClient,
      Effect.gen(function* () {
        const result = yield* change
        yield* governance.append(scope.log, { actor, ...entry(result, actor) })
        return result
      })
    ).pipe(Effect.catchTag("SqlError", sqlFailure(operation)))
  })

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

const list = (scope: Scope) =>
  Effect.map(WebhookRepo, (repo) => repo).pipe(
    Effect.flatMap((repo) => repo.list(scope.owner)),
    Effect.map((endpoints) => ({ endpoints: endpoints.map(endpointView) }))
  )

const create = (
  scope: Scope,
  payload: {
    readonly url: string
    readonly description?: string
    readonly event_types: ReadonlyArray<string>
    readonly agent_ids?: ReadonlyArray<string>
  },
  actor: string
) =>
  Effect.gen(function* () {
    const repo = yield* WebhookRepo
    const fields = yield* checkFields(scope, {
      url: payload.url,
      description: payload.description ?? "",
      event_types: payload.event_types,
      agent_ids: payload.agent_ids ?? []
    })
    if ((yield* repo.count(scope.owner)) >= MAX_ENDPOINTS_PER_OWNER)
      return yield* new WebhookConflict({
        error: `at most ${MAX_ENDPOINTS_PER_OWNER} webhook endpoints per ${scope.owner.scope === "org" ? "organization" : "agent"}; delete one first`
      })
    const secret = newSigningSecret()
    const at = yield* now
    const endpoint = yield* logged(
      scope,
      actor,
      "create webhook endpoint",
      repo.create(
        scope.owner,
        {
          url: fields.url!,
          description: fields.description!,
          event_types: fields.event_types!,
          agent_ids: fields.agent_ids!
        },
        secret,
        at
      ),
      (created) => ({ action: "webhook.create", previous_state: null, new_state: governanceState(created) })
    )
    return { ...endpointView(endpoint), signing_secret: secret }
  })

const find = (scope: Scope, endpointId: string) =>
  Effect.flatMap(WebhookRepo, (repo) => repo.get(scope.owner, endpointId)).pipe(
    Effect.flatMap((endpoint) =>
      endpoint === undefined ? Effect.fail(endpointNotFound(endpointId)) : Effect.succeed(endpoint)
    )
  )

const update = (scope: Scope, endpointId: string, payload: EndpointPatch, actor: string) =>
  Effect.gen(function* () {
    const repo = yield* WebhookRepo
    const before = yield* find(scope, endpointId)
    const patch = yield* checkFields(scope, payload)
    const at = yield* now
    const after = yield* logged(
      scope,
      actor,
      "update webhook endpoint",
      Effect.flatMap(repo.update(scope.owner, endpointId, patch, at), (updated) =>
        updated === undefined ? Effect.fail(endpointNotFound(endpointId)) : Effect.succeed(updated)
      ),
      (updated) => ({
        action: "webhook.update",
        previous_state: governanceState(before),
        new_state: governanceState(updated)
      })
    )
    return endpointView(after)
  })

const remove = (scope: Scope, endpointId: string, actor: string) =>
  Effect.gen(function* () {
    const repo = yield* WebhookRepo
    yield* logged(
      scope,
      actor,
      "delete webhook endpoint",
      Effect.flatMap(repo.remove(scope.owner, endpointId), (removed) =>
        removed === undefined ? Effect.fail(endpointNotFound(endpointId)) : Effect.succeed(removed)
      ),
      (removed) => ({ action: "webhook.delete", previous_state: governanceState(removed), new_state: null })
    )
  })

const rotate = (scope: Scope, endpointId: string, actor: string) =>
  Effect.gen(function* () {
    const repo = yield* WebhookRepo
    const secret = newSigningSecret()
    const at = yield* now
    const expires = new Date(at.getTime() + PREVIOUS_SECRET_TTL_MS)
    const endpoint = yield* logged(
      scope,
      actor,
      "rotate webhook secret",
      Effect.flatMap(repo.rotate(scope.owner, endpointId, secret, expires, at), (rotated) =>
        rotated === undefined ? Effect.fail(endpointNotFound(endpointId)) : Effect.succeed(rotated)
      ),
      (rotated) => ({
        action: "webhook.rotate_secret",
        previous_state: { endpoint_id: rotated.endpoint_id },
        new_state: { endpoint_id: rotated.endpoint_id, previous_secret_expires_at: expires.toISOString() }
      })
    )
    return {
      endpoint_id: endpoint.endpoint_id,
      signing_secret: secret,
      previous_secret_expires_at: expires.toISOString()
    }
  })

/** One `webhook.test` delivery, now, answered whatever the receiver does. */
const test = (scope: Scope, endpointId: string, sender: WebhookSender["Type"]) =>
  Effect.gen(function* () {
    const repo = yield* WebhookRepo
    const endpoint = yield* find(scope, endpointId)
    const at = yield* now
    const envelope = {
      id: eventId(TEST_EVENT_TYPE, randomUUID()),
      type: TEST_EVENT_TYPE,
      created_at: at.toISOString(),
      org_id: scope.orgId,
      ...(scope.agentId === undefined ? {} : { agent_id: scope.agentId }),
      data: { endpoint_id: endpoint.endpoint_id, message: "A test delivery from Candor" }
    }
    const secrets = yield* repo.secrets(endpoint.endpoint_id, at)
    const started = yield* Clock.currentTimeMillis
    const result = yield* Effect.either(
      sender.send({
        url: endpoint.url,
        secrets,
        body: JSON.stringify(envelope),
        event: TEST_EVENT_TYPE,
        deliveryId: envelope.id
      })
    )
    const latency = Math.max(0, Math.round((yield* Clock.currentTimeMillis) - started))
    return Either.match(result, {
      onRight: (status) => ({ success: true, status, latency_ms: latency, error: null }),
      onLeft: (error) => ({
        success: false,
        status: error.status ?? null,
        latency_ms: latency,
        error: describeFailure(error)
      })
    })
  })

const deliveries = (
  scope: Scope,
  params: {
    readonly endpoint_id?: string
    readonly status?: "pending" | "delivered" | "failed"
    readonly limit: number
    readonly offset: number
  }
) =>
  Effect.gen(function* () {
    const page = yield* (yield* WebhookRepo).deliveries(scope.owner, params)
    return { deliveries: page.items.map(deliveryView), total: page.total, limit: params.limit, offset: params.offset }
  })

const redeliver = (scope: Scope, deliveryId: string, actor: string) =>
  Effect.gen(function* () {
    const repo = yield* WebhookRepo
    const store = yield* Store
    const at = yield* now
    const delivery = yield* logged(
      scope,
      actor,
      "redeliver webhook",
      Effect.gen(function* () {
        const reset = yield* repo.redeliver(scope.owner, deliveryId, at)
        if (reset === undefined)
          return yield* new WebhookNotFound({ error: `webhook delivery ${deliveryId} not found` })
        yield* store.enqueueOutbox([deliveryDraft(reset)])
        return reset
      }),
      (reset) => ({
        action: "webhook.redeliver",
        previous_state: null,
        new_state: { delivery_id: reset.delivery_id, endpoint_id: reset.endpoint_id, event_id: reset.event_id }
      })
    )
    return deliveryView(delivery)
  })

/** What the operations read and write through. */
type Needs = WebhookRepo | IdentityRepo | GovernanceLog | Store | SqlClient.SqlClient

export const make = Effect.gen(function* () {
  const context = yield* Effect.context<Needs>()
  // Tests put a sender of their own; the process has none, and sends as the relay does.
  const sender = yield* Effect.serviceOption(WebhookSender)
  const run = <A, E>(effect: Effect.Effect<A, E, Needs>) => Effect.provide(effect, context)
  return {
    orgScope: (orgId: string) => run(orgScope(orgId)),
    agentScope: (agentId: string) => run(agentScope(agentId)),
    list: (scope: Scope) => run(list(scope)),
    create: (scope: Scope, payload: Parameters<typeof create>[1], actor: string) => run(create(scope, payload, actor)),
    get: (scope: Scope, endpointId: string) => run(Effect.map(find(scope, endpointId), endpointView)),
    update: (scope: Scope, endpointId: string, patch: EndpointPatch, actor: string) =>
      run(update(scope, endpointId, patch, actor)),
    remove: (scope: Scope, endpointId: string, actor: string) => run(remove(scope, endpointId, actor)),
    rotate: (scope: Scope, endpointId: string, actor: string) => run(rotate(scope, endpointId, actor)),
    test: (scope: Scope, endpointId: string) =>
      run(
        test(
          scope,
          endpointId,
          Option.getOrElse(sender, () => makeSender())
        )
      ),
    deliveries: (scope: Scope, params: Parameters<typeof deliveries>[1]) => run(deliveries(scope, params)),
    redeliver: (scope: Scope, deliveryId: string, actor: string) => run(redeliver(scope, deliveryId, actor))
  }
})

export class Webhooks extends Context.Tag("candor/services/Webhooks")<Webhooks, Effect.Effect.Success<typeof make>>() {}

export const layer = Layer.effect(Webhooks, make)
