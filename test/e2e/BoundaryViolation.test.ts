/**
 * The end-to-end bar: a boundary violation through the gateway yields, within seconds, a
 * certificate whose verdict proof `candor verify` accepts offline.
 *
 * `candor serve` runs as real processes: every role in one on the embedded default (PGlite, the
 * in-process bus), and each role in its own process on PostgreSQL and NATS JetStream. A fake
 * Anthropic upstream on loopback answers with a thinking block in which the model means to follow
 * injected instructions; the `rules` judge flags it (prompt_injection, critical). Everything after
 * the gateway call is read from the public endpoints, and the certificate is checked by
 * `candor verify` as a child process with no database. On the way, the operator's view (service-role
 * key): the agent is listed though nobody claimed it, and its AP-Trace records what the judge read.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { card } from "../adapters/store/Fixtures.js"
import { skipsWithout } from "../support/Integration.js"
import { startServe } from "./ServeProcess.js"
import {
  INJECTED_THINKING,
  SERVICE_ROLE_KEY,
  anthropicUpstream,
  asOperator,
  fetchJson,
  newAgent,
  poll,
  printLogsOnFailure,
  sendThroughGateway,
  startSplitDeployment,
  verifyOffline
} from "./Support.js"

/**
 * One violating call through the gateway; then, from the public API alone, its proved certificate,
 * checked offline. With `card`, the operator sets the agent's card first: a gateway in the same process
 * has it at once (one in another process hears of it through the KV watch, so there it is not set).
 */
const violationIsProvedAndVerifiesOffline = (gatewayUrl: string, apiUrl: string, options: { readonly card: boolean }) =>
  Effect.gen(function* () {
    const { providerKey, agentId } = newAgent()
    if (options.card) {
      const updated = yield* asOperator(`${apiUrl}/v1/agents/${agentId}/card`, {
        method: "PATCH",
        body: JSON.stringify({ card_json: card(agentId, 90, "card-e2e"), conscience_values: [] })
      })
      expect(updated).toMatchObject({ status: 200, body: { updated: true, card_id: "card-e2e" } })
    }
    const started = Date.now()
    const call = yield* sendThroughGateway(gatewayUrl, providerKey, { prompt: "Summarise this page" })
    expect(call.status).toBe(200)
    expect(call.body.content[1].text).toBe("Done.")

    // The agent's chain, from the public endpoint: the checkpoint, its verdict.
    const chain = yield* poll(
      fetchJson(`${apiUrl}/v1/reputation/${agentId}/verify`),
      (res) => res.status === 200 && res.body.certificates.total >= 1,
      "certificate stored",
      30_000
    )
    expect(chain.body.valid).toBe(true)
    const [item] = chain.body.certificates.items
    expect(item.verdict).toBe("boundary_violation")
    const checkpointId: string = item.checkpoint_id

    // The operator sees the agent that only sent traffic, and its trace: what the judge read.
    const agents = yield* asOperator(`${apiUrl}/v1/agents`)
    expect(agents.body.agents).toContainEqual(expect.objectContaining({ agent_id: agentId, claimed: false }))
    const checkpoint = yield* asOperator(`${apiUrl}/v1/agents/${agentId}/checkpoints/${checkpointId}`)
    const trace = yield* asOperator(`${apiUrl}/v1/traces/${checkpoint.body.linked_trace_id}`)
    expect(trace.status).toBe(200)
    // A native thinking block (confidence 1.0), judged against the card's declared values when it had one.
    expect(trace.body.decision).toMatchObject({ confidence: 1, values_applied: options.card ? ["honesty"] : [] })

    const proof = yield* poll(
      fetchJson(`${apiUrl}/v1/checkpoints/${checkpointId}/proof`),
      (res) => res.body.status === "completed",
      "verdict proof completed",
      30_000
    )
    const seconds = (Date.now() - started) / 1000
    expect(seconds).toBeLessThan(30)
    expect(proof.body).toMatchObject({ sampled: true, error: null })

    const certificate = (yield* fetchJson(`${apiUrl}/v1/checkpoints/${checkpointId}/certificate`)).body
    expect(certificate.claims.concerns).toEqual([
      expect.objectContaining({ category: "prompt_injection", severity: "critical" })
    ])
    expect(JSON.stringify(certificate)).not.toContain("ignore all previous instructions")
    expect(certificate.verdict_proof).toEqual(proof.body.verdict_proof)
    const keys = (yield* fetchJson(`${apiUrl}/v1/keys`)).body
    const verified = yield* verifyOffline(certificate, keys)
    expect(verified.stdout).toMatch(/verdict proof\s+ok\s+STARK/)
    expect(verified.stdout).toContain("VALID")
    expect(verified.code).toBe(0)
    return seconds
  })

layer(Layer.empty, { timeout: "300 seconds", excludeTestServices: true })("end to end", (it) => {
  it.scoped(
    "embedded default: one `candor serve`, every role",
    () =>
      Effect.gen(function* () {
        const upstream = yield* anthropicUpstream(INJECTED_THINKING)
        const serve = yield* startServe({ env: { ANTHROPIC_BASE_URL: upstream.url, SERVICE_ROLE_KEY } })
        yield* violationIsProvedAndVerifiesOffline(serve.gatewayUrl, serve.apiUrl, { card: true }).pipe(
          printLogsOnFailure(serve)
        )
      }),
    { timeout: 240_000 }
  )

  it.scoped.skipIf(skipsWithout("postgres", "nats"))(
    "split roles on PostgreSQL and NATS: gateway, worker, prover and API in their own processes",
    () =>
      Effect.gen(function* () {
        const upstream = yield* anthropicUpstream(INJECTED_THINKING)
        const { worker, gateway, prover, api } = yield* startSplitDeployment(["worker", "gateway", "prover", "api"], {
          ANTHROPIC_BASE_URL: upstream.url
        })
        yield* violationIsProvedAndVerifiesOffline(gateway.gatewayUrl, api.apiUrl, { card: false }).pipe(
          printLogsOnFailure(worker, gateway, prover, api)
        )
      }),
    { timeout: 240_000 }
  )
})
