/**
 * The on-chain API cases, run on PGlite (OnChain.test.ts) and PostgreSQL (OnChain.postgres.test.ts):
 * anchors and score publications made over HTTP, on the in-process chain, checked the way a third
 * party would: batch roots recomputed from public answers (GET /v1/agents/{id}/merkle-root, GET
 * /v1/reputation/{id}), compared with what the contract holds, read with viem directly.
 */
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { createPublicClient, http, type Hex } from "viem"
import { candorAnchorAbi } from "../../adapters/chain/AnchorAbi.js"
import { buildBatch, type ScoreLeaf, type TreeHeadLeaf, verifyBatchLeaf } from "../../core/AnchorBatch.js"
import { fromHex } from "../../core/Bytes.js"
import { parseCheckpoint } from "../../core/Note.js"
import { TestChain } from "../support/AnchorChainFixture.js"
import { seed } from "./AgentData.js"
import { ApiHarness } from "./Support.js"

/** A new agent of the fixtures' organization with `checkpoints` committed (0: no log). */
export const orgAgentWith = (checkpoints: number) =>
  Effect.gen(function* () {
    const api = yield* ApiHarness
    const agentId = yield* api.claimAgent({ userId: api.fixtures.owner.userId, orgId: api.fixtures.orgId })
    if (checkpoints > 0) yield* Effect.orDie(seed(agentId, checkpoints))
    return agentId
  })

/** What the contract holds under `id`, read with viem straight from the chain (not through Candor). */
export const onChain = (kind: "tree_heads" | "scores", id: string) =>
  Effect.gen(function* () {
    const { chain, deployment } = yield* TestChain
    const reader = createPublicClient({ transport: http(chain.url) })
    return yield* Effect.promise(() =>
      reader.readContract({
        address: deployment.address,
        abi: candorAnchorAbi,
        functionName: kind === "tree_heads" ? "anchorOf" : "publicationOf",
        args: [id as Hex]
      })
    )
  })

/** The leaf a third party builds from the public merkle-root answer, after checking its signed note. */
export const publicTreeHeadLeaf = (agentId: string) =>
  Effect.gen(function* () {
    const api = yield* ApiHarness
    const res = yield* api.call("GET", `/v1/agents/${agentId}/merkle-root`)
    expect(res.status).toBe(200)
    // The note's body carries the same size and root (its signature is checked by the verification
    // tests; the seeded logs here are signed by a fixture key outside the ring).
    const note: string = res.body.signed_tree_head
    const checkpoint = parseCheckpoint(note.slice(0, note.indexOf("\n\n") + 1))!
    expect(checkpoint.origin).toBe(res.body.log_origin)
    expect(checkpoint.size).toBe(res.body.tree_size)
    expect(checkpoint.root).toEqual(fromHex(res.body.root))
    return {
      agent_id: agentId,
      log_origin: res.body.log_origin,
      tree_size: res.body.tree_size,
      root: res.body.root
    } satisfies TreeHeadLeaf
  })

/** The anchor → recompute → compare round trip, as the owner of the organization. */
export const anchorAndCheck = Effect.gen(function* () {
  const api = yield* ApiHarness
  const { chain, deployment } = yield* TestChain
  const a = yield* orgAgentWith(3)
  const b = yield* orgAgentWith(5)
  const res = yield* api.call("POST", "/v1/on-chain/anchor-root", {
    token: api.fixtures.admin.token,
    body: { agent_ids: [b, a], chain: "eip155:31337" }
  })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  const anchor = res.body
  expect(anchor).toMatchObject({
    kind: "tree_heads",
    chain: "eip155:31337",
    chain_id: chain.chainId,
    contract: deployment.address,
    leaf_count: 2,
    status: "confirmed",
    error: null
  })
  expect(anchor.anchor_id).toMatch(/^0x[0-9a-f]{64}$/)
  expect(anchor.tx_hash).toMatch(/^0x[0-9a-f]{64}$/)
  expect(anchor.block_number).toBeGreaterThan(0)

  // A third party: the leaves from the public signed tree heads, the root recomputed, the chain read.
  const leaves = [yield* publicTreeHeadLeaf(a), yield* publicTreeHeadLeaf(b)]
  const batch = buildBatch("tree_heads", leaves)
  expect(batch.root).toBe(anchor.batch_root)
  expect(anchor.agents).toEqual(
    batch.leaves.map((leaf, leaf_index) => ({
      agent_id: leaf.agent_id,
      tree_size: leaf.tree_size,
      root: leaf.root,
      leaf_index
    }))
  )
  const [root, leafCount, timestamp] = yield* onChain("tree_heads", anchor.anchor_id)
  expect(root).toBe(`0x${batch.root}`)
  expect(leafCount).toBe(2)
  expect(timestamp).toBeGreaterThan(0n)

  // The proof route: the leaf, its proof, and a live read that matches.
  const proof = yield* api.call("GET", `/v1/on-chain/verify-proof?anchor_id=${anchor.anchor_id}&agent_id=${a}`, {
    token: api.fixtures.member.token
  })
  expect(proof.status, JSON.stringify(proof.body)).toBe(200)
  expect(proof.body).toMatchObject({
    agent_id: a,
    leaf: leaves[0],
    batch_root: batch.root,
    proof_valid: true,
    on_chain: { root: batch.root, leaf_count: 2, timestamp: Number(timestamp), matches: true },
    verified: true
  })
  expect(
    verifyBatchLeaf({
      kind: "tree_heads",
      leaf: proof.body.leaf,
      leafIndex: proof.body.leaf_index,
      leafCount: 2,
      proof: proof.body.proof,
      root: root.slice(2)
    })
  ).toBe(true)

  // Status follows the chain: confirmations grow as blocks are mined.
  const status = yield* api.call("GET", `/v1/on-chain/status/${anchor.anchor_id}`, { token: api.fixtures.member.token })
  expect(status.status, JSON.stringify(status.body)).toBe(200)
  expect(status.body).toMatchObject({
    status: "confirmed",
    block_number: anchor.block_number,
    receipt: { status: "success" }
  })
  yield* Effect.promise(() => chain.mine(3))
  const later = yield* api.call("GET", `/v1/on-chain/status/${anchor.anchor_id}`, { token: api.fixtures.member.token })
  expect(later.body.confirmations).toBe(status.body.confirmations + 3)

  const history = yield* api.call("GET", `/v1/on-chain/history?agent_id=${a}`, { token: api.fixtures.member.token })
  expect(history.status).toBe(200)
  expect(history.body.anchors.map((x: { anchor_id: string }) => x.anchor_id)).toEqual([anchor.anchor_id])
  expect(history.body.anchors[0].agent_ids).toEqual(batch.leaves.map((l) => l.agent_id))
  return { anchor, a, b }
})

/** publish-scores: the scores GET /v1/reputation serves, proven against the root the contract holds. */
export const publishAndCheck = Effect.gen(function* () {
  const api = yield* ApiHarness
  const a = yield* orgAgentWith(4)
  const b = yield* orgAgentWith(7)
  const c = yield* orgAgentWith(2)
  const res = yield* api.call("POST", "/v1/on-chain/publish-scores", {
    token: api.fixtures.owner.token,
    body: { agent_ids: [a, b, c] }
  })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  expect(res.body).toMatchObject({ kind: "scores", status: "confirmed", scores_published: 3, leaf_count: 3 })
  const [root, leafCount] = yield* onChain("scores", res.body.anchor_id)
  expect(root).toBe(`0x${res.body.batch_root}`)
  expect(leafCount).toBe(3)
  for (const proof of res.body.proofs as ReadonlyArray<ScoreLeaf & { leaf_index: number; proof: Array<string> }>) {
    const served = yield* api.call("GET", `/v1/reputation/${proof.agent_id}`)
    expect(served.status).toBe(200)
    const leaf: ScoreLeaf = {
      agent_id: proof.agent_id,
      score: served.body.score,
      grade: served.body.grade,
      computed_over: { tree_size: served.body.computed_over.tree_size, root: served.body.computed_over.root }
    }
    expect(proof).toMatchObject(leaf)
    expect(
      verifyBatchLeaf({
        kind: "scores",
        leaf,
        leafIndex: proof.leaf_index,
        leafCount: 3,
        proof: proof.proof,
        root: root.slice(2)
      })
    ).toBe(true)
    // A different score does not verify against the on-chain root.
    expect(
      verifyBatchLeaf({
        kind: "scores",
        leaf: { ...leaf, score: leaf.score + 1 },
        leafIndex: proof.leaf_index,
        leafCount: 3,
        proof: proof.proof,
        root: root.slice(2)
      })
    ).toBe(false)
  }
  const proof = yield* api.call("GET", `/v1/on-chain/verify-proof?anchor_id=${res.body.anchor_id}&agent_id=${b}`, {
    token: api.fixtures.member.token
  })
  expect(proof.body).toMatchObject({ kind: "scores", verified: true, on_chain: { matches: true } })
  return res.body
})
