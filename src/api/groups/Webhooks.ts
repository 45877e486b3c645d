/**
 * Webhook endpoints of organizations and agents (docs/webhooks.md, docs/api.md "Webhooks"): the
 * endpoints, their secrets (shown only when created or rotated), a test delivery, and the deliveries
 * with redelivery. Owner and Admin only (an agent outside any organization: its owner); the
 * service-role key may do everything.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { BadRequest, Conflict, Forbidden, InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import {
  MAX_AGENT_IDS,
  MAX_DESCRIPTION_LENGTH,
  MAX_ENDPOINTS_PER_OWNER
} from "../../../adapters/webhooks/WebhookEndpoints.js"
import { MAX_WEBHOOK_URL_LENGTH } from "../../../adapters/webhooks/WebhookUrlGuard.js"
import { AgentId, Identifier } from "../../../core/schema/Ids.js"
import { IntParam } from "./Checkpoints.js"
import { WebhookConflict, WebhookInvalid, WebhookNotFound } from "../../../services/Webhooks.js"

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

export const WebhookEndpointView = Schema.Struct(endpointFields).annotations({ identifier: "WebhookEndpoint" })

export const CreatedWebhookEndpoint = Schema.Struct({
  ...endpointFields,
  signing_secret: Schema.String.annotations({ description: "Shown only here and on rotate-secret" })
}).annotations({ identifier: "CreatedWebhookEndpoint" })

export const WebhookEndpointList = Schema.Struct({ endpoints: Schema.Array(WebhookEndpointView) }).annotations({
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

export const DeliveryStatus = Schema.Literal("pending", "delivered", "failed")

export const WebhookDeliveryView = Schema.Struct({
  delivery_id: Schema.String,
  endpoint_id: Schema.String,
  event_id: Schema.String,
  event_type: Schema.String,
  status: DeliveryStatus,
  attempts: Schema.Int,
  last_status: Schema.NullOr(Schema.Int),
  last_error: Schema.NullOr(Schema.String),
  next_attempt_at: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  delivered_at: Schema.NullOr(Schema.String),
  latency_ms: Schema.NullOr(Schema.Int)
}).annotations({ identifier: "WebhookDelivery" })

export const WebhookDeliveryList = Schema.Struct({
  deliveries: Schema.Array(WebhookDeliveryView).annotations({ description: "Newest first" }),
  total: Schema.Int,
  limit: Schema.Int,
  offset: Schema.Int
}).annotations({ identifier: "WebhookDeliveryList" })

export const DELIVERY_LIMIT = { min: 1, max: 100, default: 20 } as const

export const WebhookDeliveryParams = Schema.Struct({
  endpoint_id: optional(Schema.String),
  status: optional(DeliveryStatus),
  limit: Schema.optionalWith(IntParam(DELIVERY_LIMIT.min, DELIVERY_LIMIT.max), {
    default: () => DELIVERY_LIMIT.default,
    exact: true
  }),
  offset: Schema.optionalWith(IntParam(0, Number.MAX_SAFE_INTEGER), { default: () => 0, exact: true })
})

const OrgPath = Schema.Struct({ org_id: Identifier })
const OrgEndpointPath = Schema.Struct({ org_id: Identifier, endpoint_id: Identifier })
const OrgDeliveryPath = Schema.Struct({ org_id: Identifier, delivery_id: Identifier })
const AgentPath = Schema.Struct({ agent_id: AgentId })
const AgentEndpointPath = Schema.Struct({ agent_id: AgentId, endpoint_id: Identifier })
const AgentDeliveryPath = Schema.Struct({ agent_id: AgentId, delivery_id: Identifier })

export class WebhooksApi extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.get("orgListWebhooks", "/orgs/:org_id/webhooks").setPath(OrgPath).addSuccess(WebhookEndpointList)
  )
  .add(
    HttpApiEndpoint.post("orgCreateWebhook", "/orgs/:org_id/webhooks")
      .setPath(OrgPath)
      .setPayload(CreateWebhookEndpoint)
      .addSuccess(CreatedWebhookEndpoint, { status: 201 })
  )
  .add(
    HttpApiEndpoint.get("orgWebhookDeliveries", "/orgs/:org_id/webhooks/deliveries")
      .setPath(OrgPath)
      .setUrlParams(WebhookDeliveryParams)
      .addSuccess(WebhookDeliveryList)
  )
  .add(
    HttpApiEndpoint.post("orgRedeliverWebhook", "/orgs/:org_id/webhooks/deliveries/:delivery_id/redeliver")
      .setPath(OrgDeliveryPath)
      .addSuccess(WebhookDeliveryView, { status: 202 })
  )
  .add(
    HttpApiEndpoint.get("orgGetWebhook", "/orgs/:org_id/webhooks/:endpoint_id")
      .setPath(OrgEndpointPath)
      .addSuccess(WebhookEndpointView)
  )
  .add(
    HttpApiEndpoint.patch("orgUpdateWebhook", "/orgs/:org_id/webhooks/:endpoint_id")
      .setPath(OrgEndpointPath)
      .setPayload(UpdateWebhookEndpoint)
      .addSuccess(WebhookEndpointView)
  )
  .add(
    HttpApiEndpoint.del("orgDeleteWebhook", "/orgs/:org_id/webhooks/:endpoint_id")
      .setPath(OrgEndpointPath)
      .addSuccess(HttpApiSchema.NoContent)
  )
  .add(
    HttpApiEndpoint.post("orgRotateWebhookSecret", "/orgs/:org_id/webhooks/:endpoint_id/rotate-secret")
      .setPath(OrgEndpointPath)
      .addSuccess(RotatedWebhookSecret)
  )
  .add(
    HttpApiEndpoint.post("orgTestWebhook", "/orgs/:org_id/webhooks/:endpoint_id/test")
      .setPath(OrgEndpointPath)
      .addSuccess(WebhookTestResult)
  )
  .add(
    HttpApiEndpoint.get("agentListWebhooks", "/agents/:agent_id/webhooks")
      .setPath(AgentPath)
      .addSuccess(WebhookEndpointList)
  )
  .add(
    HttpApiEndpoint.post("agentCreateWebhook", "/agents/:agent_id/webhooks")
      .setPath(AgentPath)
      .setPayload(CreateWebhookEndpoint)
      .addSuccess(CreatedWebhookEndpoint, { status: 201 })
  )
  .add(
    HttpApiEndpoint.get("agentWebhookDeliveries", "/agents/:agent_id/webhooks/deliveries")
      .setPath(AgentPath)
      .setUrlParams(WebhookDeliveryParams)
      .addSuccess(WebhookDeliveryList)
  )
  .add(
    HttpApiEndpoint.post("agentRedeliverWebhook", "/agents/:agent_id/webhooks/deliveries/:delivery_id/redeliver")
      .setPath(AgentDeliveryPath)
      .addSuccess(WebhookDeliveryView, { status: 202 })
  )
  .add(
    HttpApiEndpoint.get("agentGetWebhook", "/agents/:agent_id/webhooks/:endpoint_id")
      .setPath(AgentEndpointPath)
      .addSuccess(WebhookEndpointView)
  )
  .add(
    HttpApiEndpoint.patch("agentUpdateWebhook", "/agents/:agent_id/webhooks/:endpoint_id")
      .setPath(AgentEndpointPath)
      .setPayload(UpdateWebhookEndpoint)
      .addSuccess(WebhookEndpointView)
  )
  .add(
    HttpApiEndpoint.del("agentDeleteWebhook", "/agents/:agent_id/webhooks/:endpoint_id")
      .setPath(AgentEndpointPath)
      .addSuccess(HttpApiSchema.NoContent)
  )
  .add(
    HttpApiEndpoint.post("agentRotateWebhookSecret", "/agents/:agent_id/webhooks/:endpoint_id/rotate-secret")
      .setPath(AgentEndpointPath)
      .addSuccess(RotatedWebhookSecret)
  )
  .add(
    HttpApiEndpoint.post("agentTestWebhook", "/agents/:agent_id/webhooks/:endpoint_id/test")
      .setPath(AgentEndpointPath)
      .addSuccess(WebhookTestResult)
  )
  .addError(BadRequest)
  .addError(Forbidden)
  .addError(NotFound)
  .addError(Conflict)
  .addError(InternalError)
  // The Webhooks service's own errors (services/Webhooks.ts), each with its status.
  .addError(WebhookNotFound)
  .addError(WebhookInvalid)
  .addError(WebhookConflict)
  .middleware(Authentication) {}
