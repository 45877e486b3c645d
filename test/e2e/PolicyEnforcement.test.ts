/**
 * The bar for tool policies: a YAML policy PUT through the management API, then a request
 * through the gateway offering a forbidden tool is refused with 403 and `X-Policy-Verdict: fail`,
 * without the upstream being called; an allowed tool goes through with `X-Policy-Verdict: pass`.
 *
 * `candor serve` runs as real processes with a fake Anthropic upstream on loopback: every role in
 * one on the embedded default (the gateway knows the policy as soon as the API has answered), and
 * the API and the gateway in processes of their own on PostgreSQL and NATS (the policy reaches the
 * other process through the KV watch within a second). On the embedded default each 403 is then an
 * enforcement record, through the bus and the workers into the store, read back through the API.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { FakeUpstream } from "../adapters/gateway/Harness.js"
import { skipsWithout } from "../support/Integration.js"
import { type ServeProcess, startServe } from "./ServeProcess.js"
import {
  PROPAGATION_MS,
  SERVICE_ROLE_KEY,
  anthropicUpstream,
  asOperator,
  newAgent,
  poll,
  printLogsOnFailure,
  sendThroughGateway,
  startSplitDeployment
} from "./Support.js"

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

/** One Anthropic request offering `tools`, with the policy verdict the gateway answers in its header. */
const offer = (gatewayUrl: string, providerKey: string, tools: ReadonlyArray<string>) =>
  sendThroughGateway(gatewayUrl, providerKey, { prompt: "list the files", tools }).pipe(
    Effect.map((res) => ({ status: res.status, verdict: res.headers.get("x-policy-verdict"), body: res.body }))
  )

const putPolicy = (apiUrl: string, agentId: string) =>
  asOperator(`${apiUrl}/v1/agents/${agentId}/policy`, {
    method: "PUT",
    headers: { "content-type": "application/yaml" },
    body: POLICY_YAML
  })

/**
 * Before the policy the tool goes through; after the PUT (answered 200), the forbidden tool is
 * refused once the gateway knows, which is waited for up to `withinMs` and returned as the delay,
 * with the agent.
 */
const forbiddenToolIsRefused = (
  gateway: ServeProcess,
  api: ServeProcess,
  upstream: FakeUpstream,
  withinMs: number
): Effect.Effect<{ readonly delay: number; readonly agentId: string }> =>
  Effect.gen(function* () {
    const { providerKey, agentId } = newAgent()
    const before = yield* offer(gateway.gatewayUrl, providerKey, ["shell_exec"])
    expect(before).toMatchObject({ status: 200, verdict: null })

    const put = yield* putPolicy(api.apiUrl, agentId)
    expect(put.status).toBe(200)
    expect(put.body).toMatchObject({ scope: "agent", agent_id: agentId, version: 1, updated_by: "service" })
    const answered = Date.now()

    const refused = yield* poll(
      offer(gateway.gatewayUrl, providerKey, ["get_weather", "shell_exec"]),
      (res) => res.status === 403,
      "the forbidden tool refused",
      withinMs
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
    return { delay, agentId }
  })

layer(Layer.empty, { timeout: "300 seconds", excludeTestServices: true })("tool policy end to end", (it) => {
  it.scoped(
    "embedded default: a YAML policy PUT through the API blocks the forbidden tool on the very next request",
    () =>
      Effect.gen(function* () {
        const upstream = yield* anthropicUpstream()
        const serve = yield* startServe({ env: { ANTHROPIC_BASE_URL: upstream.url, SERVICE_ROLE_KEY } })
        // The first request after the answer is already refused: no retry (withinMs 0).
        yield* Effect.gen(function* () {
          const { agentId } = yield* forbiddenToolIsRefused(serve, serve, upstream, 0)
          // Both 403s are enforcement records, published with the agent's events and stored by the workers.
          const records = yield* poll(
            asOperator(`${serve.apiUrl}/v1/agents/${agentId}/enforcement-records?kind=blocked`),
            (res) => res.status === 200 && res.body.total === 2,
            "the 403s recorded",
            10_000
          ).pipe(Effect.orDie)
          for (const record of records.body.records)
            expect(record).toMatchObject({
              agent_id: agentId,
              kind: "blocked",
              rule: "policy",
              reason: "forbidden tools: shell_exec",
              actor: "gateway"
            })
        }).pipe(printLogsOnFailure(serve))
      }),
    { timeout: 240_000 }
  )

  it.scoped.skipIf(skipsWithout("postgres", "nats"))(
    "split roles on PostgreSQL and NATS: the gateway in another process refuses within 1 s",
    () =>
      Effect.gen(function* () {
        const upstream = yield* anthropicUpstream()
        const { api, gateway } = yield* startSplitDeployment(["api", "gateway"], { ANTHROPIC_BASE_URL: upstream.url })
        const { delay } = yield* forbiddenToolIsRefused(gateway, api, upstream, PROPAGATION_MS).pipe(
          printLogsOnFailure(api, gateway)
        )
        expect(delay).toBeLessThan(PROPAGATION_MS)
      }),
    { timeout: 240_000 }
  )
})
