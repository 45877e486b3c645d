/**
 * The on-chain routes over HTTP against the in-process chain (test/support/InProcessChain.ts):
 * anchoring and publishing checked against the chain (OnChainCases.ts), the default agent set, the
 * periodic job's pass, history pages, and every refusal: anchoring off (503), more than 200 agents,
 * agents without a log or a score, a score sent by the caller, another chain, callers who may not.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as AnchorRepo from "../../adapters/store/AnchorRepo.js"
import * as ReputationRepo from "../../adapters/store/ReputationRepo.js"
import { anchorPass } from "../../streams/ChainAnchoring.js"
import { anchorChainLayer } from "../support/AnchorChainFixture.js"
import { seed } from "./AgentData.js"
import { anchorAndCheck, onChain, orgAgentWith, publishAndCheck } from "./OnChainCases.js"
import { ApiHarness, layer as harness } from "./Support.js"

layer(Layer.merge(harness({ chain: anchorChainLayer }), anchorChainLayer), { timeout: "120 seconds" })(
  "on-chain API",
  (it) => {
    it.effect(
      "an admin anchors two agents in one transaction; the root on chain is recomputed from public tree heads",
      () => Effect.asVoid(anchorAndCheck)
    )

    it.effect("an owner publishes the scores Candor serves; each proof verifies against the on-chain root", () =>
      Effect.asVoid(publishAndCheck)
    )

    it.effect("without agent_ids, every agent with a log the caller may write is anchored", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const logged = yield* orgAgentWith(2)
        const empty = yield* orgAgentWith(0)
        const res = yield* api.call("POST", "/v1/on-chain/anchor-root", { token: api.fixtures.owner.token, body: {} })
        expect(res.status, JSON.stringify(res.body)).toBe(200)
        const ids = res.body.agents.map((x: { agent_id: string }) => x.agent_id)
        expect(ids).toContain(logged)
        expect(ids).not.toContain(empty)
        expect(ids).not.toContain(api.fixtures.agentB)
        // userB's own default set is its organization's agents only: agentB has no log, nothing to anchor.
        const other = yield* api.call("POST", "/v1/on-chain/anchor-root", { token: api.fixtures.userB.token, body: {} })
        expect(other).toMatchObject({
          status: 400,
          body: { error: "no agent you may anchor has a signed tree head yet" }
        })
      })
    )

    it.effect(
      "private agents are not published on chain: the pass skips them, the routes refuse them, defaults leave them out",
      () =>
        Effect.gen(function* () {
          const api = yield* ApiHarness
          const { owner } = api.fixtures
          const hidden = yield* orgAgentWith(2)
          const set = yield* api.call("PUT", `/v1/agents/${hidden}/visibility`, {
            token: owner.token,
            body: { visibility: "private" }
          })
          expect(set.status).toBe(200)
          const pass = anchorPass.pipe(Effect.provide(Layer.merge(AnchorRepo.layer, ReputationRepo.layer)))
          const anchored = yield* pass
          expect(anchored.some((anchor) => anchor.leaves.some((leaf) => leaf.agent_id === hidden))).toBe(false)
          for (const route of ["anchor-root", "publish-scores"]) {
            const res = yield* api.call("POST", `/v1/on-chain/${route}`, {
              token: owner.token,
              body: { agent_ids: [hidden] }
            })
            expect(res, route).toMatchObject({
              status: 400,
              body: {
                error: `agent ${hidden} is private: private agents are not published on chain (set its visibility to unlisted or public first)`
              }
            })
          }
          const shown = yield* orgAgentWith(2)
          const defaults = yield* api.call("POST", "/v1/on-chain/anchor-root", { token: owner.token, body: {} })
          expect(defaults.status, JSON.stringify(defaults.body)).toBe(200)
          const ids = defaults.body.agents.map((x: { agent_id: string }) => x.agent_id)
          expect(ids).toContain(shown)
          expect(ids).not.toContain(hidden)
        })
    )

    it.effect("the periodic pass anchors each changed tree head once, grouped by owner", () =>
      Effect.gen(function* () {
        const agent = yield* orgAgentWith(2)
        const pass = anchorPass.pipe(Effect.provide(Layer.merge(AnchorRepo.layer, ReputationRepo.layer)))
        const first = yield* pass
        const mine = first.filter((a) => a.leaves.some((l) => l.agent_id === agent))
        expect(mine).toHaveLength(1)
        expect(mine[0]).toMatchObject({ status: "confirmed", requested_by: "system" })
        const [root] = yield* onChain("tree_heads", mine[0]!.anchor_id)
        expect(root).toBe(`0x${mine[0]!.batch_root}`)
        // Unchanged: not anchored again. Grown: anchored at its new size.
        expect((yield* pass).some((a) => a.leaves.some((l) => l.agent_id === agent))).toBe(false)
        yield* Effect.orDie(seed(agent, 1))
        const third = yield* pass
        const again = third
          .flatMap((a) => a.leaves as ReadonlyArray<{ agent_id: string }>)
          .find((l) => l.agent_id === agent)
        expect(again).toMatchObject({ tree_size: 3 })
      })
    )

    it.effect("history pages newest first with a cursor, and lists only anchors the caller may read", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const agent = yield* orgAgentWith(1)
        const made: Array<string> = []
        for (let i = 0; i < 3; i++) {
          yield* Effect.orDie(seed(agent, 1))
          const res = yield* api.call("POST", "/v1/on-chain/anchor-root", {
            token: api.fixtures.owner.token,
            body: { agent_ids: [agent] }
          })
          made.push(res.body.anchor_id)
        }
        const token = api.fixtures.member.token
        const first = yield* api.call("GET", `/v1/on-chain/history?agent_id=${agent}&limit=2`, { token })
        expect(first.body.anchors.map((x: { anchor_id: string }) => x.anchor_id)).toEqual([made[2], made[1]])
        const second = yield* api.call(
          "GET",
          `/v1/on-chain/history?agent_id=${agent}&limit=2&cursor=${first.body.next_cursor}`,
          { token }
        )
        expect(second.body).toMatchObject({ next_cursor: null })
        expect(second.body.anchors.map((x: { anchor_id: string }) => x.anchor_id)).toEqual([made[0]])
        const all = yield* api.call("GET", "/v1/on-chain/history?limit=100", { token: api.fixtures.userB.token })
        expect(all.status).toBe(200)
        expect(all.body.anchors.some((x: { anchor_id: string }) => made.includes(x.anchor_id))).toBe(false)
        expect(
          (yield* api.call("GET", `/v1/on-chain/history?agent_id=${agent}`, { token: api.fixtures.userB.token })).status
        ).toBe(404)
        expect((yield* api.call("GET", "/v1/on-chain/history?cursor=abc", { token })).status).toBe(400)
        expect((yield* api.call("GET", "/v1/on-chain/history?limit=101", { token })).body.error).toMatch(/^limit: /)
      })
    )

    describe("refusals", () => {
      it.effect("more than 200 agents, none, a caller's score, or agents without a log or score: 400", () =>
        Effect.gen(function* () {
          const api = yield* ApiHarness
          const token = api.serviceRoleKey
          const many = Array.from({ length: 201 }, (_, i) => `agent-${i}`)
          const tooMany = yield* api.call("POST", "/v1/on-chain/publish-scores", { token, body: { agent_ids: many } })
          expect(tooMany).toMatchObject({ status: 400 })
          expect(tooMany.body.error).toMatch(/at most 200 distinct agents per transaction .*got 201/)
          const anchorMany = yield* api.call("POST", "/v1/on-chain/anchor-root", { token, body: { agent_ids: many } })
          expect(anchorMany.body.error).toMatch(/at most 200/)
          const none = yield* api.call("POST", "/v1/on-chain/publish-scores", { token, body: { agent_ids: [] } })
          expect(none).toMatchObject({ status: 400, body: { error: "agent_ids: name at least one agent" } })
          const logged = yield* orgAgentWith(2)
          const scored = yield* api.call("POST", "/v1/on-chain/publish-scores", {
            token,
            body: { agent_ids: [logged], score: 1000 }
          })
          expect(scored.status).toBe(400)
          expect(scored.body.error).toMatch(/^score: not accepted: Candor publishes the score it computed/)
          const graded = yield* api.call("POST", "/v1/on-chain/publish-scores", {
            token,
            body: { agent_ids: [logged], grade: "AAA" }
          })
          expect(graded.body.error).toMatch(/^grade: not accepted/)
          const empty = yield* orgAgentWith(0)
          const noScore = yield* api.call("POST", "/v1/on-chain/publish-scores", {
            token,
            body: { agent_ids: [empty] }
          })
          expect(noScore).toMatchObject({
            status: 400,
            body: { error: `agent ${empty} has no score to publish yet (its reputation is computed over an empty log)` }
          })
          const noLog = yield* api.call("POST", "/v1/on-chain/anchor-root", { token, body: { agent_ids: [empty] } })
          expect(noLog).toMatchObject({
            status: 400,
            body: { error: `agent ${empty} has no signed tree head yet (no certificate in its log)` }
          })
          const badId = yield* api.call("POST", "/v1/on-chain/anchor-root", {
            token,
            body: { agent_ids: ["has space"] }
          })
          expect(badId.status).toBe(400)
          expect(badId.body.error).toMatch(/^agent_ids\.0: /)
          const badAnchor = yield* api.call("GET", "/v1/on-chain/status/0x12", { token })
          expect(badAnchor.body.error).toMatch(/^anchor_id: must be 0x and 64 lowercase hex/)
          const unknown = yield* api.call("GET", `/v1/on-chain/status/0x${"ab".repeat(32)}`, { token })
          expect(unknown).toMatchObject({ status: 404, body: { error: `anchor 0x${"ab".repeat(32)} not found` } })
        })
      )

      it.effect("a chain other than the configured one: 400 naming it; its id or CAIP-2 name is accepted", () =>
        Effect.gen(function* () {
          const api = yield* ApiHarness
          const agent = yield* orgAgentWith(1)
          const token = api.fixtures.owner.token
          for (const chain of ["base", "eip155:8453", 1])
            expect(
              yield* api.call("POST", "/v1/on-chain/anchor-root", { token, body: { agent_ids: [agent], chain } })
            ).toMatchObject({
              status: 400,
              body: {
                error: `chain: only the configured chain eip155:31337 (chain id 31337) is available, got ${JSON.stringify(chain)}`
              }
            })
          for (const chain of [31337, "31337"])
            expect(
              (yield* api.call("POST", "/v1/on-chain/publish-scores", { token, body: { agent_ids: [agent], chain } }))
                .status
            ).toBe(200)
        })
      )

      it.effect("a member may not anchor (403), another organization may not see the agents (404)", () =>
        Effect.gen(function* () {
          const api = yield* ApiHarness
          const agent = yield* orgAgentWith(1)
          const body = { agent_ids: [agent] }
          const member = yield* api.call("POST", "/v1/on-chain/anchor-root", { token: api.fixtures.member.token, body })
          expect(member.status).toBe(403)
          const memberDefault = yield* api.call("POST", "/v1/on-chain/anchor-root", {
            token: api.fixtures.member.token,
            body: {}
          })
          expect(memberDefault.status).toBe(403)
          const other = yield* api.call("POST", "/v1/on-chain/publish-scores", {
            token: api.fixtures.userB.token,
            body
          })
          expect(other).toMatchObject({ status: 404, body: { error: `agent ${agent} not found` } })
          const made = yield* api.call("POST", "/v1/on-chain/anchor-root", { token: api.fixtures.admin.token, body })
          const hidden = yield* api.call("GET", `/v1/on-chain/status/${made.body.anchor_id}`, {
            token: api.fixtures.userB.token
          })
          expect(hidden).toMatchObject({ status: 404, body: { error: `anchor ${made.body.anchor_id} not found` } })
          const notIn = yield* api.call(
            "GET",
            `/v1/on-chain/verify-proof?anchor_id=${made.body.anchor_id}&agent_id=${api.fixtures.orgAgent}`,
            {
              token: api.fixtures.member.token
            }
          )
          expect(notIn).toMatchObject({
            status: 404,
            body: { error: `agent ${api.fixtures.orgAgent} is not in anchor ${made.body.anchor_id}` }
          })
        })
      )
    })
  }
)

layer(harness(), { timeout: "60 seconds" })("on-chain API, anchoring off", (it) => {
  it.effect("answers 503 naming the variables to set; history still lists what is stored", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const token = api.fixtures.owner.token
      const id = `0x${"cd".repeat(32)}`
      for (const [method, path, body] of [
        ["POST", "/v1/on-chain/anchor-root", {}],
        ["POST", "/v1/on-chain/publish-scores", { agent_ids: [api.fixtures.orgAgent] }],
        ["GET", `/v1/on-chain/verify-proof?anchor_id=${id}&agent_id=${api.fixtures.orgAgent}`, undefined],
        ["GET", `/v1/on-chain/status/${id}`, undefined]
      ] as const) {
        const res = yield* api.call(method, path, { token, body })
        expect(res.status, path).toBe(503)
        expect(res.body.error).toBe(
          "on-chain anchoring is off: set CANDOR_CHAIN_RPC_URL, CANDOR_CHAIN_PRIVATE_KEY and CANDOR_CHAIN_CONTRACT (not set: CANDOR_CHAIN_RPC_URL, CANDOR_CHAIN_PRIVATE_KEY, CANDOR_CHAIN_CONTRACT); docs/on-chain.md"
        )
      }
      const history = yield* api.call("GET", "/v1/on-chain/history", { token })
      expect(history).toMatchObject({ status: 200, body: { agent_id: null, anchors: [], next_cursor: null } })
    })
  )
})
