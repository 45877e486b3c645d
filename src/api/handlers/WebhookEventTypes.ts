/** The catalogue, with each `data` schema rendered as JSON Schema once, from core/schema's definitions. */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import * as JSONSchema from "effect/JSONSchema"
import { WEBHOOK_EVENT_TYPE_NAMES, WEBHOOK_EVENT_TYPES } from "../../../core/schema/WebhookEvents.js"
import { CandorApi } from "../Api.js"

const catalogue = {
  event_types: WEBHOOK_EVENT_TYPE_NAMES.map((type) => {
    const { data, description, status } = WEBHOOK_EVENT_TYPES[type]
    return { type, description, status, data_schema: JSONSchema.make(data) }
  })
}

export const WebhookEventTypesLive = HttpApiBuilder.group(CandorApi, "webhookEventTypes", (handlers) =>
  handlers.handle("listEventTypes", () => Effect.succeed(catalogue))
)
