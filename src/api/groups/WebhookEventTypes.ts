/** The public catalogue of webhook and stream event types (docs/api.md, "Webhook event types"). */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { InternalError } from "../../../adapters/http/ApiErrors.js"
import { EventTypes } from "../../../core/schema/WebhookEvents.js"

export class WebhookEventTypesApi extends HttpApiGroup.make("webhookEventTypes")
  .add(HttpApiEndpoint.get("listEventTypes", "/webhooks/event-types").addSuccess(EventTypes))
  .addError(InternalError) {}
