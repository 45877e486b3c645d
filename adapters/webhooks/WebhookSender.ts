/**
 * The HTTP edge of webhooks: one signed POST per delivery attempt, through undici.
 *
 * Headers: `Content-Type: application/json`, `X-Candor-Event` (the event type), `X-Candor-Delivery`
 * (the event id, the same on every retry and redelivery: receivers deduplicate on it),
 * `X-Candor-Timestamp` (unix seconds) and the signature headers of core/WebhookSignature.ts, signed
 * at send time with every live secret of the endpoint (one `v1=` each during a rotation), so a retry
 * carries a fresh timestamp. `X-AIP-Version` (the AIP version the analysis implements, 0.1.5) and
 * `X-AIP-Signature` are kept for receivers of the AIP reference.
 *
 * A 2xx answer is a delivery; anything else, a network error or the timeout is a failure the caller
 * classifies (streams/WebhookDelivery.ts). Redirects are not followed (a 3xx is a failure), so a
 * delivery only ever reaches the registered URL. The URL passes the SSRF guard (WebhookUrlGuard.ts)
 * before each attempt and its host's addresses again when the connection is made. Neither a secret
 * nor the body is ever logged or put into an error.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Agent, request } from "undici"
import { AIP_VERSION } from "../../core/schema/Checkpoint.js"
import { signWebhook } from "../../core/WebhookSignature.js"
import { checkWebhookUrl, guardedLookup, WebhookNetwork } from "./WebhookUrlGuard.js"

export const WEBHOOK_CONTENT_TYPE = "application/json"
export const EVENT_HEADER = "X-Candor-Event"
export const DELIVERY_HEADER = "X-Candor-Delivery"
export const TIMESTAMP_HEADER = "X-Candor-Timestamp"

export interface WebhookDelivery {
  readonly url: string
  /** Every live secret, the current one first (the AIP header signs with it alone). */
  readonly secrets: ReadonlyArray<string>
  /** The JSON body, exactly as signed and sent. */
  readonly body: string
  readonly event: string
  /** The event's id, the same on every retry. */
  readonly deliveryId: string
}

export class WebhookDeliveryError extends Data.TaggedError("WebhookDeliveryError")<{
  /** `refused`: the URL or an address of its host is internal (the SSRF guard). */
  readonly reason: "status" | "network" | "timeout" | "refused"
  /** The receiver's status, for `status`. */
  readonly status?: number
  /** A 429's or 503's `Retry-After`, in seconds, when it gave one. */
  readonly retryAfterSeconds?: number
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

/** `Retry-After` as seconds: a delay or an HTTP date; undefined when absent or unreadable. */
export const retryAfterSeconds = (
  value: string | ReadonlyArray<string> | undefined,
  now: number
): number | undefined => {
  const text = Array.isArray(value) ? value[0] : (value as string | undefined)
  if (text === undefined) return undefined
  if (/^\s*\d{1,10}\s*$/.test(text)) return Number(text)
  const at = Date.parse(text)
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000))
}

/** Connections whose every address is checked when they are made (DNS rebinding). */
const guarded = new Agent({ connect: { lookup: guardedLookup } })
/** Under CANDOR_WEBHOOK_ALLOW_PRIVATE: no address is refused. */
const open = new Agent()

export const make = (options: Partial<WebhookSenderOptions> = {}): WebhookSender["Type"] => {
  const { timeout } = { ...defaultSenderOptions, ...options }
  return {
    send: (delivery) =>
      Effect.gen(function* () {
        const { allowPrivate } = yield* WebhookNetwork
        yield* checkWebhookUrl(delivery.url).pipe(
          Effect.mapError(() => new WebhookDeliveryError({ reason: "refused" }))
        )
        const now = new Date(yield* Clock.currentTimeMillis)
        const headers = {
          "content-type": WEBHOOK_CONTENT_TYPE,
          "x-aip-version": AIP_VERSION,
          "user-agent": "candor-webhooks",
          [EVENT_HEADER.toLowerCase()]: delivery.event,
          [DELIVERY_HEADER.toLowerCase()]: delivery.deliveryId,
          [TIMESTAMP_HEADER.toLowerCase()]: String(Math.floor(now.getTime() / 1000)),
          ...signWebhook(delivery.secrets, delivery.body, now)
        }
        const answer = yield* Effect.tryPromise({
          try: async (signal) => {
            // No undici timeouts of its own: the one below aborts the request through `signal`.
            const response = await request(delivery.url, {
              method: "POST",
              headers,
              body: delivery.body,
              signal,
              dispatcher: allowPrivate ? open : guarded
            })
            await response.body.dump({ limit: DRAIN_LIMIT }).catch(() => undefined)
            return { status: response.statusCode, retryAfter: response.headers["retry-after"] }
          },
          // The cause may name the host or quote the answer; the caller needs only the kind.
          catch: (cause) =>
            new WebhookDeliveryError({
              reason:
                (cause as { code?: unknown } | undefined)?.code === "EWEBHOOKBLOCKED"
                  ? "refused"
                  : cause instanceof Error && /Timeout/.test(cause.name)
                    ? "timeout"
                    : "network"
            })
        }).pipe(
          Effect.timeoutFail({ duration: timeout, onTimeout: () => new WebhookDeliveryError({ reason: "timeout" }) })
        )
        if (answer.status < 200 || answer.status > 299) {
          const retryAfter = retryAfterSeconds(answer.retryAfter, now.getTime())
          return yield* new WebhookDeliveryError({
            reason: "status",
            status: answer.status,
            ...(retryAfter === undefined ? {} : { retryAfterSeconds: retryAfter })
          })
        }
        return answer.status
      })
  }
}

/** The error a delivery records: the kind of failure, never the receiver's answer. */
export const describeFailure = (error: WebhookDeliveryError): string => {
  switch (error.reason) {
    case "status":
      return `HTTP ${error.status ?? "error"}`
    case "timeout":
      return "timeout"
    case "network":
      return "network error"
    case "refused":
      return "refused: the URL resolves to an internal address"
  }
}
