import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import {
  isAllowedCallbackUrl,
  newWebhookRegistration,
  WEBHOOK_EVENTS
} from "../../../adapters/webhooks/WebhookRegistration.js"

const now = new Date("2026-11-01T00:00:00.000Z")
const request = {
  agent_id: "agt-1",
  callback_url: "https://hooks.example/in",
  secret: "s".repeat(32),
  events: ["verdict", "verdict", "agent.paused"]
}

describe("webhook registrations", () => {
  it("accepts https, and plain http only on loopback", () => {
    expect(isAllowedCallbackUrl("https://hooks.example/in")).toBe(true)
    for (const url of ["http://127.0.0.1:9000/x", "http://localhost/x", "http://[::1]:8080/x"])
      expect(isAllowedCallbackUrl(url)).toBe(true)
    for (const url of [
      "http://hooks.example/in",
      "ftp://hooks.example",
      "not a url",
      "https://user:pw@hooks.example/",
      "http://127.0.0.2/"
    ]) {
      expect(isAllowedCallbackUrl(url)).toBe(false)
    }
  })

  it("makes an active reg-<uuid> with the events deduplicated", () => {
    const registration = Either.getOrThrow(newWebhookRegistration(request, now))
    expect(registration.registration_id).toMatch(/^reg-[0-9a-f-]{36}$/)
    expect(registration).toMatchObject({
      agent_id: "agt-1",
      events: ["verdict", "agent.paused"],
      active: true,
      created_at: now.toISOString()
    })
    expect(Either.getOrThrow(newWebhookRegistration(request, now)).registration_id).not.toBe(
      registration.registration_id
    )
  })

  it("refuses a bad URL, a short secret and unknown or no events, without quoting the secret", () => {
    const refused = [
      { ...request, callback_url: "http://hooks.example/in" },
      { ...request, secret: "short-secret" },
      { ...request, events: [] },
      { ...request, events: ["verdict", "everything"] }
    ].map((bad) => Either.flip(newWebhookRegistration(bad, now)).pipe(Either.getOrThrow))
    expect(refused.map((error) => error._tag)).toEqual(Array(4).fill("InvalidWebhookRegistration"))
    expect(refused[1]!.message).not.toContain("short-secret")
    expect(refused[3]!.message).toContain(WEBHOOK_EVENTS.join(", "))
  })
})
