/**
 * The HTTP edge of webhooks: one signed POST per delivery, through undici.
 *
 * Headers: `Content-Type: application/aip+json` and `X-AIP-Version` (the AIP reference's), the two
 * signature headers of core/WebhookSignature.ts (signed at send time, so a retry carries a fresh
 * timestamp), `X-Candor-Event` and `X-Candor-Delivery` (the event id: a receiver deduplicates
 * retries with it). A 2xx answer is a delivery; anything else, a network error or the timeout is a
 * failure the outbox relay retries. Redirects are not followed (a 3xx is a failure), so a delivery
 * only ever reaches the registered URL. Neither the secret nor the body is ever logged or put into
 * an error.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { request } from "undici"
import { signWebhook } from "../../core/WebhookSignature.js"

export const AIP_CONTENT_TYPE = "application/aip+json"
export const AIP_VERSION = "1.0.0"
export const EVENT_HEADER = "X-Candor-Event"
export const DELIVERY_HEADER = "X-Candor-Delivery"

export interface WebhookDelivery {
  readonly url: string
  readonly secret: string
  /** The JSON body, exactly as signed and sent. */
  readonly body: string
  readonly event: string
  /** The event's id, the same on every retry. */
  readonly deliveryId: string
}

export class WebhookDeliveryError extends Data.TaggedError("WebhookDeliveryError")<{
  readonly reason: "status" | "network" | "timeout"
  /** The receiver's status, for `status`. */
  readonly status?: number
}> {}

export interface WebhookSenderOptions {
  /** The whole exchange, connect to last body byte. */
  readonly timeout: Duration.DurationInput
}

export const defaultSenderOptions: WebhookSenderOptions = { timeout: "10 seconds" }

export class WebhookSender extends Context.Tag("candor/adapters/webhooks/WebhookSender")<
  WebhookSender,
  {
    /** Succeeds with the receiver's 2xx status. */
    readonly send: (delivery: WebhookDelivery) => Effect.Effect<number, WebhookDeliveryError>
  }
>() {
  static readonly layer = (options: Partial<WebhookSenderOptions> = {}): Layer.Layer<WebhookSender> =>
    Layer.succeed(WebhookSender, make(options))
}

/** Reads and discards what the receiver answers (at most 64 KiB), so the connection can be reused. */
const DRAIN_LIMIT = 64 * 1024

export const make = (options: Partial<WebhookSenderOptions> = {}): WebhookSender["Type"] => {
  const { timeout } = { ...defaultSenderOptions, ...options }
  return {
    send: (delivery) =>
      Effect.gen(function* () {
        const now = new Date(yield* Clock.currentTimeMillis)
        const headers = {
          "content-type": AIP_CONTENT_TYPE,
          "x-aip-version": AIP_VERSION,
          "user-agent": "candor-webhooks",
          [EVENT_HEADER.toLowerCase()]: delivery.event,
          [DELIVERY_HEADER.toLowerCase()]: delivery.deliveryId,
          ...signWebhook(delivery.secret, delivery.body, now)
        }
        const status = yield* Effect.tryPromise({
          try: async (signal) => {
            // No undici timeouts of its own: the one below aborts the request through `signal`.
            const response = await request(delivery.url, { method: "POST", headers, body: delivery.body, signal })
            await response.body.dump({ limit: DRAIN_LIMIT }).catch(() => undefined)
            return response.statusCode
          },
          // The cause may name the host or quote the answer; the relay needs only the kind.
          catch: (cause) =>
            new WebhookDeliveryError({
              reason: cause instanceof Error && /Timeout/.test(cause.name) ? "timeout" : "network"
            })
        }).pipe(
          Effect.timeoutFail({ duration: timeout, onTimeout: () => new WebhookDeliveryError({ reason: "timeout" }) })
        )
        if (status < 200 || status > 299) return yield* new WebhookDeliveryError({ reason: "status", status })
        return status
      })
  }
}
