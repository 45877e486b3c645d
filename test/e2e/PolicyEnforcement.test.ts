/**
 * The bar for tool policies: a YAML policy PUT through the management API, then a request
 * through the gateway offering a forbidden tool is refused with 403 and `X-Policy-Verdict: fail`,
 * without the upstream being called; an allowed tool goes through with `X-Policy-Verdict: pass`.
 *
 * `candor serve` runs as real processes with a fake Anthropic upstream on loopback: every role in
 * one on the embedded default (the gateway knows the policy as soon as the API has answered), and
 * the API and the gateway in processes of their own on PostgreSQL and NATS (the policy reaches the
 * other process through the KV watch within a second).
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import { randomBytes } from "node:crypto"
import type { ServerResponse } from "node:http"
import { agentIdOf } from "../../adapters/gateway/AgentIdentity.js"
import { keyHashOf } from "../../adapters/providers/Identity.js"
import { formatSigningKey, generateSigningKey } from "../../core/Signing.js"
import { privateNatsServer } from "../adapters/bus/NatsSupport.js"
import { type FakeUpstream, startUpstream } from "../adapters/gateway/Harness.js"
import { skipsWithout } from "../support/Integration.js"
import { throwawayDatabase } from "../support/Postgres.js"
import { type ServeProcess, startServe } from "./ServeProcess.js"

const SERVICE_ROLE_KEY = `srk-e2e-${randomBytes(12).toString("hex")}`

const POLICY_YAML = `meta:
  schema_version: "1.0"
  name: no shells
capability_mappings:
  lookups:
    tools: ["get_*"]
    card_actions: [lookup]
forbidden:
  - pattern: "?hell_*"
    reason: no shell access
    severity: critical
defaults:
  enforcement_mode: enforce
  unmapped_tool_action: allow
`

const anthropicAnswer = (res: ServerResponse) => {
  const body = JSON.stringify({
    id: "msg_policy",
    type: "message",
    role: "assistant",
    model: "claude-e2e",
    stop_reason: "end_turn",
    stop_sequence: null,
    content: [{ type: "text", text: "Done." }],
    usage: { input_tokens: 5, output_tokens: 2 }
  })
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
  res.end(body)
}

const Upstream = Effect.acquireRelease(
  Effect.promise(() => startUpstream((_r, res) => anthropicAnswer(res))),
  (upstream) => Effect.promise(() => upstream.close())
)

/** One Anthropic request offering `tools`, as an SDK sends it. */
const offer = (gatewayUrl: string, providerKey: string, tools: ReadonlyArray<string>) =>
  Effect.promise(async () => {
    const response = await fetch(`${gatewayUrl}/anthropic/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": providerKey, "anthropic-version": "2023-06-01" },
      body: JSON.stringify({
        model: "claude-e2e",
        max_tokens: 16,
        messages: [{ role: "user", content: "list the files" }],
        tools: tools.map((name) => ({ name, input_schema: { type: "object" } }))
      })
    })
    return { status: response.status, verdict: response.headers.get("x-policy-verdict"), body: await response.json() }
  })

const putPolicy = (apiUrl: string, agentId: string) =>
  Effect.promise(async () => {
    const response = await fetch(`${apiUrl}/v1/agents/${agentId}/policy`, {
      method: "PUT",
      headers: { authorization: `Bearer ${SERVICE_ROLE_KEY}`, "content-type": "application/yaml" },
      body: POLICY_YAML
    })
    return { status: response.status, body: (await response.json()) as any }
  })

/**
 * Before the policy the tool goes through; after the PUT (answered 200), the forbidden tool is
 * refused once the gateway knows, which is waited for up to `withinMs` and returned as the delay.
 */
const forbiddenToolIsRefused = (
  gateway: ServeProcess,
  api: ServeProcess,
  upstream: FakeUpstream,
  withinMs: number
): Effect.Effect<number> =>
  Effect.gen(function* () {
    const providerKey = `sk-ant-e2e-${randomBytes(8).toString("hex")}`
    const agentId = agentIdOf(keyHashOf(providerKey)!, undefined)
    const before = yield* offer(gateway.gatewayUrl, providerKey, ["shell_exec"])
    expect(before).toMatchObject({ status: 200, verdict: null })

    const put = yield* putPolicy(api.apiUrl, agentId)
    expect(put.status).toBe(200)
    expect(put.body).toMatchObject({ scope: "agent", agent_id: agentId, version: 1, updated_by: "service" })
    const answered = Date.now()

    const attempt = offer(gateway.gatewayUrl, providerKey, ["get_weather", "shell_exec"]).pipe(
      Effect.filterOrFail(
        (res) => res.status === 403,
        (res) => new Error(`not refused ${Date.now() - answered} ms after the API answered: ${res.status}`)
      )
    )
    const refused = yield* (
      withinMs === 0 ? attempt : Effect.retry(attempt, Schedule.spaced("20 millis").pipe(Schedule.upTo(withinMs)))
    ).pipe(Effect.orDie)
    const delay = Date.now() - answered
    expect(refused.verdict).toBe("fail")
    expect(refused.body).toEqual({
      error: "blocked by Candor tool policy: shell_exec",
      policy_verdict: {
        mode: "enforce",
        verdict: "fail",
        violations: [{ type: "forbidden", tool: "shell_exec", reason: "no shell access", severity: "critical" }],
        warnings: [],
        tools_evaluated: 2
      }
    })

    // Refused before the upstream: it sees no request offering the forbidden tool once the policy is known.
    const seen = upstream.requests.length
    expect((yield* offer(gateway.gatewayUrl, providerKey, ["shell_exec"])).status).toBe(403)
    expect(upstream.requests.length).toBe(seen)
    const allowed = yield* offer(gateway.gatewayUrl, providerKey, ["get_weather"])
    expect(allowed).toMatchObject({ status: 200, verdict: "pass", body: { content: [{ text: "Done." }] } })
    expect(upstream.requests.length).toBe(seen + 1)
    return delay
  })

const dumpOnFailure = (...processes: ReadonlyArray<ServeProcess>) =>
  Effect.tapErrorCause(() =>
    Effect.sync(() => console.error(processes.map((p) => p.output().slice(-30).join("\n")).join("\n----\n")))
  )

layer(Layer.empty, { timeout: "300 seconds", excludeTestServices: true })("tool policy end to end", (it) => {
  it.scoped(
    "embedded default: a YAML policy PUT through the API blocks the forbidden tool on the very next request",
    () =>
      Effect.gen(function* () {
        const upstream = yield* Upstream
        const serve = yield* startServe({ env: { ANTHROPIC_BASE_URL: upstream.url, SERVICE_ROLE_KEY } })
        // The first request after the answer is already refused: no retry (withinMs 0).
        yield* forbiddenToolIsRefused(serve, serve, upstream, 0).pipe(dumpOnFailure(serve))
      }),
    { timeout: 240_000 }
  )

  it.scoped.skipIf(skipsWithout("postgres", "nats"))(
    "split roles on PostgreSQL and NATS: the gateway in another process refuses within 1 s",
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
          SERVICE_ROLE_KEY
        }
        const [api, gateway] = yield* Effect.all(
          [startServe({ role: "api", env: shared }), startServe({ role: "gateway", env: shared })],
          { concurrency: "unbounded" }
        )
        const delay = yield* forbiddenToolIsRefused(gateway, api, upstream, 1000).pipe(dumpOnFailure(api, gateway))
        expect(delay).toBeLessThan(1000)
      }),
    { timeout: 240_000 }
  )
})
