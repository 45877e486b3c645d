/** The public catalogue of webhook and stream event types (docs/api.md, "Webhook event types"). */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { InternalError } from "../../../adapters/http/ApiErrors.js"

export const EventTypeInfo = Schema.Struct({
  type: Schema.String,
  description: Schema.String,
  status: Schema.Literal("active", "declared").annotations({
    description: "`declared`: may be subscribed to now, fires once its feature lands"
  }),
  data_schema: Schema.Unknown.annotations({ description: "JSON Schema (draft-07) of the event's `data`" })
}).annotations({ identifier: "EventTypeInfo" })

export const EventTypes = Schema.Struct({ event_types: Schema.Array(EventTypeInfo) }).annotations({
  identifier: "EventTypes"
})

export class WebhookEventTypesApi extends HttpApiGroup.make("webhookEventTypes")
  .add(HttpApiEndpoint.get("listEventTypes", "/webhooks/event-types").addSuccess(EventTypes))
  .addError(InternalError) {}
