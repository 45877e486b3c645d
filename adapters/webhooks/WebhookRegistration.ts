/**
 * Webhook registrations: the event names an endpoint may subscribe to, and the checks a new
 * registration passes before it is stored (the reference's `POST /v1/aip/register` rules: an HTTPS
 * callback, a secret of at least 32 characters, a `reg-<uuid>` id).
 */
import * as Data from "effect/Data"
import * as Either from "effect/Either"
import { randomUUID } from "node:crypto"
import type { WebhookRegistration } from "../store/Store.js"

/**
 * `verdict` and `drift_alert` (the AIP reference's events) are sent by the actors; `agent.paused`
 * (a pause, manual or automatic), `agent.resumed` (resume and reactivate) and `agent.killed` by a
 * containment change (streams/Containment.ts). `containment` is the older name of `agent.paused`.
 * `conscience.values_updated` is sent to the registrations of an organization's agents when its
 * conscience values change.
 */
export const WEBHOOK_EVENTS = [
  "verdict",
  "drift_alert",
  "containment",
  "agent.paused",
  "agent.resumed",
  "agent.killed",
  "conscience.values_updated"
] as const
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number]

export const MIN_SECRET_LENGTH = 32

/** Plain HTTP only to this machine, for development and tests. */
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"])

export const isAllowedCallbackUrl = (url: string): boolean => {
  if (!URL.canParse(url)) return false
  const parsed = new URL(url)
  if (parsed.username !== "" || parsed.password !== "") return false
  return parsed.protocol === "https:" || (parsed.protocol === "http:" && LOOPBACK_HOSTS.has(parsed.hostname))
}

export interface WebhookRegistrationRequest {
  readonly agent_id: string
  readonly callback_url: string
  readonly secret: string
  readonly events: ReadonlyArray<string>
}

/** Why a registration was refused, as the API's 400 `error` text (never quoting the secret). */
export class InvalidWebhookRegistration extends Data.TaggedError("InvalidWebhookRegistration")<{
  readonly message: string
}> {}

/** A new, active registration with a fresh `reg-<uuid>`, or why it cannot be one. */
export const newWebhookRegistration = (
  request: WebhookRegistrationRequest,
  now: Date
): Either.Either<WebhookRegistration, InvalidWebhookRegistration> => {
  if (!isAllowedCallbackUrl(request.callback_url)) {
    return Either.left(
      new InvalidWebhookRegistration({
        message: "callback_url must be an https URL (http only on 127.0.0.1 or localhost)"
      })
    )
  }
  if (request.secret.length < MIN_SECRET_LENGTH) {
    return Either.left(
      new InvalidWebhookRegistration({ message: `secret must be at least ${MIN_SECRET_LENGTH} characters` })
    )
  }
  const unknown = request.events.filter((event) => !(WEBHOOK_EVENTS as ReadonlyArray<string>).includes(event))
  if (request.events.length === 0 || unknown.length > 0) {
    return Either.left(
      new InvalidWebhookRegistration({ message: `events must be a non-empty list of: ${WEBHOOK_EVENTS.join(", ")}` })
    )
  }
  return Either.right({
    registration_id: `reg-${randomUUID()}`,
    agent_id: request.agent_id,
    callback_url: request.callback_url,
    secret: request.secret,
    events: [...new Set(request.events)],
    active: true,
    created_at: now.toISOString()
  })
}
