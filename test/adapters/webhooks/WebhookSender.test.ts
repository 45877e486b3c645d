/**
 * The HTTP sender against real loopback receivers: what a receiver verifies (signature, headers,
 * body), and every way a delivery fails (a non-2xx answer, a redirect, a refused connection, a
 * receiver that never answers), none of which puts the secret or the body in the error.
 */
import { describe, expect, it } from "@effect/vitest"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { verifyAipSignature, verifyWebhook } from "../../../core/WebhookSignature.js"
import { AIP_CONTENT_TYPE, make, WebhookDeliveryError } from "../../../adapters/webhooks/WebhookSender.js"
import { makeReceiver } from "./Receiver.js"

const secret = "whsec-" + "k".repeat(32)
const body = JSON.stringify({
  id: "verdict:ic-1",
  event: "verdict",
  agent_id: "agt-1",
  created_at: "2026-11-01T00:00:00.000Z",
  data: { n: 1 }
})
const delivery = (url: string) => ({ url, secret, body, event: "verdict", deliveryId: "verdict:ic-1" })

/** The error, checked to carry neither the secret nor the body. */
const failureOf = (url: string, timeout: Duration.DurationInput = "10 seconds") =>
  Effect.gen(function* () {
    const error = yield* Effect.flip(make({ timeout }).send(delivery(url)))
    expect(error).toBeInstanceOf(WebhookDeliveryError)
    const text = JSON.stringify(error) + String(error)
    expect(text).not.toContain(secret)
    expect(text).not.toContain("agt-1")
    return error
  })

describe("WebhookSender", () => {
  it.scopedLive("posts the body as signed, with the AIP headers, and a receiver verifies it", () =>
    Effect.gen(function* () {
      const receiver = yield* makeReceiver(() => 204)
      expect(yield* make().send(delivery(receiver.url))).toBe(204)
      const request = yield* receiver.take
      expect(request).toMatchObject({ method: "POST", path: "/hooks", body })
      expect(request.headers["content-type"]).toBe(AIP_CONTENT_TYPE)
      expect(request.headers["x-aip-version"]).toBe("1.0.0")
      expect(request.headers["x-candor-event"]).toBe("verdict")
      expect(request.headers["x-candor-delivery"]).toBe("verdict:ic-1")
      expect(verifyWebhook(secret, request.body, request.headers, new Date())).toMatchObject({ ok: true })
      expect(verifyAipSignature(secret, request.body, request.headers)).toBe(true)
      expect(verifyWebhook("another secret of at least 32 chars!", request.body, request.headers, new Date())).toEqual({
        ok: false,
        reason: "signature_mismatch"
      })
    })
  )

  it.scopedLive("fails on any answer outside 2xx, redirects included", () =>
    Effect.gen(function* () {
      for (const status of [500, 404, 302]) {
        const receiver = yield* makeReceiver(() => status)
        expect(yield* failureOf(receiver.url)).toMatchObject({ reason: "status", status })
        expect(receiver.received).toHaveLength(1)
      }
    })
  )

  it.scopedLive("fails on a refused connection and on a receiver that never answers", () =>
    Effect.gen(function* () {
      const closed = yield* Effect.scoped(
        Effect.map(
          makeReceiver(() => 200),
          (receiver) => receiver.url
        )
      )
      expect(yield* failureOf(closed)).toMatchObject({ reason: "network" })
      const silent = yield* makeReceiver(() => "hang")
      expect(yield* failureOf(silent.url, "300 millis")).toMatchObject({ reason: "timeout" })
      expect(silent.received).toHaveLength(1)
    })
  )
})
