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
import { layerIntegration } from "../support/Integration.js"
import {
  PROPAGATION_MS,
  anthropicUpstream,
  asOperator,
  newAgent,
  poll,
  printLogsOnFailure,
  sendThroughGateway,
  startSplitDeployment
} from "./Support.js"

layerIntegration(["postgres", "nats"], Layer.empty, { timeout: "180 seconds", excludeTestServices: true })(
  "containment on a split deployment",
  (it) => {
    it.scoped(
      "a pause answered by the API is enforced by a gateway in another process within 1 s",
      () =>
        Effect.gen(function* () {
          const upstream = yield* anthropicUpstream()
          const { api, gateway } = yield* startSplitDeployment(["api", "gateway"], { ANTHROPIC_BASE_URL: upstream.url })
          const { providerKey, agentId } = newAgent()
          const send = sendThroughGateway(gateway.gatewayUrl, providerKey)
          const operator = (path: string, body?: unknown) =>
            asOperator(`${api.apiUrl}/v1/agents/${agentId}/${path}`, {
              method: "POST",
              ...(body === undefined ? {} : { body: JSON.stringify(body) })
            })

          yield* Effect.gen(function* () {
            expect((yield* send).status).toBe(200)

            const paused = yield* operator("pause", { reason: "incident 42" })
            expect(paused).toMatchObject({
              status: 200,
              body: { containment_status: "paused", contained_by: "service" }
            })
            const refused = yield* poll(send, (res) => res.status === 403, "refused after pause", PROPAGATION_MS)
            expect(refused.body).toEqual({
              error: "agent is paused: incident 42",
              type: "containment_error",
              reason: "agent_paused",
              containment_error: {
                type: "containment_error",
                reason: "agent_paused",
                agent_id: agentId,
                scope: "agent",
                contained_at: paused.body.contained_at,
                contained_by: "service"
              }
            })
            // Refused without reaching the upstream.
            const forwarded = upstream.requests.length
            expect((yield* send).status).toBe(403)
            expect(upstream.requests.length).toBe(forwarded)

            expect((yield* operator("resume")).status).toBe(200)
            yield* poll(send, (res) => res.status === 200, "forwarded after resume", PROPAGATION_MS)

            expect((yield* operator("kill")).status).toBe(200)
            const killed = yield* poll(send, (res) => res.status === 403, "refused after kill", PROPAGATION_MS)
            expect(killed.body).toMatchObject({
              error: "agent is killed",
              reason: "agent_killed",
              containment_error: { reason: "agent_killed", agent_id: agentId }
            })
            // Each change the API answered is an enforcement record, by who made it.
            const records = yield* asOperator(`${api.apiUrl}/v1/agents/${agentId}/enforcement-records`)
            expect(records.status).toBe(200)
            expect(records.body.records.map((r: { kind: string; actor: string }) => [r.kind, r.actor])).toEqual([
              ["killed", "service"],
              ["resumed", "service"],
              ["paused", "service"]
            ])
          }).pipe(printLogsOnFailure(api, gateway))
        }),
      { timeout: 180_000 }
    )
  }
)
