/**
 * On-chain sends through the API are limited per organization (issue 24, deliverable 8): here 2 an
 * hour. A third send of one organization is 429 with Retry-After, whatever the route (anchor-root,
 * publish-scores) or the caller in it; another organization is not affected; a batch naming an
 * exhausted organization's agent charges nobody; the service-role key is not limited; an hour
 * later (the TestClock, which the served API reads) the organization sends again.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { anchorChainLayer } from "../support/AnchorChainFixture.js"
import { seed } from "./AgentData.js"
import { orgAgentWith } from "./OnChainCases.js"
import { ApiHarness, freshOrganization, layer as harness } from "./Support.js"

const send = (route: "anchor-root" | "publish-scores", agentIds: ReadonlyArray<string>, token: string) =>
  Effect.flatMap(ApiHarness, (api) =>
    api.call("POST", `/v1/on-chain/${route}`, { token, body: { agent_ids: agentIds } })
  )

layer(Layer.merge(harness({ chain: anchorChainLayer, chainSendsPerHour: 2 }), anchorChainLayer), {
  timeout: "120 seconds"
})("on-chain sends per organization", (it) => {
  it.effect(
    "two an hour per organization: the third is 429 with Retry-After; others and the service-role key go on",
    () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const { admin, owner } = api.fixtures
        const agent = yield* orgAgentWith(2)
        expect((yield* send("anchor-root", [agent], owner.token)).status).toBe(200)
        expect((yield* send("publish-scores", [agent], admin.token)).status).toBe(200)
        const refused = yield* send("anchor-root", [agent], admin.token)
        expect(refused.status).toBe(429)
        expect(refused.headers.get("retry-after")).toBe("1800")
        expect(Object.keys(refused.body)).toEqual(["error"])
        expect(refused.body.error).toContain("per organization")
        expect((yield* send("publish-scores", [agent], owner.token)).status).toBe(429)

        // Another organization has its own sends; a batch with the exhausted one charges it nothing.
        const other = yield* freshOrganization("Chain")
        const otherAgent = yield* api.claimAgent({ userId: owner.userId, orgId: other })
        yield* Effect.orDie(seed(otherAgent, 1))
        expect((yield* send("anchor-root", [otherAgent, agent], owner.token)).status).toBe(429)
        expect((yield* send("anchor-root", [otherAgent], owner.token)).status).toBe(200)
        expect((yield* send("anchor-root", [otherAgent], owner.token)).status).toBe(200)
        expect((yield* send("anchor-root", [otherAgent], owner.token)).status).toBe(429)

        // The deployment's own key is not limited.
        expect((yield* send("anchor-root", [agent], api.serviceRoleKey)).status).toBe(200)

        // Half an hour later, one send again; then none until the next.
        yield* TestClock.adjust("30 minutes")
        expect((yield* send("anchor-root", [agent], owner.token)).status).toBe(200)
        expect((yield* send("anchor-root", [agent], owner.token)).status).toBe(429)
      })
  )
})
