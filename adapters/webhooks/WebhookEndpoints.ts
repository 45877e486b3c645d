/**
 * The rules of webhook endpoints (docs/webhooks.md): their limits, their signing secrets, and which
 * endpoints an event goes to. Pure: the API checks requests with these, the fan-out selects with them.
 */
import { randomBytes } from "node:crypto"
import { typeSelected } from "../../core/Events.js"

// The limits are the published requests' (core/schema/Webhook.ts); re-exported for the code that applies them.
export { MAX_AGENT_IDS, MAX_DESCRIPTION_LENGTH, MAX_ENDPOINTS_PER_OWNER } from "../../core/schema/Webhook.js"
/** After a rotation the previous secret keeps signing beside the new one this long. */
export const PREVIOUS_SECRET_TTL_MS = 24 * 60 * 60 * 1000

/** Sent by `POST …/webhooks/{endpoint_id}/test` only: never fanned out, whatever an endpoint subscribes to. */
export const TEST_EVENT_TYPE = "webhook.test"

/** `whsec_` and 32 random bytes, base64url: shown once, when created or rotated. */
export const newSigningSecret = (): string => `whsec_${randomBytes(32).toString("base64url")}`

export interface EndpointSelection {
  readonly event_types: ReadonlyArray<string>
  readonly agent_ids: ReadonlyArray<string>
}

/**
 * Whether an endpoint receives an event: its types are empty (everything) or name the event's, and
 * its agents are empty (every agent) or hold the event's agent.
 */
export const endpointSelects = (
  endpoint: EndpointSelection,
  event: { readonly type: string; readonly agent_id?: string | undefined }
): boolean =>
  event.type !== TEST_EVENT_TYPE &&
  typeSelected(event.type, endpoint.event_types) &&
  (endpoint.agent_ids.length === 0 || (event.agent_id !== undefined && endpoint.agent_ids.includes(event.agent_id)))
