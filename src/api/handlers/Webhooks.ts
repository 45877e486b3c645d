/**
 * Webhook endpoints (docs/webhooks.md). Who may act: Owner and Admin of the organization, on its
 * endpoints and on those of its agents; the claimer of an agent outside any organization; the
 * service-role key. Others get 404 (an organization or agent they cannot see) or 403 (a member, a
 * member-role key). Impersonation sessions may not use these routes at all: an endpoint decides
 * where an organization's events go.
 *
 * Every change is stored with its governance entry (on the organization's or the agent's log) in one
 * transaction. Entries and answers never hold a signing secret, except the answers of create and
 * rotate-secret, which show the new one once; a governance entry records the URL's origin only (a
 * path or query may carry a receiver's token).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { randomUUID } from "node:crypto"
import { AccessControl } from "../../../adapters/auth/AccessControl.js"
import { actorOf, CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { BadRequest, Conflict, Forbidden, NotFound } from "../../../adapters/http/ApiErrors.js"
import { GovernanceLog } from "../../../adapters/store/GovernanceLog.js"
import { IdentityRepo } from "../../../adapters/store/identity/IdentityRepo.js"
import { Store, StoreError } from "../../../adapters/store/Store.js"
import { transaction } from "../../../adapters/store/Transaction.js"
import {
  agentEndpointOwner,
  type EndpointOwner,
  type EndpointPatch,
  orgEndpointOwner,
  type WebhookDeliveryRecord,
  type WebhookEndpoint,
  WebhookRepo
} from "../../../adapters/store/WebhookRepo.js"
import {
  MAX_ENDPOINTS_PER_OWNER,
  newSigningSecret,
  PREVIOUS_SECRET_TTL_MS,
  TEST_EVENT_TYPE
} from "../../../adapters/webhooks/WebhookEndpoints.js"
import { make as makeSender, WebhookSender } from "../../../adapters/webhooks/WebhookSender.js"
import { checkWebhookUrl } from "../../../adapters/webhooks/WebhookUrlGuard.js"
import { eventId } from "../../../core/Events.js"
import { agentGovernanceLog, type GovernanceLogRef, orgGovernanceLog } from "../../../core/Governance.js"
import type { GovernanceAction } from "../../../core/schema/Governance.js"
import { unknownEventTypes } from "../../../core/schema/WebhookEvents.js"
import { deliveryDraft } from "../../../adapters/store/WebhookDeliveryOutbox.js"
import { describeFailure } from "../../../adapters/webhooks/WebhookSender.js"
import { CandorApi } from "../Api.js"
import { internal, requireOrgRole } from "./Access.js"

/** Whose endpoints a request is about, where its changes are logged, and the organization of its events. */
interface Scope {
  readonly owner: EndpointOwner
  readonly log: GovernanceLogRef
  /** The organization (of the agent, on the agent path); null for an agent outside any. */
  readonly orgId: string | null
  readonly agentId: string | undefined
}

const noImpersonation = Effect.gen(function* () {
  const principal = yield* CurrentPrincipal
  if (principal.kind === "user" && principal.impersonation !== undefined)
    return yield* new Forbidden({ error: "impersonation sessions may not use the webhook routes" })
})

const orgScope = (orgId: string, write: boolean) =>
  Effect.gen(function* () {
    yield* noImpersonation
    yield* requireOrgRole(orgId, "admin", write)
    // The service-role key has every role, also in an organization that does not exist.
    if ((yield* (yield* IdentityRepo).getOrg(orgId)) === undefined)
      return yield* new NotFound({ error: `organization ${orgId} not found` })
    return { owner: orgEndpointOwner(orgId), log: orgGovernanceLog(orgId), orgId, agentId: undefined } satisfies Scope
  })

/** Admin and up on the agent (its claimer, for an agent outside any organization). */
const agentScope = (agentId: string, write: boolean) =>
  Effect.gen(function* () {
    yield* noImpersonation
    const principal = yield* CurrentPrincipal
    const access = yield* AccessControl
    yield* access.agent(principal, agentId, "write")
    if (write) yield* access.write(principal)
    const claim = yield* (yield* IdentityRepo).claimOf(agentId)
    return {
      owner: agentEndpointOwner(agentId),
      log: agentGovernanceLog(agentId),
      orgId: claim?.org_id ?? null,
      agentId
    } satisfies Scope
  })

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

const endpointNotFound = (endpointId: string) => new NotFound({ error: `webhook endpoint ${endpointId} not found` })

const sqlFailure = (operation: string) => (cause: unknown) => Effect.fail(new StoreError({ operation, cause }))

const uniq = (values: ReadonlyArray<string>): ReadonlyArray<string> => [...new Set(values)]

/** The checked, normalised fields of a create or update (only those given). */
const checkFields = (scope: Scope, fields: EndpointPatch) =>
  Effect.gen(function* () {
    if (fields.url !== undefined)
      yield* checkWebhookUrl(fields.url).pipe(Effect.mapError((error) => new BadRequest({ error: error.message })))
    const eventTypes = fields.event_types === undefined ? undefined : uniq(fields.event_types)
    if (eventTypes !== undefined) {
      const unknown = unknownEventTypes(eventTypes)
      if (unknown.length > 0)
        return yield* new BadRequest({
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
        return yield* new BadRequest({
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
  operation: string,
  change: Effect.Effect<A, E, R>,
  entry: (result: A, actor: string) => { action: GovernanceAction; previous_state: unknown; new_state: unknown }
) =>
  Effect.gen(function* () {
    const actor = actorOf(yield* CurrentPrincipal)
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
  }
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
      return yield* new Conflict({
        error: `at most ${MAX_ENDPOINTS_PER_OWNER} webhook endpoints per ${scope.owner.scope === "org" ? "organization" : "agent"}; delete one first`
      })
    const secret = newSigningSecret()
    const at = yield* now
    const endpoint = yield* logged(
      scope,
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

const get = (scope: Scope, endpointId: string) =>
  Effect.flatMap(WebhookRepo, (repo) => repo.get(scope.owner, endpointId)).pipe(
    Effect.flatMap((endpoint) =>
      endpoint === undefined ? Effect.fail(endpointNotFound(endpointId)) : Effect.succeed(endpoint)
    )
  )

const update = (scope: Scope, endpointId: string, payload: EndpointPatch) =>
  Effect.gen(function* () {
    const repo = yield* WebhookRepo
    const before = yield* get(scope, endpointId)
    const patch = yield* checkFields(scope, payload)
    const at = yield* now
    const after = yield* logged(
      scope,
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

const remove = (scope: Scope, endpointId: string) =>
  Effect.gen(function* () {
    const repo = yield* WebhookRepo
    yield* logged(
      scope,
      "delete webhook endpoint",
      Effect.flatMap(repo.remove(scope.owner, endpointId), (removed) =>
        removed === undefined ? Effect.fail(endpointNotFound(endpointId)) : Effect.succeed(removed)
      ),
      (removed) => ({ action: "webhook.delete", previous_state: governanceState(removed), new_state: null })
    )
  })

const rotate = (scope: Scope, endpointId: string) =>
  Effect.gen(function* () {
    const repo = yield* WebhookRepo
    const secret = newSigningSecret()
    const at = yield* now
    const expires = new Date(at.getTime() + PREVIOUS_SECRET_TTL_MS)
    const endpoint = yield* logged(
      scope,
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
const test = (scope: Scope, endpointId: string) =>
  Effect.gen(function* () {
    const repo = yield* WebhookRepo
    const endpoint = yield* get(scope, endpointId)
    const sender = Option.getOrElse(yield* Effect.serviceOption(WebhookSender), () => makeSender())
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

const redeliver = (scope: Scope, deliveryId: string) =>
  Effect.gen(function* () {
    const repo = yield* WebhookRepo
    const store = yield* Store
    const at = yield* now
    const delivery = yield* logged(
      scope,
      "redeliver webhook",
      Effect.gen(function* () {
        const reset = yield* repo.redeliver(scope.owner, deliveryId, at)
        if (reset === undefined) return yield* new NotFound({ error: `webhook delivery ${deliveryId} not found` })
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

const isStoreError = (error: unknown): error is StoreError => error instanceof StoreError

/** A route under /orgs/{org_id}/webhooks: its scope (authorised, impersonation refused), then `run`; a store failure is a 500. */
const inOrg = <A, E, R>(orgId: string, write: boolean, run: (scope: Scope) => Effect.Effect<A, E, R>) =>
  orgScope(orgId, write).pipe(Effect.flatMap(run), Effect.catchIf(isStoreError, internal))

/** The same under /agents/{agent_id}/webhooks. */
const inAgent = <A, E, R>(agentId: string, write: boolean, run: (scope: Scope) => Effect.Effect<A, E, R>) =>
  agentScope(agentId, write).pipe(Effect.flatMap(run), Effect.catchIf(isStoreError, internal))

export const WebhooksLive = HttpApiBuilder.group(CandorApi, "webhooks", (handlers) =>
  handlers
    .handle("orgListWebhooks", ({ path }) => inOrg(path.org_id, false, (scope) => list(scope)))
    .handle("orgCreateWebhook", ({ path, payload }) => inOrg(path.org_id, true, (scope) => create(scope, payload)))
    .handle("orgWebhookDeliveries", ({ path, urlParams }) =>
      inOrg(path.org_id, false, (scope) => deliveries(scope, urlParams))
    )
    .handle("orgRedeliverWebhook", ({ path }) =>
      inOrg(path.org_id, true, (scope) => redeliver(scope, path.delivery_id))
    )
    .handle("orgGetWebhook", ({ path }) =>
      inOrg(path.org_id, false, (scope) => Effect.map(get(scope, path.endpoint_id), endpointView))
    )
    .handle("orgUpdateWebhook", ({ path, payload }) =>
      inOrg(path.org_id, true, (scope) => update(scope, path.endpoint_id, payload))
    )
    .handle("orgDeleteWebhook", ({ path }) => inOrg(path.org_id, true, (scope) => remove(scope, path.endpoint_id)))
    .handle("orgRotateWebhookSecret", ({ path }) =>
      inOrg(path.org_id, true, (scope) => rotate(scope, path.endpoint_id))
    )
    .handle("orgTestWebhook", ({ path }) => inOrg(path.org_id, true, (scope) => test(scope, path.endpoint_id)))
    .handle("agentListWebhooks", ({ path }) => inAgent(path.agent_id, false, (scope) => list(scope)))
    .handle("agentCreateWebhook", ({ path, payload }) =>
      inAgent(path.agent_id, true, (scope) => create(scope, payload))
    )
    .handle("agentWebhookDeliveries", ({ path, urlParams }) =>
      inAgent(path.agent_id, false, (scope) => deliveries(scope, urlParams))
    )
    .handle("agentRedeliverWebhook", ({ path }) =>
      inAgent(path.agent_id, true, (scope) => redeliver(scope, path.delivery_id))
    )
    .handle("agentGetWebhook", ({ path }) =>
      inAgent(path.agent_id, false, (scope) => Effect.map(get(scope, path.endpoint_id), endpointView))
    )
    .handle("agentUpdateWebhook", ({ path, payload }) =>
      inAgent(path.agent_id, true, (scope) => update(scope, path.endpoint_id, payload))
    )
    .handle("agentDeleteWebhook", ({ path }) =>
      inAgent(path.agent_id, true, (scope) => remove(scope, path.endpoint_id))
    )
    .handle("agentRotateWebhookSecret", ({ path }) =>
      inAgent(path.agent_id, true, (scope) => rotate(scope, path.endpoint_id))
    )
    .handle("agentTestWebhook", ({ path }) => inAgent(path.agent_id, true, (scope) => test(scope, path.endpoint_id)))
)
