/**
 * The embedded default restarted on its data (issue 24): its agent state lives in memory, so it is
 * rebuilt from the store before the gateway binds (streams/AgentStateRestore.ts). Before that, a
 * paused agent's first request after a restart reached its provider, and an enforced tool policy was
 * forgotten.
 */
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { startServe, temporaryDataDir } from "./ServeProcess.js"
import {
  SERVICE_ROLE_KEY,
  anthropicUpstream,
  asOperator,
  newAgent,
  printLogsOnFailure,
  sendThroughGateway
} from "./Support.js"

const NO_SHELL = {
  meta: { schema_version: "1.0", name: "no-shell" },
  forbidden: [{ pattern: "shell_*", reason: "no shell access", severity: "critical" }],
  defaults: { enforcement_mode: "enforce" }
}

it.scoped(
  "after a restart, a paused agent is still refused and an enforced tool policy still holds, from the first request",
  () =>
    Effect.gen(function* () {
      const upstream = yield* anthropicUpstream()
      const dataDir = yield* temporaryDataDir
      const env = { ANTHROPIC_BASE_URL: upstream.url, SERVICE_ROLE_KEY }
      const paused = newAgent()
      const governed = newAgent()

      yield* Effect.scoped(
        Effect.gen(function* () {
          const serve = yield* startServe({ env, dataDir })
          yield* Effect.gen(function* () {
            const agents = `${serve.apiUrl}/v1/agents`
            expect((yield* sendThroughGateway(serve.gatewayUrl, paused.providerKey)).status).toBe(200)
            const pause = yield* asOperator(`${agents}/${paused.agentId}/pause`, {
              method: "POST",
              body: JSON.stringify({ reason: "incident 24" })
            })
            expect(pause.status).toBe(200)
            const policy = yield* asOperator(`${agents}/${governed.agentId}/policy`, {
              method: "PUT",
              body: JSON.stringify(NO_SHELL)
            })
            expect(policy.status, JSON.stringify(policy.body)).toBe(200)
            const shell = yield* sendThroughGateway(serve.gatewayUrl, governed.providerKey, { tools: ["shell_exec"] })
            expect(shell.status).toBe(403)
          }).pipe(printLogsOnFailure(serve))
        })
      )

      const calls = upstream.requests.length
      const serve = yield* startServe({ env, dataDir })
      yield* Effect.gen(function* () {
        const refused = yield* sendThroughGateway(serve.gatewayUrl, paused.providerKey)
        expect(refused.status).toBe(403)
        expect(refused.body).toMatchObject({ type: "containment_error", reason: "agent_paused" })
        const shell = yield* sendThroughGateway(serve.gatewayUrl, governed.providerKey, { tools: ["shell_exec"] })
        expect(shell.status).toBe(403)
        expect(upstream.requests.length).toBe(calls)
        expect((yield* sendThroughGateway(serve.gatewayUrl, governed.providerKey)).status).toBe(200)
      }).pipe(printLogsOnFailure(serve))
    }),
  180_000
)
