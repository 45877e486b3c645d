/**
 * Webhook endpoints and their deliveries as the API publishes them (docs/webhooks.md, docs/api.md
 * "Webhooks"): the requests, the endpoint (its secret shown only when created or rotated), a test
 * delivery's result and the deliveries, with the limits the requests are held to.
 */
import * as Schema from "effect/Schema"
import { AgentId } from "./Ids.js"

/** At most this many endpoints per organization or agent. */
export const MAX_ENDPOINTS_PER_OWNER = 25
export const MAX_DESCRIPTION_LENGTH = 500
/** Agents one organization endpoint may name. */
export const MAX_AGENT_IDS = 50
/** Longest endpoint URL. */
export const MAX_WEBHOOK_URL_LENGTH = 2048

const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

const Url = Schema.String.pipe(
  Schema.maxLength(MAX_WEBHOOK_URL_LENGTH, { message: () => `at most ${MAX_WEBHOOK_URL_LENGTH} characters` })
).annotations({
  description: "https; its host must not resolve to a private, loopback or link-local address (docs/webhooks.md)"
})

const Description = Schema.String.pipe(
  Schema.maxLength(MAX_DESCRIPTION_LENGTH, { message: () => `at most ${MAX_DESCRIPTION_LENGTH} characters` })
)

const EventTypeList = Schema.Array(Schema.String).annotations({
  description: "Catalogue event types (GET /v1/webhooks/event-types); empty: every type"
})

const AgentIdList = Schema.Array(AgentId)
  .pipe(Schema.maxItems(MAX_AGENT_IDS, { message: () => `at most ${MAX_AGENT_IDS} agents` }))
  .annotations({ description: "Agents of the organization whose events are sent; empty: every agent" })

export const CreateWebhookEndpoint = Schema.Struct({
  url: Url,
  description: optional(Description),
  event_types: EventTypeList,
  agent_ids: optional(AgentIdList)
}).annotations({
  identifier: "CreateWebhookEndpoint",
  description: `At most ${MAX_ENDPOINTS_PER_OWNER} endpoints per organization or agent`
})

export const UpdateWebhookEndpoint = Schema.Struct({
  url: optional(Url),
  description: optional(Description),
  event_types: optional(EventTypeList),
  agent_ids: optional(AgentIdList),
  is_active: optional(
    Schema.Boolean.annotations({
      description: "true re-enables a disabled endpoint (clears disabled_reason and the failure count)"
    })
  )
}).annotations({ identifier: "UpdateWebhookEndpoint" })

const endpointFields = {
  endpoint_id: Schema.String,
  url: Schema.String,
  description: Schema.String,
  event_types: Schema.Array(Schema.String),
  agent_ids: Schema.Array(Schema.String),
  is_active: Schema.Boolean,
  disabled_reason: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  updated_at: Schema.String
}

export const WebhookEndpoint = Schema.Struct(endpointFields).annotations({ identifier: "WebhookEndpoint" })
export type WebhookEndpoint = typeof WebhookEndpoint.Type

export const CreatedWebhookEndpoint = Schema.Struct({
  ...endpointFields,
  signing_secret: Schema.String.annotations({ description: "Shown only here and on rotate-secret" })
}).annotations({ identifier: "CreatedWebhookEndpoint" })

export const WebhookEndpointList = Schema.Struct({ endpoints: Schema.Array(WebhookEndpoint) }).annotations({
  identifier: "WebhookEndpointList"
})

export const RotatedWebhookSecret = Schema.Struct({
  endpoint_id: Schema.String,
  signing_secret: Schema.String,
  previous_secret_expires_at: Schema.String.annotations({
    description: "Until then deliveries are signed with both secrets"
  })
}).annotations({ identifier: "RotatedWebhookSecret" })

export const WebhookTestResult = Schema.Struct({
  success: Schema.Boolean,
  status: Schema.NullOr(Schema.Int).annotations({ description: "The receiver's status; null when none answered" }),
  latency_ms: Schema.Int,
  error: Schema.NullOr(Schema.String)
}).annotations({ identifier: "WebhookTestResult" })

export const WebhookDeliveryStatus = Schema.Literal("pending", "delivered", "failed")
export type WebhookDeliveryStatus = typeof WebhookDeliveryStatus.Type

export const WebhookDelivery = Schema.Struct({
  delivery_id: Schema.String,
  endpoint_id: Schema.String,
  event_id: Schema.String,
  event_type: Schema.String,
  status: WebhookDeliveryStatus,
  attempts: Schema.Int,
  last_status: Schema.NullOr(Schema.Int),
  last_error: Schema.NullOr(Schema.String),
  next_attempt_at: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  delivered_at: Schema.NullOr(Schema.String),
  latency_ms: Schema.NullOr(Schema.Int)
}).annotations({ identifier: "WebhookDelivery" })
export type WebhookDelivery = typeof WebhookDelivery.Type

export const WebhookDeliveryList = Schema.Struct({
  deliveries: Schema.Array(WebhookDelivery).annotations({ description: "Newest first" }),
  total: Schema.Int,
  limit: Schema.Int,
  offset: Schema.Int
}).annotations({ identifier: "WebhookDeliveryList" })
