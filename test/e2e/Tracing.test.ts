/**
 * Traces as an operator's collector sees them (docs/tracing.md): `candor serve` on the embedded
 * default (two threads) with OTEL_EXPORTER_OTLP_ENDPOINT pointing at a loopback OTLP receiver.
 * One request through the gateway, carrying the agent's own `traceparent`, becomes one trace: the
 * gateway thread's spans (request, decision, upstream call, extraction, judge, publish) and the
 * backend thread's (consume, attest, commit, relay), each hop the child of the one before, with the
 * GenAI attributes and the verdict, and nowhere in the exported bytes a prompt, thinking or key.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomBytes } from "node:crypto"
import { type ReceivedSpan, startOtlpReceiver } from "../support/OtlpReceiver.js"
import { startServe } from "./ServeProcess.js"
import {
  INJECTED_THINKING,
  SERVICE_ROLE_KEY,
  anthropicUpstream,
  asOperator,
  fetchJson,
  newAgent,
  poll,
  printLogsOnFailure
} from "./Support.js"

const receiver = Effect.acquireRelease(Effect.promise(startOtlpReceiver), (r) => Effect.promise(() => r.close()))

const AGENT_TRACE = randomBytes(16).toString("hex")
const AGENT_SPAN = randomBytes(8).toString("hex")

const GATEWAY_HOPS = [
  "candor.gateway.decision",
  "candor.gateway.upstream",
  "candor.gateway.extraction",
  "candor.gateway.judge",
  "candor.gateway.publish"
]

layer(Layer.empty, { timeout: "180 seconds", excludeTestServices: true })("traces over OTLP", (it) => {
  for (const protocol of ["http/json", "http/protobuf"] as const)
    it.scoped(
      `${protocol}: one request is one trace from the gateway's decision to the worker's commit and relay`,
      () =>
        Effect.gen(function* () {
          const otlp = yield* receiver
          const upstream = yield* anthropicUpstream(INJECTED_THINKING)
          const serve = yield* startServe({
            env: {
              ANTHROPIC_BASE_URL: upstream.url,
              SERVICE_ROLE_KEY,
              OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
              OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
              OTEL_SERVICE_NAME: "candor-e2e",
              OTEL_BSP_SCHEDULE_DELAY: "50"
            }
          })
          const { agentId, providerKey } = newAgent()
          const prompt = `the launch code is ${randomBytes(8).toString("hex")}`

          yield* Effect.gen(function* () {
            const answer = yield* fetchJson(`${serve.gatewayUrl}/anthropic/v1/messages`, {
              method: "POST",
              headers: {
                "content-type": "application/json",
                "x-api-key": providerKey,
                "anthropic-version": "2023-06-01",
                traceparent: `00-${AGENT_TRACE}-${AGENT_SPAN}-01`
              },
              body: JSON.stringify({
                model: "claude-e2e",
                max_tokens: 64,
                messages: [{ role: "user", content: prompt }]
              })
            })
            expect(answer.status).toBe(200)
            // The agent's traceparent went upstream as it was sent: Candor adds none of its own.
            expect(upstream.requests[0]!.req.headers["traceparent"]).toBe(`00-${AGENT_TRACE}-${AGENT_SPAN}-01`)

            // The relay's span comes last (after the commit, the outbox's send): wait for it.
            const trace = yield* poll(
              Effect.sync(() => otlp.spans().filter((s) => s.traceId === AGENT_TRACE)),
              (spans) => spans.some((s) => s.name === "candor.worker.relay"),
              "the request's spans exported, up to the relay's",
              60_000
            )
            const named = (name: string): ReceivedSpan => {
              const found = trace.filter((s) => s.name === name)
              expect(found, name).toHaveLength(name === "candor.worker.relay" ? found.length : 1)
              return found[0]!
            }

            // The gateway's request span continues the agent's trace; its hops are its children.
            const request = named("candor.gateway.request")
            expect(request.parentSpanId).toBe(AGENT_SPAN)
            expect(request.kind).toBe(2) // server
            for (const hop of GATEWAY_HOPS) expect(named(hop).parentSpanId, hop).toBe(request.spanId)
            expect(named("candor.gateway.upstream").kind).toBe(3) // client
            expect(named("candor.gateway.publish").kind).toBe(4) // producer

            // The worker's hops, on the backend thread, hang from the gateway's publish through the bus.
            const consume = named("candor.worker.consume")
            expect(consume.parentSpanId).toBe(named("candor.gateway.publish").spanId)
            expect(consume.kind).toBe(5) // consumer
            expect(named("candor.worker.attest").parentSpanId).toBe(consume.spanId)
            expect(named("candor.worker.commit").parentSpanId).toBe(consume.spanId)
            for (const relay of trace.filter((s) => s.name === "candor.worker.relay"))
              expect(relay.parentSpanId).toBe(consume.spanId)

            // Both threads export, each as its own resource of the configured service.
            expect(request.resource).toMatchObject({ "service.name": "candor-e2e", "candor.roles": "gateway" })
            expect(consume.resource).toMatchObject({
              "service.name": "candor-e2e",
              "candor.roles": "api,worker,prover"
            })

            // GenAI semantic conventions and Candor's verdict, the one the checkpoint records.
            const checkpoints = yield* poll(
              asOperator(`${serve.apiUrl}/v1/agents/${agentId}/checkpoints`),
              (res) => res.status === 200 && res.body.checkpoints?.length === 1,
              "checkpoint committed",
              10_000
            )
            const checkpoint = checkpoints.body.checkpoints[0]
            const genAi = {
              "gen_ai.operation.name": "chat",
              "gen_ai.provider.name": "anthropic",
              "gen_ai.request.model": "claude-e2e",
              "gen_ai.response.model": "claude-e2e",
              "gen_ai.usage.input_tokens": 12,
              "gen_ai.usage.output_tokens": 30
            }
            expect(named("candor.gateway.upstream").attributes).toMatchObject({
              ...genAi,
              "http.response.status_code": 200
            })
            expect(request.attributes).toMatchObject({
              ...genAi,
              "candor.verdict": checkpoint.verdict,
              "candor.agent_id": agentId,
              "candor.checkpoint_id": checkpoint.checkpoint_id
            })
            expect(named("candor.worker.attest").attributes).toMatchObject({ "candor.verdict": checkpoint.verdict })
            expect(consume.attributes).toMatchObject({ "candor.checkpoint_id": checkpoint.checkpoint_id })

            // Times nest: each hop within the request's trace, in order.
            expect(named("candor.gateway.decision").endNs).toBeLessThanOrEqual(named("candor.gateway.upstream").startNs)
            expect(consume.startNs).toBeGreaterThanOrEqual(named("candor.gateway.publish").startNs)

            // A request the gateway refuses itself (a paused agent) is a trace too: its request and decision.
            expect(
              (yield* asOperator(`${serve.apiUrl}/v1/agents/${agentId}/pause`, {
                method: "POST",
                body: JSON.stringify({ reason: "traced" })
              })).status
            ).toBe(200)
            const refusedTrace = randomBytes(16).toString("hex")
            const refusedAnswer = yield* fetchJson(`${serve.gatewayUrl}/anthropic/v1/messages`, {
              method: "POST",
              headers: {
                "content-type": "application/json",
                "x-api-key": providerKey,
                "anthropic-version": "2023-06-01",
                traceparent: `00-${refusedTrace}-${AGENT_SPAN}-01`
              },
              body: JSON.stringify({
                model: "claude-e2e",
                max_tokens: 64,
                messages: [{ role: "user", content: prompt }]
              })
            })
            expect(refusedAnswer.status).toBe(403)
            const refused = yield* poll(
              Effect.sync(() => otlp.spans().filter((s) => s.traceId === refusedTrace)),
              (spans) => spans.length >= 2,
              "the refused request's spans exported",
              30_000
            )
            const refusedRequest = refused.find((s) => s.name === "candor.gateway.request")!
            expect(refusedRequest).toMatchObject({
              parentSpanId: AGENT_SPAN,
              attributes: { "candor.decision": "refused", "http.response.status_code": 403 }
            })
            expect(refused.find((s) => s.name === "candor.gateway.decision")?.parentSpanId).toBe(refusedRequest.spanId)

            // Never the prompt, the thinking or the key, in any encoding.
            const exported = Buffer.concat(otlp.exports.map((e) => e.body))
            for (const secret of [prompt, INJECTED_THINKING.slice(0, 40), providerKey])
              expect(exported.includes(Buffer.from(secret)), secret).toBe(false)
          }).pipe(printLogsOnFailure(serve))
        }),
      // A child process on two threads: its start alone takes most of vitest's default 30 s on a loaded machine.
      120_000
    )
})
