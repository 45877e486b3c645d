/**
 * Alert delivery end to end, as a security team would subscribe: `candor serve` as real processes
 * (every role in one on the embedded default; API, gateway and worker apart on PostgreSQL and NATS
 * JetStream), an endpoint created through the API, and a receiver on loopback that answers the first
 * delivery with 500. The receiver gets `verdict.boundary_violation` for a violating call (again,
 * identical, after the 500), `agent.paused` for a pause and `enforcement.blocked` for the refused call
 * after it, each with a signature that `verifyWebhook` accepts and a delivery id it deduplicates on.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { verifyWebhook } from "../../core/WebhookSignature.js"
import { makeReceiver, type ReceivedRequest } from "../adapters/webhooks/Receiver.js"
import { skipsWithout } from "../support/Integration.js"
import { startServe } from "./ServeProcess.js"
import {
  INJECTED_THINKING,
  SERVICE_ROLE_KEY,
  anthropicUpstream,
  asOperator,
  newAgent,
  poll,
  printLogsOnFailure,
  sendThroughGateway,
  startSplitDeployment
} from "./Support.js"

/** The first retry comes 10 s after the 500; the rest within a few seconds of the action. */
const DELIVERY_MS = 30_000

const ALLOW_PRIVATE = { CANDOR_WEBHOOK_ALLOW_PRIVATE: "true" }

const alertsAreDeliveredSignedAndRetried = (gatewayUrl: string, apiUrl: string) =>
  Effect.gen(function* () {
    const receiver = yield* makeReceiver((n) => (n === 1 ? 500 : 200))
    const { providerKey, agentId } = newAgent()
    const send = sendThroughGateway(gatewayUrl, providerKey, { prompt: "Summarise this page" })

    const created = yield* asOperator(`${apiUrl}/v1/agents/${agentId}/webhooks`, {
      method: "POST",
      body: JSON.stringify({
        url: receiver.url,
        description: "security team",
        event_types: ["verdict.boundary_violation", "agent.paused", "enforcement.blocked"]
      })
    })
    expect(created).toMatchObject({ status: 201, body: { endpoint_id: expect.any(String), is_active: true } })
    const secret: string = created.body.signing_secret

    expect((yield* send).status).toBe(200)
    const delivered = (type: string) => (requests: ReadonlyArray<ReceivedRequest>) =>
      requests.some((r) => r.headers["x-candor-event"] === type)
    const all = () => Effect.sync(() => receiver.received)

    // The violation: refused once with 500, delivered again with the same id and body.
    const afterRetry = yield* poll(
      all(),
      (requests) => requests.filter((r) => r.headers["x-candor-event"] === "verdict.boundary_violation").length >= 2,
      "verdict.boundary_violation delivered after its retry",
      DELIVERY_MS
    )
    const [first, retry] = afterRetry.filter((r) => r.headers["x-candor-event"] === "verdict.boundary_violation")
    expect(retry!.headers["x-candor-delivery"]).toBe(first!.headers["x-candor-delivery"])
    expect(retry!.body).toBe(first!.body)
    const violation = JSON.parse(first!.body)
    expect(violation).toMatchObject({
      id: first!.headers["x-candor-delivery"],
      type: "verdict.boundary_violation",
      agent_id: agentId,
      data: { agent_id: agentId, verdict: "boundary_violation" }
    })
    expect(first!.body).not.toContain(INJECTED_THINKING)

    // A pause, then the refused call.
    expect(
      (yield* asOperator(`${apiUrl}/v1/agents/${agentId}/pause`, {
        method: "POST",
        body: JSON.stringify({ reason: "incident 7" })
      })).status
    ).toBe(200)
    yield* poll(send, (res) => res.status === 403, "refused after the pause", 5_000)
    const requests = yield* poll(
      all(),
      (r) => delivered("agent.paused")(r) && delivered("enforcement.blocked")(r),
      "agent.paused and enforcement.blocked delivered",
      DELIVERY_MS
    )

    for (const request of requests) {
      expect(request.method).toBe("POST")
      expect(request.path).toBe(new URL(receiver.url).pathname)
      expect(request.headers["content-type"]).toContain("application/json")
      expect(verifyWebhook(secret, request.body, request.headers, new Date())).toMatchObject({ ok: true })
      expect(verifyWebhook("whsec_not-the-secret", request.body, request.headers, new Date())).toMatchObject({
        ok: false
      })
      expect(Number(request.headers["x-candor-timestamp"])).toBeGreaterThan(0)
      expect(JSON.parse(request.body).id).toBe(request.headers["x-candor-delivery"])
    }
    // Deduplicated on the id: one event per occurrence (the violation counted once).
    const unique = new Map(requests.map((r) => [r.headers["x-candor-delivery"], JSON.parse(r.body)]))
    const paused = [...unique.values()].find((e) => e.type === "agent.paused")
    expect(paused).toMatchObject({
      agent_id: agentId,
      data: { action: "pause", actor: "service", reason: "incident 7" }
    })
    const blocked = [...unique.values()].find((e) => e.type === "enforcement.blocked")
    expect(blocked).toMatchObject({ agent_id: agentId, data: { rule: "containment", reason: "agent_paused" } })

    // What the API recorded: the violation's delivery attempted twice, delivered.
    const deliveries = yield* asOperator(
      `${apiUrl}/v1/agents/${agentId}/webhooks/deliveries?endpoint_id=${created.body.endpoint_id}&limit=100`
    )
    expect(deliveries.status).toBe(200)
    expect(deliveries.body.deliveries).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ event_id: violation.id, status: "delivered", attempts: 2, last_status: 200 })
      ])
    )
  })

layer(Layer.empty, { timeout: "120 seconds", excludeTestServices: true })("webhooks on the embedded default", (it) => {
  it.scoped(
    "a loopback receiver gets the violation (retried after a 500), the pause and the blocked call, signed",
    () =>
      Effect.gen(function* () {
        const upstream = yield* anthropicUpstream(INJECTED_THINKING)
        const serve = yield* startServe({
          env: { ANTHROPIC_BASE_URL: upstream.url, SERVICE_ROLE_KEY, ...ALLOW_PRIVATE }
        })
        yield* alertsAreDeliveredSignedAndRetried(serve.gatewayUrl, serve.apiUrl).pipe(printLogsOnFailure(serve))
      }),
    { timeout: 120_000 }
  )
})

layer(Layer.empty, { timeout: "180 seconds", excludeTestServices: true })("webhooks on a split deployment", (it) => {
  it.scoped.skipIf(skipsWithout("postgres", "nats"))(
    "API, gateway and worker apart: the same deliveries, from the worker's relay",
    () =>
      Effect.gen(function* () {
        const upstream = yield* anthropicUpstream(INJECTED_THINKING)
        const { api, gateway, worker } = yield* startSplitDeployment(["worker", "api", "gateway"], {
          ANTHROPIC_BASE_URL: upstream.url,
          ...ALLOW_PRIVATE
        })
        yield* alertsAreDeliveredSignedAndRetried(gateway.gatewayUrl, api.apiUrl).pipe(
          printLogsOnFailure(api, gateway, worker)
        )
      }),
    { timeout: 180_000 }
  )
})
