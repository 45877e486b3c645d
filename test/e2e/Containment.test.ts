/**
 * Containment on a split deployment: `candor serve --role api` and `--role gateway` as separate
 * processes on PostgreSQL and NATS, a fake Anthropic upstream on loopback. Once the API has answered
 * a pause, the gateway in the other process refuses the agent's next request with 403
 * `containment_error` within one second; after a resume it forwards again within one second; a kill
 * is refused as `agent_killed`.
 */
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import { randomBytes } from "node:crypto"
import { agentIdOf } from "../../adapters/gateway/AgentIdentity.js"
import { keyHashOf } from "../../adapters/providers/Identity.js"
import { startUpstream } from "../adapters/gateway/Harness.js"
import { privateNatsServer } from "../adapters/bus/NatsSupport.js"
import { layerIntegration } from "../support/Integration.js"
import { throwawayDatabase } from "../support/Postgres.js"
import { startServe } from "./ServeProcess.js"

const SERVICE_ROLE_KEY = `srk-e2e-${randomBytes(12).toString("hex")}`

/** How soon a change made through the API must be enforced by a gateway in another process. */
const PROPAGATION_MS = 1_000

const Upstream = Effect.acquireRelease(
  Effect.promise(() =>
    startUpstream((_r, res) => {
      const body = JSON.stringify({
        id: "msg_e2e",
        type: "message",
        role: "assistant",
        model: "claude-e2e",
        stop_reason: "end_turn",
        stop_sequence: null,
        content: [{ type: "text", text: "Done." }],
        usage: { input_tokens: 1, output_tokens: 1 }
      })
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
      res.end(body)
    })
  ),
  (upstream) => Effect.promise(() => upstream.close())
)

const fetchJson = (url: string, init: RequestInit) =>
  Effect.promise(async () => {
    const response = await fetch(url, init)
    return { status: response.status, body: (await response.json()) as any }
  })

/** Polls the gateway until `ok` holds, failing past the deadline; returns the answer and how long it took. */
const within = <A>(effect: Effect.Effect<A>, ok: (a: A) => boolean, what: string, deadlineMs: number) =>
  Effect.gen(function* () {
    const started = Date.now()
    const answer = yield* effect.pipe(
      Effect.filterOrFail(ok, (a) => new Error(`${what}: not within ${deadlineMs} ms (${JSON.stringify(a)})`)),
      Effect.retry(Schedule.spaced("10 millis").pipe(Schedule.upTo(`${deadlineMs} millis`)))
    )
    return { answer, ms: Date.now() - started }
  })

layerIntegration(["postgres", "nats"], Layer.empty, { timeout: "180 seconds", excludeTestServices: true })(
  "containment on a split deployment",
  (it) => {
    it.scoped(
      "a pause answered by the API is enforced by a gateway in another process within 1 s",
      () =>
        Effect.gen(function* () {
          const upstream = yield* Upstream
          const databaseUrl = Redacted.value(yield* throwawayDatabase.pipe(Effect.orDie))
          // A NATS server of the test's own: the gateway role uses the default prefix.
          const nats = yield* privateNatsServer
          const shared = {
            DATABASE_URL: databaseUrl,
            NATS_URL: nats.url,
            ANTHROPIC_BASE_URL: upstream.url,
            SERVICE_ROLE_KEY
          }
          const [api, gateway] = yield* Effect.all(
            [startServe({ role: "api", env: shared }), startServe({ role: "gateway", env: shared })],
            { concurrency: "unbounded" }
          )
          const providerKey = `sk-ant-e2e-${randomBytes(8).toString("hex")}`
          const agentId = agentIdOf(keyHashOf(providerKey)!, undefined)
          const send = fetchJson(`${gateway.gatewayUrl}/anthropic/v1/messages`, {
            method: "POST",
            headers: {
              "content-type": "application/json",
              "x-api-key": providerKey,
              "anthropic-version": "2023-06-01"
            },
            body: JSON.stringify({ model: "claude-e2e", max_tokens: 8, messages: [{ role: "user", content: "hi" }] })
          })
          const operator = (path: string, body?: unknown) =>
            fetchJson(`${api.apiUrl}/v1/agents/${agentId}/${path}`, {
              method: "POST",
              headers: { authorization: `Bearer ${SERVICE_ROLE_KEY}`, "content-type": "application/json" },
              ...(body === undefined ? {} : { body: JSON.stringify(body) })
            })

          yield* Effect.gen(function* () {
            expect((yield* send).status).toBe(200)

            const paused = yield* operator("pause", { reason: "incident 42" })
            expect(paused).toMatchObject({
              status: 200,
              body: { containment_status: "paused", contained_by: "service" }
            })
            const refused = yield* within(send, (res) => res.status === 403, "refused after pause", PROPAGATION_MS)
            expect(refused.answer.body).toEqual({
              error: "agent is paused: incident 42",
              type: "containment_error",
              reason: "agent_paused",
              containment_error: {
                type: "containment_error",
                reason: "agent_paused",
                agent_id: agentId,
                contained_at: paused.body.contained_at,
                contained_by: "service"
              }
            })
            // Refused without reaching the upstream.
            const forwarded = upstream.requests.length
            expect((yield* send).status).toBe(403)
            expect(upstream.requests.length).toBe(forwarded)

            expect((yield* operator("resume")).status).toBe(200)
            yield* within(send, (res) => res.status === 200, "forwarded after resume", PROPAGATION_MS)

            expect((yield* operator("kill")).status).toBe(200)
            const killed = yield* within(send, (res) => res.status === 403, "refused after kill", PROPAGATION_MS)
            expect(killed.answer.body).toMatchObject({
              error: "agent is killed",
              reason: "agent_killed",
              containment_error: { reason: "agent_killed", agent_id: agentId }
            })
          }).pipe(
            Effect.tapErrorCause(() =>
              Effect.sync(() =>
                console.error([api, gateway].map((p) => p.output().slice(-30).join("\n")).join("\n----\n"))
              )
            )
          )
        }),
      { timeout: 180_000 }
    )
  }
)
