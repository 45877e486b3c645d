/**
 * Webhook endpoints over real HTTP (PGlite, CANDOR_WEBHOOK_ALLOW_PRIVATE on, receivers on
 * 127.0.0.1): the routes, the fan-out of an event to the endpoints that select it, and deliveries
 * driven one relay round at a time under the test clock (no sleeps): signatures a receiver verifies,
 * retries with the same X-Candor-Delivery, 4xx final, 429 respected, 100 failures disabling,
 * rotation, the test delivery, redelivery. Then the SSRF guard, without the setting.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { randomUUID } from "node:crypto"
import { IdentityRepo } from "../../adapters/store/identity/IdentityRepo.js"
import { GovernanceLog } from "../../adapters/store/GovernanceLog.js"
import { make as makeSender, WebhookSender } from "../../adapters/webhooks/WebhookSender.js"
import { WebhookNetwork } from "../../adapters/webhooks/WebhookUrlGuard.js"
import { newEnvelope } from "../../core/Events.js"
import { orgGovernanceLog } from "../../core/Governance.js"
import { verifyWebhook } from "../../core/WebhookSignature.js"
import { relayDefaults, relayRound } from "../../streams/OutboxRelay.js"
import { WEBHOOK_OUTBOX } from "../../adapters/store/WebhookDeliveryOutbox.js"
import { deliverWebhook } from "../../streams/WebhookDelivery.js"
import { fanOutEvent } from "../../streams/WebhookFanOut.js"
import { type Answer, makeReceiver } from "../adapters/webhooks/Receiver.js"
import * as Harness from "./Support.js"
import { ApiHarness } from "./Support.js"

/** One round of the webhook relay, here and now (under the test clock). */
const relay = relayRound({ ...relayDefaults, kind: WEBHOOK_OUTBOX }, (item) =>
  deliverWebhook(item).pipe(Effect.provideService(WebhookSender, makeSender()))
).pipe(Effect.provideService(WebhookNetwork, { allowPrivate: true }))

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
/**
 * The test clock (which the served API shares) at least at the real time, never back: the API's rate
 * limiter must not see time run backwards from one test to the next.
 */
const realTime = Effect.flatMap(Clock.currentTimeMillis, (at) => TestClock.setTime(Math.max(at, Date.now())))

/** A new organization owned by the fixtures' owner, with the admin and the member, and one agent. */
const freshOrg = Effect.gen(function* () {
  const api = yield* ApiHarness
  const { admin, member, owner } = api.fixtures
  const orgId = `org_${randomUUID()}`
  const repo = yield* IdentityRepo
  yield* Effect.orDie(
    repo.createOrg({
      org_id: orgId,
      name: "Hooks",
      slug: `hooks-${randomUUID().slice(0, 8)}`,
      billing_account_id: `ba_${randomUUID()}`,
      owner_user_id: owner.userId
    })
  )
  yield* Effect.orDie(repo.putMember(orgId, admin.userId, "admin"))
  yield* Effect.orDie(repo.putMember(orgId, member.userId, "member"))
  const agentId = yield* api.claimAgent({ userId: owner.userId, orgId })
  return { orgId, agentId }
})

const createEndpoint = (root: string, body: unknown, token?: string) =>
  Effect.gen(function* () {
    const api = yield* ApiHarness
    const res = yield* api.call("POST", `${root}/webhooks`, { token: token ?? api.fixtures.admin.token, body })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    return res.body as { endpoint_id: string; signing_secret: string }
  })

const paused = (agentId: string, orgId: string | null, at: Date) =>
  newEnvelope({
    type: "agent.paused",
    source: randomUUID(),
    org_id: orgId,
    agent_id: agentId,
    created_at: at,
    data: {
      agent_id: agentId,
      org_id: orgId,
      action: "pause",
      actor: "system",
      reason: "test",
      previous_status: "active",
      new_status: "paused"
    }
  })

const deliveriesOf = (root: string, query = "") =>
  Effect.flatMap(ApiHarness, (api) =>
    api.call("GET", `${root}/webhooks/deliveries${query}`, { token: api.fixtures.admin.token })
  )

const receiverAnswering = (respond: (n: number) => Answer) => makeReceiver(respond)

layer(Harness.layer({ webhookAllowPrivate: true }), { timeout: "120 seconds" })("webhook endpoints", (it) => {
  it.effect("create, list, read, update and delete an organization's endpoint; the secret is shown once", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { orgId, agentId } = yield* freshOrg
      const root = `/v1/orgs/${orgId}`
      const created = yield* api.call("POST", `${root}/webhooks`, {
        token: api.fixtures.admin.token,
        body: { url: "http://127.0.0.1:9/hook", description: "ops", event_types: ["agent.paused"] }
      })
      expect(created.status).toBe(201)
      expect(Object.keys(created.body).sort()).toEqual(
        [
          "agent_ids",
          "created_at",
          "description",
          "disabled_reason",
          "endpoint_id",
          "event_types",
          "is_active",
          "signing_secret",
          "updated_at",
          "url"
        ].sort()
      )
      expect(created.body).toMatchObject({
        url: "http://127.0.0.1:9/hook",
        description: "ops",
        event_types: ["agent.paused"],
        agent_ids: [],
        is_active: true,
        disabled_reason: null
      })
      const secret: string = created.body.signing_secret
      expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/)
      const id: string = created.body.endpoint_id

      const listed = yield* api.call("GET", `${root}/webhooks`, { token: api.fixtures.owner.token })
      expect(listed.status).toBe(200)
      expect(listed.body.endpoints.map((e: any) => e.endpoint_id)).toEqual([id])
      expect(JSON.stringify(listed.body)).not.toContain(secret)
      const one = yield* api.call("GET", `${root}/webhooks/${id}`, { token: api.fixtures.admin.token })
      expect(one.body).not.toHaveProperty("signing_secret")

      const patched = yield* api.call("PATCH", `${root}/webhooks/${id}`, {
        token: api.fixtures.admin.token,
        body: { description: "changed", event_types: ["agent.killed", "agent.killed"], agent_ids: [agentId] }
      })
      expect(patched.status).toBe(200)
      expect(patched.body).toMatchObject({
        description: "changed",
        event_types: ["agent.killed"],
        agent_ids: [agentId]
      })

      const unknown = yield* api.call("POST", `${root}/webhooks`, {
        token: api.fixtures.admin.token,
        body: { url: "http://127.0.0.1:9/hook", event_types: ["agent.paused", "nope.event", "also.bad"] }
      })
      expect(unknown.status).toBe(400)
      expect(unknown.body.error).toContain("nope.event, also.bad")
      const stranger = yield* api.call("POST", `${root}/webhooks`, {
        token: api.fixtures.admin.token,
        body: { url: "http://127.0.0.1:9/hook", event_types: [], agent_ids: [api.fixtures.agentB] }
      })
      expect(stranger.status).toBe(400)
      expect(stranger.body.error).toContain(api.fixtures.agentB)
      const long = yield* api.call("POST", `${root}/webhooks`, {
        token: api.fixtures.admin.token,
        body: { url: "http://127.0.0.1:9/hook", event_types: [], description: "d".repeat(501) }
      })
      expect(long.status).toBe(400)

      expect((yield* api.call("GET", `${root}/webhooks`, { token: api.fixtures.member.token })).status).toBe(403)
      expect((yield* api.call("GET", `${root}/webhooks`, { token: api.fixtures.userB.token })).status).toBe(404)

      const deleted = yield* api.call("DELETE", `${root}/webhooks/${id}`, { token: api.fixtures.admin.token })
      expect(deleted.status).toBe(204)
      expect((yield* api.call("GET", `${root}/webhooks/${id}`, { token: api.fixtures.admin.token })).status).toBe(404)

      // Every change is on the organization's governance log, never with the secret.
      const log = yield* (yield* GovernanceLog).entries(orgGovernanceLog(orgId), 0, 100)
      expect(log.entries.map((entry) => entry.record.action)).toEqual([
        "webhook.create",
        "webhook.update",
        "webhook.delete"
      ])
      expect(JSON.stringify(log.entries)).not.toContain(secret)
    })
  )

  it.effect("at most 25 endpoints per organization (409 for the 26th)", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { orgId } = yield* freshOrg
      for (let n = 0; n < 25; n++)
        yield* createEndpoint(`/v1/orgs/${orgId}`, { url: `http://127.0.0.1:9/${n}`, event_types: [] })
      const over = yield* api.call("POST", `/v1/orgs/${orgId}/webhooks`, {
        token: api.fixtures.admin.token,
        body: { url: "http://127.0.0.1:9/26", event_types: [] }
      })
      expect(over.status).toBe(409)
    })
  )

  it.scoped("an event reaches the endpoints that select it, signed; a 500 is retried with the same delivery id", () =>
    Effect.gen(function* () {
      yield* realTime
      const { orgId, agentId } = yield* freshOrg
      const root = `/v1/orgs/${orgId}`
      const receiver = yield* receiverAnswering((n) => (n === 1 ? 500 : 200))
      const other = yield* receiverAnswering(() => 200)
      const endpoint = yield* createEndpoint(root, { url: receiver.url, event_types: ["agent.paused"] })
      yield* createEndpoint(root, { url: other.url, event_types: ["agent.killed"] })
      yield* createEndpoint(root, { url: other.url, event_types: [], agent_ids: [] }).pipe(Effect.zipRight(Effect.void))
      const envelope = paused(agentId, orgId, yield* now)
      yield* fanOutEvent(envelope)
      yield* fanOutEvent(envelope) // the feed may hand an event over twice: still one delivery per endpoint

      expect(yield* relay).toBe(2) // the subscribed endpoint and the catch-all one
      const first = yield* receiver.take
      expect(first.headers["x-candor-event"]).toBe("agent.paused")
      expect(first.headers["x-candor-delivery"]).toBe(envelope.id)
      expect(first.headers["content-type"]).toBe("application/json")
      expect(JSON.parse(first.body)).toEqual(envelope)
      expect(verifyWebhook(endpoint.signing_secret, first.body, first.headers, yield* now)).toMatchObject({ ok: true })

      const pending = yield* deliveriesOf(root, `?endpoint_id=${endpoint.endpoint_id}`)
      expect(pending.body).toMatchObject({ total: 1, limit: 20, offset: 0 })
      expect(pending.body.deliveries[0]).toMatchObject({
        event_id: envelope.id,
        event_type: "agent.paused",
        status: "pending",
        attempts: 1,
        last_status: 500,
        last_error: "HTTP 500"
      })
      expect(Date.parse(pending.body.deliveries[0].next_attempt_at) - (yield* Clock.currentTimeMillis)).toBe(10_000)

      yield* TestClock.adjust("9 seconds")
      expect(yield* relay).toBe(0)
      yield* TestClock.adjust("1 second")
      expect(yield* relay).toBe(1)
      const second = yield* receiver.take
      expect(second.headers["x-candor-delivery"]).toBe(envelope.id)
      expect(second.body).toBe(first.body)
      expect(verifyWebhook(endpoint.signing_secret, second.body, second.headers, yield* now)).toMatchObject({
        ok: true
      })
      const delivered = yield* deliveriesOf(root, `?status=delivered&endpoint_id=${endpoint.endpoint_id}`)
      expect(delivered.body.deliveries[0]).toMatchObject({ status: "delivered", attempts: 2, last_status: 200 })
      expect(delivered.body.deliveries[0].delivered_at).not.toBeNull()
      expect(other.received.map((r) => r.headers["x-candor-delivery"])).toEqual([envelope.id])
    })
  )

  it.scoped("a 4xx is final at once; a 429 waits for its Retry-After (at least 60 s); 6 attempts at most", () =>
    Effect.gen(function* () {
      yield* realTime
      const { orgId, agentId } = yield* freshOrg
      const root = `/v1/orgs/${orgId}`
      const gone = yield* receiverAnswering(() => 404)
      const goneEndpoint = yield* createEndpoint(root, { url: gone.url, event_types: [] })
      const limited = yield* receiverAnswering((n) =>
        n === 1 ? { status: 429, headers: { "retry-after": "120" } } : 200
      )
      const limitedEndpoint = yield* createEndpoint(root, { url: limited.url, event_types: [] })
      yield* fanOutEvent(paused(agentId, orgId, yield* now))
      expect(yield* relay).toBe(2)
      const final = yield* deliveriesOf(root, `?endpoint_id=${goneEndpoint.endpoint_id}`)
      expect(final.body.deliveries[0]).toMatchObject({ status: "failed", attempts: 1, last_status: 404 })
      expect(final.body.deliveries[0].next_attempt_at).toBeNull()
      const waiting = yield* deliveriesOf(root, `?endpoint_id=${limitedEndpoint.endpoint_id}`)
      expect(Date.parse(waiting.body.deliveries[0].next_attempt_at) - (yield* Clock.currentTimeMillis)).toBe(120_000)
      yield* TestClock.adjust("119 seconds")
      expect(yield* relay).toBe(0)
      yield* TestClock.adjust("1 second")
      expect(yield* relay).toBe(1)
      expect(limited.received).toHaveLength(2)
      expect(gone.received).toHaveLength(1)

      // A receiver that always fails: 10 s, 30 s, 2 min, 10 min, 1 h, then failed.
      const down = yield* receiverAnswering(() => 503)
      const downEndpoint = yield* createEndpoint(root, { url: down.url, event_types: ["agent.paused"] })
      yield* fanOutEvent(paused(agentId, orgId, yield* now))
      yield* relay
      for (const wait of ["10 seconds", "30 seconds", "2 minutes", "10 minutes", "1 hour"] as const) {
        yield* TestClock.adjust(wait)
        yield* relay
      }
      expect(down.received).toHaveLength(6)
      const failed = yield* deliveriesOf(root, `?endpoint_id=${downEndpoint.endpoint_id}`)
      expect(failed.body.deliveries[0]).toMatchObject({ status: "failed", attempts: 6, last_error: "HTTP 503" })
      yield* TestClock.adjust("1 day")
      yield* relay
      expect(down.received).toHaveLength(6)
    })
  )

  it.scoped("100 consecutive failed attempts disable an endpoint; PATCH is_active re-enables it", () =>
    Effect.gen(function* () {
      yield* realTime
      const api = yield* ApiHarness
      const { orgId, agentId } = yield* freshOrg
      const root = `/v1/orgs/${orgId}`
      let failing = true
      const receiver = yield* receiverAnswering(() => (failing ? 400 : 200))
      const endpoint = yield* createEndpoint(root, { url: receiver.url, event_types: [] })
      for (let n = 0; n < 100; n++) {
        yield* fanOutEvent(paused(agentId, orgId, yield* now))
        yield* relay
      }
      expect(receiver.received).toHaveLength(100)
      const disabled = yield* api.call("GET", `${root}/webhooks/${endpoint.endpoint_id}`, {
        token: api.fixtures.admin.token
      })
      expect(disabled.body.is_active).toBe(false)
      expect(disabled.body.disabled_reason).toContain("100 consecutive failed deliveries")
      expect(disabled.body.disabled_reason).toContain("HTTP 400")

      // A disabled endpoint selects nothing new; nothing is sent to it.
      yield* fanOutEvent(paused(agentId, orgId, yield* now))
      expect(yield* relay).toBe(0)

      failing = false
      const enabled = yield* api.call("PATCH", `${root}/webhooks/${endpoint.endpoint_id}`, {
        token: api.fixtures.admin.token,
        body: { is_active: true }
      })
      expect(enabled.body).toMatchObject({ is_active: true, disabled_reason: null })
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ consecutive_failures: number }>`
        select consecutive_failures from webhooks where registration_id = ${endpoint.endpoint_id}`
      expect(Number(row?.consecutive_failures)).toBe(0)
      yield* fanOutEvent(paused(agentId, orgId, yield* now))
      expect(yield* relay).toBe(1)
      expect(receiver.received).toHaveLength(101)
    })
  )

  it.scoped("a delivery whose endpoint was deleted ends as failed, saying so", () =>
    Effect.gen(function* () {
      yield* realTime
      const api = yield* ApiHarness
      const { orgId, agentId } = yield* freshOrg
      const root = `/v1/orgs/${orgId}`
      const receiver = yield* receiverAnswering(() => 200)
      const endpoint = yield* createEndpoint(root, { url: receiver.url, event_types: [] })
      yield* fanOutEvent(paused(agentId, orgId, yield* now))
      yield* api.call("DELETE", `${root}/webhooks/${endpoint.endpoint_id}`, { token: api.fixtures.admin.token })
      expect(yield* relay).toBe(1)
      expect(receiver.received).toHaveLength(0)
      const listed = yield* deliveriesOf(root, "?status=failed")
      expect(listed.body.deliveries[0]).toMatchObject({ status: "failed", last_error: "endpoint deleted" })
    })
  )

  it.scoped("after a rotation both secrets sign for 24 hours, then only the new one", () =>
    Effect.gen(function* () {
      yield* realTime
      const api = yield* ApiHarness
      const { orgId, agentId } = yield* freshOrg
      const root = `/v1/orgs/${orgId}`
      const receiver = yield* receiverAnswering(() => 200)
      const endpoint = yield* createEndpoint(root, { url: receiver.url, event_types: [] })
      const rotated = yield* api.call("POST", `${root}/webhooks/${endpoint.endpoint_id}/rotate-secret`, {
        token: api.fixtures.admin.token
      })
      expect(rotated.status).toBe(200)
      expect(Object.keys(rotated.body).sort()).toEqual(["endpoint_id", "previous_secret_expires_at", "signing_secret"])
      const next: string = rotated.body.signing_secret
      expect(next).not.toBe(endpoint.signing_secret)
      expect(Date.parse(rotated.body.previous_secret_expires_at) - (yield* Clock.currentTimeMillis)).toBe(86_400_000)

      yield* fanOutEvent(paused(agentId, orgId, yield* now))
      yield* relay
      const both = yield* receiver.take
      expect(String(both.headers["x-candor-signature"]).match(/v1=/g)).toHaveLength(2)
      for (const secret of [next, endpoint.signing_secret])
        expect(verifyWebhook(secret, both.body, both.headers, yield* now)).toMatchObject({ ok: true })

      yield* TestClock.adjust("24 hours")
      yield* TestClock.adjust("1 minute")
      yield* fanOutEvent(paused(agentId, orgId, yield* now))
      yield* relay
      const one = yield* receiver.take
      expect(String(one.headers["x-candor-signature"]).match(/v1=/g)).toHaveLength(1)
      expect(verifyWebhook(next, one.body, one.headers, yield* now)).toMatchObject({ ok: true })
      expect(verifyWebhook(endpoint.signing_secret, one.body, one.headers, yield* now)).toMatchObject({ ok: false })

      const log = yield* (yield* GovernanceLog).entries(orgGovernanceLog(orgId), 0, 100)
      expect(log.entries.map((entry) => entry.record.action)).toContain("webhook.rotate_secret")
      expect(JSON.stringify(log.entries)).not.toContain(next)
    })
  )

  it.scoped("the test delivery is synchronous and answers 200 whatever the receiver does", () =>
    Effect.gen(function* () {
      yield* realTime
      const api = yield* ApiHarness
      const { orgId } = yield* freshOrg
      const root = `/v1/orgs/${orgId}`
      let status = 200
      const receiver = yield* receiverAnswering(() => status)
      const endpoint = yield* createEndpoint(root, { url: receiver.url, event_types: ["agent.paused"] })
      const ok = yield* api.call("POST", `${root}/webhooks/${endpoint.endpoint_id}/test`, {
        token: api.fixtures.admin.token
      })
      expect(ok.status).toBe(200)
      expect(ok.body).toMatchObject({ success: true, status: 200, error: null })
      expect(typeof ok.body.latency_ms).toBe("number")
      const request = yield* receiver.take
      expect(JSON.parse(request.body)).toMatchObject({ type: "webhook.test", org_id: orgId })
      expect(verifyWebhook(endpoint.signing_secret, request.body, request.headers, yield* now)).toMatchObject({
        ok: true
      })
      status = 500
      const failed = yield* api.call("POST", `${root}/webhooks/${endpoint.endpoint_id}/test`, {
        token: api.fixtures.admin.token
      })
      expect(failed.status).toBe(200)
      expect(failed.body).toMatchObject({ success: false, status: 500, error: "HTTP 500" })
      expect(JSON.stringify(failed.body)).not.toContain(endpoint.signing_secret)
      // webhook.test never fans out, even to a catch-all endpoint.
      yield* createEndpoint(root, { url: receiver.url, event_types: [] })
      yield* fanOutEvent(
        newEnvelope({
          type: "webhook.test" as "agent.paused",
          source: randomUUID(),
          org_id: orgId,
          created_at: yield* now,
          data: {}
        })
      )
      expect(yield* relay).toBe(0)
    })
  )

  it.scoped("a redelivery sends the same event again, as a new attempt sequence", () =>
    Effect.gen(function* () {
      yield* realTime
      const api = yield* ApiHarness
      const { orgId, agentId } = yield* freshOrg
      const root = `/v1/orgs/${orgId}`
      const receiver = yield* receiverAnswering(() => 200)
      yield* createEndpoint(root, { url: receiver.url, event_types: [] })
      const envelope = paused(agentId, orgId, yield* now)
      yield* fanOutEvent(envelope)
      yield* relay
      const first = yield* receiver.take
      const [delivery] = (yield* deliveriesOf(root)).body.deliveries
      expect(delivery).toMatchObject({ status: "delivered", attempts: 1 })
      const again = yield* api.call("POST", `${root}/webhooks/deliveries/${delivery.delivery_id}/redeliver`, {
        token: api.fixtures.admin.token
      })
      expect(again.status).toBe(202)
      expect(again.body).toMatchObject({
        delivery_id: delivery.delivery_id,
        event_id: envelope.id,
        status: "pending",
        attempts: 0
      })
      expect(yield* relay).toBe(1)
      const second = yield* receiver.take
      expect(second.headers["x-candor-delivery"]).toBe(envelope.id)
      expect(second.body).toBe(first.body)
      expect((yield* deliveriesOf(root)).body.deliveries[0]).toMatchObject({ status: "delivered", attempts: 1 })
      const missing = yield* api.call("POST", `${root}/webhooks/deliveries/whd-nope/redeliver`, {
        token: api.fixtures.admin.token
      })
      expect(missing.status).toBe(404)
    })
  )

  it.scoped("agent endpoints: the personal agent's owner; org endpoints filter by agent_ids", () =>
    Effect.gen(function* () {
      yield* realTime
      const api = yield* ApiHarness
      const { agentA, userA, userB } = api.fixtures
      const own = yield* receiverAnswering(() => 200)
      const mine = yield* createEndpoint(`/v1/agents/${agentA}`, { url: own.url, event_types: [] }, userA.token)
      expect((yield* api.call("GET", `/v1/agents/${agentA}/webhooks`, { token: userB.token })).status).toBe(404)
      const refused = yield* api.call("POST", `/v1/agents/${agentA}/webhooks`, {
        token: userA.token,
        body: { url: own.url, event_types: [], agent_ids: [api.fixtures.orgAgent] }
      })
      expect(refused.status).toBe(400)
      yield* fanOutEvent(paused(agentA, null, yield* now))
      expect(yield* relay).toBe(1)
      expect(
        verifyWebhook(mine.signing_secret, (yield* own.take).body, own.received[0]!.headers, yield* now)
      ).toMatchObject({ ok: true })

      // An organization endpoint limited to one agent: another agent's events do not reach it.
      const { orgId, agentId } = yield* freshOrg
      const second = yield* api.claimAgent({ userId: api.fixtures.owner.userId, orgId })
      const filtered = yield* receiverAnswering(() => 200)
      yield* createEndpoint(`/v1/orgs/${orgId}`, { url: filtered.url, event_types: [], agent_ids: [agentId] })
      yield* fanOutEvent(paused(second, orgId, yield* now))
      expect(yield* relay).toBe(0)
      yield* fanOutEvent(paused(agentId, orgId, yield* now))
      expect(yield* relay).toBe(1)
      expect(JSON.parse((yield* filtered.take).body).agent_id).toBe(agentId)
    })
  )
})

layer(Harness.layer(), { timeout: "120 seconds" })("webhook URLs without CANDOR_WEBHOOK_ALLOW_PRIVATE", (it) => {
  it.effect("only https to public addresses: loopback, private, link-local, metadata and credentials refused", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const root = `/v1/orgs/${api.fixtures.orgId}`
      for (const url of [
        "http://example.com/hook",
        "https://127.0.0.1/hook",
        "https://10.1.2.3/hook",
        "https://172.16.0.1/hook",
        "https://192.168.1.1/hook",
        "https://100.64.0.1/hook",
        "https://169.254.169.254/latest/meta-data",
        "https://[::1]/hook",
        "https://[fd00:ec2::254]/hook",
        "https://[fe80::1]/hook",
        "https://[::ffff:127.0.0.1]/hook",
        "https://0.0.0.0/hook",
        "https://localhost/hook",
        "https://user:pass@example.com/hook",
        `https://example.com/${"a".repeat(2048)}`
      ]) {
        const res = yield* api.call("POST", `${root}/webhooks`, {
          token: api.fixtures.admin.token,
          body: { url, event_types: [] }
        })
        expect(res.status, url).toBe(400)
        expect(res.body.error, url).toMatch(/url/)
      }
    })
  )
})
