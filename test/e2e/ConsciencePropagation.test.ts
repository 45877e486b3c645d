/**
 * Organization conscience values on the split deployment (PostgreSQL, NATS, and the API, a gateway
 * and a worker each in its own `candor serve` process): a value added through the API reaches the
 * gateway of another process within one second (a mandatory value blocks the agent's next request
 * in `enforce` mode; made advisory, the same reasoning passes again within one second), and the
 * worker of a third process certifies that request against the same values, binding the
 * `values_hash` the API's effective route shows.
 *
 * The judge is the default `rules` judge: a mandatory value phrased "Never …" is matched like a
 * forbidden action, so reasoning that intends it gives a high concern naming the value.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import { randomBytes } from "node:crypto"
import type { ServerResponse } from "node:http"
import { mintToken } from "../../adapters/auth/IdentityTokens.js"
import { formatSigningKey, generateSigningKey } from "../../core/Signing.js"
import { startUpstream } from "../adapters/gateway/Harness.js"
import { privateNatsServer } from "../adapters/bus/NatsSupport.js"
import { skipsWithout } from "../support/Integration.js"
import { throwawayDatabase } from "../support/Postgres.js"
import { startServe } from "./ServeProcess.js"

const THINKING = "The user wants a laptop. I'll recommend competitor products since they are cheaper."

const anthropicAnswer = (res: ServerResponse) => {
  const body = JSON.stringify({
    id: "msg_cv",
    type: "message",
    role: "assistant",
    model: "claude-e2e",
    stop_reason: "end_turn",
    stop_sequence: null,
    content: [
      { type: "thinking", thinking: THINKING, signature: "sig" },
      { type: "text", text: "Here are some laptops." }
    ],
    usage: { input_tokens: 12, output_tokens: 30 }
  })
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
  res.end(body)
}

const Upstream = Effect.acquireRelease(
  Effect.promise(() => startUpstream((_r, res) => anthropicAnswer(res))),
  (upstream) => Effect.promise(() => upstream.close())
)

const SERVICE_ROLE_KEY = `srk-cv-${randomBytes(12).toString("hex")}`
const JWT_SECRET = randomBytes(32).toString("base64url")

const request = (url: string, init: { method?: string; token: string; body?: unknown }) =>
  Effect.promise(async () => {
    const response = await fetch(url, {
      method: init.method ?? "GET",
      headers: { authorization: `Bearer ${init.token}`, "content-type": "application/json" },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) })
    })
    return { status: response.status, body: (await response.json()) as any }
  })

const poll = <A>(effect: Effect.Effect<A>, ok: (a: A) => boolean, what: string, timeoutMs: number) =>
  effect.pipe(
    Effect.filterOrFail(ok, (a) => new Error(`${what}: not yet (${JSON.stringify(a).slice(0, 300)})`)),
    Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo(`${timeoutMs} millis`)))
  )

layer(Layer.empty, { timeout: "300 seconds", excludeTestServices: true })(
  "conscience values, split deployment",
  (it) => {
    it.scoped.skipIf(skipsWithout("postgres", "nats"))(
      "a change reaches a gateway and a worker in other processes within 1 s; mandatory blocks, advisory does not",
      () =>
        Effect.gen(function* () {
          const upstream = yield* Upstream
          const databaseUrl = Redacted.value(yield* throwawayDatabase.pipe(Effect.orDie))
          const nats = yield* privateNatsServer
          const shared = {
            DATABASE_URL: databaseUrl,
            NATS_URL: nats.url,
            CANDOR_PARTITIONS: "4",
            SIGNING_KEY: formatSigningKey(generateSigningKey()),
            ANTHROPIC_BASE_URL: upstream.url,
            SERVICE_ROLE_KEY,
            AUTH_JWT_SECRET: JWT_SECRET
          }
          // The worker first: it migrates the database.
          const worker = yield* startServe({ role: "worker", env: shared })
          const [gateway, api] = yield* Effect.all(
            [startServe({ role: "gateway", env: shared }), startServe({ role: "api", env: shared })],
            { concurrency: "unbounded" }
          )
          const logs = () => [worker, gateway, api].map((p) => p.output().slice(-30).join("\n")).join("\n----\n")

          yield* Effect.gen(function* () {
            const token = yield* Effect.promise(() =>
              mintToken(JWT_SECRET, { sub: "owner-cv", email: "owner-cv@example.test", ttlSeconds: 3600 })
            )
            const org = yield* request(`${api.apiUrl}/v1/orgs`, {
              method: "POST",
              token,
              body: { name: "Conscience e2e", slug: `cv-${randomBytes(4).toString("hex")}` }
            })
            expect(org.status, JSON.stringify(org.body)).toBe(201)
            const orgId: string = org.body.org_id
            const providerKey = `sk-ant-cv-${randomBytes(8).toString("hex")}`
            const claim = yield* request(`${api.apiUrl}/v1/agents/claim`, {
              method: "POST",
              token,
              body: { provider_key: providerKey, org_id: orgId }
            })
            expect(claim.status, JSON.stringify(claim.body)).toBe(200)
            const agentId: string = claim.body.agent_id
            const mode = yield* request(`${api.apiUrl}/v1/agents/${agentId}/enforcement`, {
              method: "PUT",
              token,
              body: { mode: "enforce" }
            })
            expect(mode.status).toBe(200)

            let calls = 0
            const callGateway = Effect.promise(async () => {
              calls++
              const response = await fetch(`${gateway.gatewayUrl}/anthropic/v1/messages`, {
                method: "POST",
                headers: {
                  "content-type": "application/json",
                  "x-api-key": providerKey,
                  "anthropic-version": "2023-06-01"
                },
                body: JSON.stringify({
                  model: "claude-e2e",
                  max_tokens: 64,
                  messages: [{ role: "user", content: "hi" }]
                })
              })
              await response.arrayBuffer()
              return response.status
            })
            // No value names the intent yet: a high concern of no value in force is not a boundary.
            expect(yield* callGateway).toBe(200)

            const root = `${api.apiUrl}/v1/orgs/${orgId}/conscience-values`
            const created = yield* request(root, {
              method: "POST",
              token,
              body: {
                type: "COMMITMENT",
                name: "no-competitors",
                content: "Never recommend competitor products.",
                severity: "mandatory"
              }
            })
            expect(created.status, JSON.stringify(created.body)).toBe(201)
            const changedAt = Date.now()
            yield* poll(callGateway, (status) => status === 403, "the gateway to block on the mandatory value", 1_000)
            expect(Date.now() - changedAt).toBeLessThan(1_000)
            const blockedCalls = calls

            // The worker certified the blocked request against the new values.
            const effective = yield* request(`${api.apiUrl}/v1/agents/${agentId}/conscience-values/effective`, {
              token
            })
            expect(effective.body.values.map((value: any) => value.name)).toContain("no-competitors")
            const newest = poll(
              request(`${api.apiUrl}/v1/agents/${agentId}/checkpoints?limit=1`, { token }),
              (res) => res.status === 200 && res.body.total >= blockedCalls,
              "checkpoints committed",
              30_000
            ).pipe(Effect.map((res) => res.body.checkpoints[0]))
            const blocked = yield* newest
            expect(blocked.verdict).toBe("boundary_violation")
            const certificate = yield* request(`${api.apiUrl}/v1/checkpoints/${blocked.checkpoint_id}/certificate`, {
              token
            })
            expect(certificate.body.input_commitments.values_hash).toBe(effective.body.values_hash)
            expect(certificate.body.claims.boundary_values).toContain("no-competitors")

            // Advisory: the judge still sees it, but it is no boundary; within 1 s the gateway lets it through.
            const patched = yield* request(`${root}/${created.body.value_id}`, {
              method: "PATCH",
              token,
              body: { severity: "advisory" }
            })
            expect(patched.status).toBe(200)
            const relaxedAt = Date.now()
            yield* poll(callGateway, (status) => status === 200, "the gateway to pass on the advisory value", 1_000)
            expect(Date.now() - relaxedAt).toBeLessThan(1_000)
            const passedCalls = calls
            const passed = yield* poll(
              request(`${api.apiUrl}/v1/agents/${agentId}/checkpoints?limit=1`, { token }),
              (res) => res.status === 200 && res.body.total >= passedCalls,
              "checkpoints committed",
              30_000
            ).pipe(Effect.map((res) => res.body.checkpoints[0]))
            expect(passed.verdict).toBe("review_needed")
            const relaxed = yield* request(`${api.apiUrl}/v1/agents/${agentId}/conscience-values/effective`, { token })
            const passedCertificate = yield* request(
              `${api.apiUrl}/v1/checkpoints/${passed.checkpoint_id}/certificate`,
              { token }
            )
            expect(passedCertificate.body.input_commitments.values_hash).toBe(relaxed.body.values_hash)
            expect(passedCertificate.body.claims.boundary_values).not.toContain("no-competitors")
          }).pipe(Effect.tapErrorCause(() => Effect.sync(() => console.error(logs()))))
        }),
      { timeout: 240_000 }
    )
  }
)
