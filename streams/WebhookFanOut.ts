/**
 * The webhook fan-out: one feed event becomes one delivery per subscribed endpoint.
 * (Stub: the webhooks work implements it.)
 */
import * as Effect from "effect/Effect"
import type { WebhookEnvelope } from "../core/schema/WebhookEvents.js"
import type { StoreError } from "../adapters/store/Store.js"

export const fanOutEvent = (_envelope: WebhookEnvelope): Effect.Effect<void, StoreError> => Effect.void
