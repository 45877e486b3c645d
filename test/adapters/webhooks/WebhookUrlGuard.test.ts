/**
 * The SSRF guard's address rules, and its connect-time lookup: a name resolving to an internal
 * address fails the connection itself (what DNS rebinding would otherwise reach).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import {
  checkWebhookUrl,
  guardedLookup,
  isBlockedAddress,
  WebhookNetwork
} from "../../../adapters/webhooks/WebhookUrlGuard.js"

describe("webhook URL guard", () => {
  it("blocks loopback, private, link-local, CGNAT, unspecified, multicast and metadata addresses", () => {
    for (const address of [
      "127.0.0.1",
      "10.0.0.1",
      "172.31.255.255",
      "192.168.0.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "224.0.0.1",
      "::1",
      "::",
      "fd00:ec2::254",
      "fc00::1",
      "fe80::1",
      "ff02::1",
      "::ffff:10.0.0.1"
    ])
      expect(isBlockedAddress(address), address).toBe(true)
    for (const address of ["93.184.215.14", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"])
      expect(isBlockedAddress(address), address).toBe(false)
  })

  it("fails a connection whose host resolves to loopback", async () => {
    const error = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
      guardedLookup("localhost", {}, (err) => resolve(err))
    )
    expect(error?.code).toBe("EWEBHOOKBLOCKED")
  })

  it.effect("CANDOR_WEBHOOK_ALLOW_PRIVATE lifts the rules: http and loopback accepted", () =>
    Effect.gen(function* () {
      const url = yield* checkWebhookUrl("http://127.0.0.1:9/hook").pipe(
        Effect.provideService(WebhookNetwork, { allowPrivate: true })
      )
      expect(url.hostname).toBe("127.0.0.1")
      const refused = yield* Effect.flip(checkWebhookUrl("http://127.0.0.1:9/hook")).pipe(
        Effect.provideService(WebhookNetwork, { allowPrivate: false })
      )
      expect(refused.message).toContain("https")
      const credentials = yield* Effect.flip(checkWebhookUrl("http://u:p@127.0.0.1/")).pipe(
        Effect.provideService(WebhookNetwork, { allowPrivate: true })
      )
      expect(credentials.message).toContain("credentials")
    })
  )
})
