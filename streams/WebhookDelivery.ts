/**
 * Webhook deliveries: the `webhook` outbox relay's handler (docs/webhooks.md, "Delivery").
 *
 * An item names a delivery row (streams/WebhookFanOut.ts stored it with its envelope) and its
 * attempt sequence. Each attempt signs the stored envelope's JSON with the endpoint's live secrets
 * as they are now and posts it (adapters/webhooks/WebhookSender.ts). Schedule: at once, then after
 * 10 s, 30 s, 2 min, 10 min and 1 h; after the sixth failed attempt the delivery is `failed` (kept,
 * and may be redelivered). A 429 is retried after its `Retry-After`, at least 60 s; any other 4xx is
 * final; 5xx, network errors, timeouts and redirects are retried.
 *
 * Every attempt counts against its endpoint: a success resets its consecutive failures, a failure
 * adds one, and at 100 the endpoint is disabled. A delivery whose endpoint was deleted or disabled
 * ends as failed, saying so. Errors recorded name the failure (`HTTP 500`, `timeout`), never a
 * secret or what the receiver answered.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { recordDelivery } from "../adapters/metrics/WebhookMetrics.js"
import type { OutboxItem, Store } from "../adapters/store/Store.js"
import { WebhookDeliveryItem } from "../adapters/store/WebhookDeliveryOutbox.js"
import { WebhookRepo } from "../adapters/store/WebhookRepo.js"
import { describeFailure, WebhookSender, type WebhookDeliveryError } from "../adapters/webhooks/WebhookSender.js"
import { decodePayload, RetryIn } from "./OutboxRelay.js"

/** Delays before the 2nd to 6th attempts; the 6th failing is final. */
export const RETRY_DELAYS_MS: ReadonlyArray<number> = [10_000, 30_000, 120_000, 600_000, 3_600_000]
export const MAX_DELIVERY_ATTEMPTS = RETRY_DELAYS_MS.length + 1
/** A 429 waits at least this long, whatever its `Retry-After`. */
export const MIN_RATE_LIMITED_DELAY_MS = 60_000

const decodeItem = decodePayload(WebhookDeliveryItem)

/** What a failed attempt means: retry after so long, or stop. */
export type Verdict = { readonly _tag: "Retry"; readonly ms: number } | { readonly _tag: "Final" }

export const classifyFailure = (error: WebhookDeliveryError, attempt: number): Verdict => {
  if (attempt >= MAX_DELIVERY_ATTEMPTS) return { _tag: "Final" }
  if (error.reason === "refused") return { _tag: "Final" }
  if (error.reason === "status" && error.status === 429)
    return { _tag: "Retry", ms: Math.max(MIN_RATE_LIMITED_DELAY_MS, (error.retryAfterSeconds ?? 0) * 1000) }
  if (error.reason === "status" && error.status !== undefined && error.status >= 400 && error.status < 500)
    return { _tag: "Final" }
  return { _tag: "Retry", ms: RETRY_DELAYS_MS[attempt - 1] ?? RETRY_DELAYS_MS[RETRY_DELAYS_MS.length - 1]! }
}

/** The relay's handler (see the module comment). A retry fails with `RetryIn`; a final failure succeeds. */
export const deliverWebhook = (item: OutboxItem): Effect.Effect<void, unknown, Store | WebhookRepo | WebhookSender> =>
  Effect.gen(function* () {
    const { delivery_id, sequence } = yield* decodeItem(item)
    const repo = yield* WebhookRepo
    const sender = yield* WebhookSender
    const now = new Date(yield* Clock.currentTimeMillis)
    // The delivery, its endpoint and the secrets that sign now, in one statement.
    const context = yield* repo.attemptContext(delivery_id, sequence, now)
    // Redelivered since (a newer sequence), already done, or gone: nothing for this item to do.
    if (context === undefined) return
    const { delivery } = context
    if (context._tag !== "Send") {
      const reason =
        context._tag === "EndpointDeleted"
          ? "endpoint deleted"
          : `endpoint disabled: ${context.endpoint.disabled_reason ?? "inactive"}`
      yield* repo.abandon(delivery_id, sequence, reason, now)
      return yield* recordDelivery(delivery.event_type, "failed", undefined)
    }
    const { endpoint, secrets } = context
    const attempt = delivery.attempts + 1
    const started = yield* Clock.currentTimeMillis
    const result = yield* Effect.either(
      sender.send({
        url: endpoint.url,
        secrets,
        body: JSON.stringify(delivery.envelope),
        event: delivery.event_type,
        deliveryId: delivery.event_id
      })
    )
    const latency = Math.max(0, (yield* Clock.currentTimeMillis) - started)
    const at = new Date(yield* Clock.currentTimeMillis)
    if (Either.isRight(result)) {
      yield* repo.recordAttempt(delivery_id, sequence, {
        status: "delivered",
        last_status: result.right,
        last_error: null,
        latency_ms: latency,
        next_attempt_at: null,
        at
      })
      // Only a count to reset costs a statement: most successes follow successes. (A failure of a
      // concurrent delivery after this read stays counted until the next success: one more, never fewer.)
      if (endpoint.consecutive_failures > 0) yield* repo.endpointAttempt(endpoint.endpoint_id, true, "", at)
      return yield* recordDelivery(delivery.event_type, "delivered", latency)
    }
    const error = result.left
    const described = describeFailure(error)
    const verdict = classifyFailure(error, attempt)
    yield* repo.recordAttempt(delivery_id, sequence, {
      status: verdict._tag === "Final" ? "failed" : "pending",
      last_status: error.status ?? null,
      last_error: described,
      latency_ms: latency,
      next_attempt_at: verdict._tag === "Retry" ? new Date(at.getTime() + verdict.ms) : null,
      at
    })
    const disabled = yield* repo.endpointAttempt(endpoint.endpoint_id, false, described, at)
    if (disabled)
      yield* Effect.logWarning("webhook endpoint disabled after consecutive failed deliveries").pipe(
        Effect.annotateLogs({ endpoint_id: endpoint.endpoint_id })
      )
    yield* recordDelivery(delivery.event_type, verdict._tag === "Final" ? "failed" : "retry", latency)
    if (verdict._tag === "Retry") return yield* new RetryIn({ ms: verdict.ms, error: described })
  })
