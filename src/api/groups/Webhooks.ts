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
import { AgentId, Identifier } from "../../../core/schema/Ids.js"
import { IntParam } from "./Checkpoints.js"
import {
  CreateWebhookEndpoint,
  UpdateWebhookEndpoint,
  WebhookEndpoint,
  CreatedWebhookEndpoint,
  WebhookEndpointList,
  RotatedWebhookSecret,
  WebhookTestResult,
  WebhookDeliveryStatus,
  WebhookDelivery,
  WebhookDeliveryList
} from "../../../core/schema/Webhook.js"
import { WebhookConflict, WebhookInvalid, WebhookNotFound } from "../../../services/Webhooks.js"

export const DELIVERY_LIMIT = { min: 1, max: 100, default: 20 } as const

export const WebhookDeliveryParams = Schema.Struct({
  endpoint_id: Schema.optionalWith(Schema.String, { exact: true }),
  status: Schema.optionalWith(WebhookDeliveryStatus, { exact: true }),
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
      .addSuccess(WebhookDelivery, { status: 202 })
  )
  .add(
    HttpApiEndpoint.get("orgGetWebhook", "/orgs/:org_id/webhooks/:endpoint_id")
      .setPath(OrgEndpointPath)
      .addSuccess(WebhookEndpoint)
  )
  .add(
    HttpApiEndpoint.patch("orgUpdateWebhook", "/orgs/:org_id/webhooks/:endpoint_id")
      .setPath(OrgEndpointPath)
      .setPayload(UpdateWebhookEndpoint)
      .addSuccess(WebhookEndpoint)
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
      .addSuccess(WebhookDelivery, { status: 202 })
  )
  .add(
    HttpApiEndpoint.get("agentGetWebhook", "/agents/:agent_id/webhooks/:endpoint_id")
      .setPath(AgentEndpointPath)
      .addSuccess(WebhookEndpoint)
  )
  .add(
    HttpApiEndpoint.patch("agentUpdateWebhook", "/agents/:agent_id/webhooks/:endpoint_id")
      .setPath(AgentEndpointPath)
      .setPayload(UpdateWebhookEndpoint)
      .addSuccess(WebhookEndpoint)
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
