/**
 * The HTTP sender against real loopback receivers (CANDOR_WEBHOOK_ALLOW_PRIVATE on, as a test must
 * reach 127.0.0.1): what a receiver verifies (signature, headers, body), and every way a delivery
 * fails (a non-2xx answer, a redirect, a refused connection, a receiver that never answers), none of
 * which puts the secret or the body in the error. Without the setting, loopback is refused.
 */
import { describe, expect, it } from "@effect/vitest"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { verifyAipSignature, verifyWebhook } from "../../../core/WebhookSignature.js"
import { make, WEBHOOK_CONTENT_TYPE, WebhookDeliveryError } from "../../../adapters/webhooks/WebhookSender.js"
import { WebhookNetwork } from "../../../adapters/webhooks/WebhookUrlGuard.js"
import { makeReceiver } from "./Receiver.js"

const secret = "whsec-" + "k".repeat(32)
const body = JSON.stringify({
  id: "verdict:ic-1",
  event: "verdict",
  agent_id: "agt-1",
  created_at: "2026-11-01T00:00:00.000Z",
  data: { n: 1 }
})
const delivery = (url: string) => ({ url, secrets: [secret], body, event: "verdict", deliveryId: "verdict:ic-1" })
const privateAllowed = Effect.provideService(WebhookNetwork, { allowPrivate: true })

/** The error, checked to carry neither the secret nor the body. */
const failureOf = (url: string, timeout: Duration.DurationInput = "10 seconds") =>
  Effect.gen(function* () {
    const error = yield* Effect.flip(make({ timeout }).send(delivery(url))).pipe(privateAllowed)
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
      expect(yield* make().send(delivery(receiver.url)).pipe(privateAllowed)).toBe(204)
      const request = yield* receiver.take
      expect(request).toMatchObject({ method: "POST", path: "/hooks", body })
      expect(request.headers["content-type"]).toBe(WEBHOOK_CONTENT_TYPE)
      const timestamp = Number(request.headers["x-candor-timestamp"])
      expect(Math.abs(timestamp - Date.now() / 1000)).toBeLessThan(5)
      expect(request.headers["x-candor-signature"]).toMatch(new RegExp(`^t=${timestamp},v1=[0-9a-f]{64}$`))
      // The AIP version the analysis implements, as the specification references it.
      expect(request.headers["x-aip-version"]).toBe("0.1.5")
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

  it.scopedLive("signs with every live secret: one v1= each, either verifies", () =>
    Effect.gen(function* () {
      const receiver = yield* makeReceiver(() => 200)
      const next = "whsec_" + "n".repeat(43)
      yield* make()
        .send({ ...delivery(receiver.url), secrets: [next, secret] })
        .pipe(privateAllowed)
      const request = yield* receiver.take
      expect(String(request.headers["x-candor-signature"]).match(/v1=/g)).toHaveLength(2)
      for (const key of [next, secret])
        expect(verifyWebhook(key, request.body, request.headers, new Date())).toMatchObject({ ok: true })
    })
  )

  it.scopedLive("reads a 429's Retry-After", () =>
    Effect.gen(function* () {
      const receiver = yield* makeReceiver(() => ({ status: 429, headers: { "retry-after": "120" } }))
      expect(yield* failureOf(receiver.url)).toMatchObject({ reason: "status", status: 429, retryAfterSeconds: 120 })
    })
  )

  it.scopedLive("without CANDOR_WEBHOOK_ALLOW_PRIVATE, refuses loopback and plain http before connecting", () =>
    Effect.gen(function* () {
      const receiver = yield* makeReceiver(() => 200)
      const guarded = Effect.provideService(WebhookNetwork, { allowPrivate: false })
      const refused = yield* Effect.flip(make().send(delivery(receiver.url))).pipe(guarded)
      expect(refused).toMatchObject({ reason: "refused" })
      const https = receiver.url.replace("http://127.0.0.1", "https://localhost")
      expect(yield* Effect.flip(make().send(delivery(https))).pipe(guarded)).toMatchObject({ reason: "refused" })
      expect(receiver.received).toHaveLength(0)
    })
  )
})
