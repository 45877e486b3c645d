/**
 * Governance on the split deployment: the API, a gateway and a worker in their own processes on
 * PostgreSQL and NATS JetStream. A pause through the API refuses the agent's next request at the
 * gateway (another process) within a second; a resume lets it through again; auto-containment in
 * the worker pauses it after its threshold of boundary violations. Every one of those actions is in
 * the agent's governance log, each entry verifies offline with `candor verify` against the signed
 * tree head, and two heads are consistent.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { fromHex } from "../../core/Bytes.js"
import { verifyConsistency } from "../../core/Merkle.js"
import { skipsWithout } from "../support/Integration.js"
import {
  INJECTED_THINKING,
  PROPAGATION_MS,
  anthropicUpstream,
  asOperator,
  newAgent,
  poll,
  printLogsOnFailure,
  sendThroughGateway,
  startSplitDeployment,
  verifyOffline
} from "./Support.js"

layer(Layer.empty, { timeout: "300 seconds", excludeTestServices: true })("governance, split deployment", (it) => {
  it.scoped.skipIf(skipsWithout("postgres", "nats"))(
    "pause reaches another process's gateway within 1 s; every action is in the verifiable governance log",
    () =>
      Effect.gen(function* () {
        // Every request's thinking is a boundary violation, for auto-containment to count.
        const upstream = yield* anthropicUpstream(INJECTED_THINKING)
        const { worker, gateway, api } = yield* startSplitDeployment(["worker", "gateway", "api"], {
          ANTHROPIC_BASE_URL: upstream.url
        })
        const { providerKey, agentId } = newAgent()
        const agent = `${api.apiUrl}/v1/agents/${agentId}`
        const send = sendThroughGateway(gateway.gatewayUrl, providerKey)

        const run = Effect.gen(function* () {
          // A manual pause: the gateway in its own process refuses within a second of the 200.
          const paused = yield* asOperator(`${agent}/pause`, {
            method: "POST",
            body: JSON.stringify({ reason: "audit" })
          })
          expect(paused).toMatchObject({ status: 200, body: { containment_status: "paused" } })
          const answeredAt = Date.now()
          const refused = yield* poll(send, (res) => res.status === 403, "paused agent refused", PROPAGATION_MS)
          expect(Date.now() - answeredAt).toBeLessThan(PROPAGATION_MS)
          expect(refused.body.containment_error).toMatchObject({
            type: "containment_error",
            reason: "agent_paused",
            agent_id: agentId,
            contained_by: "service"
          })
          expect(yield* asOperator(`${agent}/resume`, { method: "POST" })).toMatchObject({ status: 200 })
          yield* poll(send, (res) => res.status === 200, "resumed agent forwarded", PROPAGATION_MS)

          // Auto-containment in the worker: two more violations reach the threshold.
          const policy = yield* asOperator(`${agent}/containment-policy`, {
            method: "PUT",
            body: JSON.stringify({ auto_containment_threshold: 2 })
          })
          expect(policy).toMatchObject({ status: 200, body: { auto_containment_threshold: 2 } })
          yield* poll(send, (res) => res.status === 403, "auto-paused agent refused", 60_000)
          const containment = yield* asOperator(`${agent}/containment`)
          expect(containment.body).toMatchObject({ containment_status: "paused", contained_by: "system" })
          expect(containment.body.log.map((entry: { action: string }) => entry.action)).toEqual([
            "auto_pause",
            "resume",
            "pause"
          ])

          // The governance log holds every action, each entry verifying offline.
          const log = yield* poll(
            asOperator(`${agent}/governance-log`),
            (res) => res.body?.tree_size >= 4,
            "governance entries",
            10_000
          )
          expect(log.body.entries.map((entry: any) => entry.record.action)).toEqual([
            "containment.pause",
            "containment.resume",
            "containment.policy",
            "containment.auto_pause"
          ])
          const keys = (yield* asOperator(`${api.apiUrl}/v1/keys`)).body
          for (const entry of log.body.entries) {
            const proof = yield* asOperator(`${agent}/governance-log/${entry.index}/inclusion-proof`)
            const verified = yield* verifyOffline(proof.body, keys)
            expect(verified.stdout).toContain("VALID")
            expect(verified.code).toBe(0)
          }
          const consistency = yield* asOperator(`${agent}/governance-log/consistency-proof?from=2&to=4`)
          expect(
            verifyConsistency({
              size1: 2,
              size2: 4,
              proof: consistency.body.proof.map((hash: string) => fromHex(hash)!),
              root1: fromHex(consistency.body.from.root)!,
              root2: fromHex(consistency.body.to.root)!
            })
          ).toBe(true)
        })
        yield* run.pipe(printLogsOnFailure(worker, gateway, api))
      }),
    { timeout: 240_000 }
  )
})
