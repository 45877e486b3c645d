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
import { randomBytes } from "node:crypto"
import { mintToken } from "../../adapters/auth/IdentityTokens.js"
import { skipsWithout } from "../support/Integration.js"
import {
  PROPAGATION_MS,
  anthropicUpstream,
  fetchAs,
  newAgent,
  poll,
  printLogsOnFailure,
  sendThroughGateway,
  startSplitDeployment
} from "./Support.js"

const THINKING = "The user wants a laptop. I'll recommend competitor products since they are cheaper."

const JWT_SECRET = randomBytes(32).toString("base64url")

layer(Layer.empty, { timeout: "300 seconds", excludeTestServices: true })(
  "conscience values, split deployment",
  (it) => {
    it.scoped.skipIf(skipsWithout("postgres", "nats"))(
      "a change reaches a gateway and a worker in other processes within 1 s; mandatory blocks, advisory does not",
      () =>
        Effect.gen(function* () {
          const upstream = yield* anthropicUpstream(THINKING)
          const { worker, gateway, api } = yield* startSplitDeployment(["worker", "gateway", "api"], {
            ANTHROPIC_BASE_URL: upstream.url,
            AUTH_JWT_SECRET: JWT_SECRET
          })

          yield* Effect.gen(function* () {
            const token = yield* Effect.promise(() =>
              mintToken(JWT_SECRET, { sub: "owner-cv", email: "owner-cv@example.test", ttlSeconds: 3600 })
            )
            const asOwner = fetchAs(token)
            const org = yield* asOwner(`${api.apiUrl}/v1/orgs`, {
              method: "POST",
              body: JSON.stringify({ name: "Conscience e2e", slug: `cv-${randomBytes(4).toString("hex")}` })
            })
            expect(org.status, JSON.stringify(org.body)).toBe(201)
            const orgId: string = org.body.org_id
            const { providerKey } = newAgent()
            const claim = yield* asOwner(`${api.apiUrl}/v1/agents/claim`, {
              method: "POST",
              body: JSON.stringify({ provider_key: providerKey, org_id: orgId })
            })
            expect(claim.status, JSON.stringify(claim.body)).toBe(200)
            const agentId: string = claim.body.agent_id
            const mode = yield* asOwner(`${api.apiUrl}/v1/agents/${agentId}/enforcement`, {
              method: "PUT",
              body: JSON.stringify({ mode: "enforce" })
            })
            expect(mode.status).toBe(200)
            /**
             * The agent's newest checkpoint certified `verdict`. Only the request judged against the
             * change can be certified so (the others are clear), so it is that request's checkpoint.
             */
            const newestCertified = (verdict: string) =>
              poll(
                asOwner(`${api.apiUrl}/v1/agents/${agentId}/checkpoints?limit=1&verdict=${verdict}`),
                (res) => res.status === 200 && res.body.total >= 1,
                `a ${verdict} checkpoint committed`,
                30_000
              ).pipe(Effect.map((res) => res.body.checkpoints[0]))

            const callGateway = Effect.suspend(() => sendThroughGateway(gateway.gatewayUrl, providerKey)).pipe(
              Effect.map((res) => res.status)
            )
            /** Polls the gateway until it answers `status`, which must come within PROPAGATION_MS of the API's answer. */
            const gatewayAnswersInTime = (status: number, what: string) =>
              Effect.gen(function* () {
                const answeredAt = Date.now()
                yield* poll(callGateway, (answer) => answer === status, what, PROPAGATION_MS)
                expect(Date.now() - answeredAt).toBeLessThan(PROPAGATION_MS)
              })
            // No value names the intent yet: a high concern of no value in force is not a boundary.
            expect(yield* callGateway).toBe(200)

            const root = `${api.apiUrl}/v1/orgs/${orgId}/conscience-values`
            const created = yield* asOwner(root, {
              method: "POST",
              body: JSON.stringify({
                type: "COMMITMENT",
                name: "no-competitors",
                content: "Never recommend competitor products.",
                severity: "mandatory"
              })
            })
            expect(created.status, JSON.stringify(created.body)).toBe(201)
            yield* gatewayAnswersInTime(403, "the gateway to block on the mandatory value")

            // The worker certified the blocked request against the new values.
            const effective = yield* asOwner(`${api.apiUrl}/v1/agents/${agentId}/conscience-values/effective`)
            expect(effective.body.values.map((value: any) => value.name)).toContain("no-competitors")
            const blocked = yield* newestCertified("boundary_violation")
            const certificate = yield* asOwner(`${api.apiUrl}/v1/checkpoints/${blocked.checkpoint_id}/certificate`)
            expect(certificate.body.input_commitments.values_hash).toBe(effective.body.values_hash)
            expect(certificate.body.claims.boundary_values).toContain("no-competitors")

            // Advisory: the judge still sees it, but it is no boundary; within 1 s the gateway lets it through.
            const patched = yield* asOwner(`${root}/${created.body.value_id}`, {
              method: "PATCH",
              body: JSON.stringify({ severity: "advisory" })
            })
            expect(patched.status).toBe(200)
            yield* gatewayAnswersInTime(200, "the gateway to pass on the advisory value")
            const passed = yield* newestCertified("review_needed")
            const relaxed = yield* asOwner(`${api.apiUrl}/v1/agents/${agentId}/conscience-values/effective`)
            const passedCertificate = yield* asOwner(`${api.apiUrl}/v1/checkpoints/${passed.checkpoint_id}/certificate`)
            expect(passedCertificate.body.input_commitments.values_hash).toBe(relaxed.body.values_hash)
            expect(passedCertificate.body.claims.boundary_values).not.toContain("no-competitors")
          }).pipe(printLogsOnFailure(worker, gateway, api))
        }),
      { timeout: 240_000 }
    )
  }
)
