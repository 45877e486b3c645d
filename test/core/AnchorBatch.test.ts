/**
 * The anchored batch trees (core/AnchorBatch.ts): leaves are tagged JCS, so a tree-head leaf never
 * passes for a score leaf; the tree is RFC 6962 over the leaves in agent order, whatever order they
 * came in; every proof verifies and any change to a leaf, an index or the root makes it fail.
 */
import { describe, expect, it } from "@effect/vitest"
import { toHex, utf8 } from "../../core/Bytes.js"
import {
  ANCHOR_MAX_BATCH,
  batchLeafHash,
  buildBatch,
  leafBytes,
  type ScoreLeaf,
  type TreeHeadLeaf,
  verifyBatchLeaf
} from "../../core/AnchorBatch.js"
import { sha256 } from "../../core/Hash.js"
import { leafHash, nodeHash } from "../../core/Merkle.js"

const root = (n: number) => toHex(sha256(utf8(`root-${n}`)))
const head = (i: number): TreeHeadLeaf => ({
  agent_id: `agent-${String(i).padStart(3, "0")}`,
  log_origin: `candor.test/agents/agent-${String(i).padStart(3, "0")}`,
  tree_size: i + 1,
  root: root(i)
})
const score = (i: number): ScoreLeaf => ({
  agent_id: `agent-${String(i).padStart(3, "0")}`,
  score: 500 + i,
  grade: "BBB",
  computed_over: { tree_size: i + 1, root: root(i) }
})

describe("anchor batch leaves", () => {
  it("are the domain tag, a NUL byte and the JCS of exactly the named fields", () => {
    const leaf = head(7)
    const expected = `candor/v1/anchor-tree-head\0{"agent_id":"agent-007","log_origin":"candor.test/agents/agent-007","root":"${root(7)}","tree_size":8}`
    expect(new TextDecoder().decode(leafBytes("tree_heads", leaf))).toBe(expected)
    // Extra fields are not hashed: the leaf is defined by its four fields only.
    expect(leafBytes("tree_heads", { ...leaf, note: "x" } as TreeHeadLeaf)).toEqual(leafBytes("tree_heads", leaf))
    const published = new TextDecoder().decode(leafBytes("scores", score(7)))
    expect(published).toBe(
      `candor/v1/anchor-score\0{"agent_id":"agent-007","computed_over":{"root":"${root(7)}","tree_size":8},"grade":"BBB","score":507}`
    )
    expect(batchLeafHash("tree_heads", leaf)).toEqual(leafHash(leafBytes("tree_heads", leaf)))
  })

  it("of the two kinds never collide, even over the same values", () => {
    const same = { agent_id: "a", log_origin: "o", tree_size: 1, root: root(1) }
    const asScore = { ...same, score: 1, grade: "AAA", computed_over: { tree_size: 1, root: root(1) } } as ScoreLeaf
    expect(toHex(batchLeafHash("tree_heads", same))).not.toBe(toHex(batchLeafHash("scores", asScore)))
  })
})

describe("anchor batch trees", () => {
  it("are RFC 6962 trees over the leaves in agent order, whatever the input order", () => {
    const leaves = [head(2), head(0), head(1)]
    const batch = buildBatch("tree_heads", leaves)
    expect(batch.leaves.map((l) => l.agent_id)).toEqual(["agent-000", "agent-001", "agent-002"])
    const [h0, h1, h2] = batch.leaves.map((l) => batchLeafHash("tree_heads", l))
    // MTH of 3 leaves: H(H(h0, h1), h2).
    expect(batch.root).toBe(toHex(nodeHash(nodeHash(h0!, h1!), h2!)))
    expect(buildBatch("tree_heads", [head(1), head(2), head(0)]).root).toBe(batch.root)
    expect(buildBatch("tree_heads", [head(0)]).root).toBe(toHex(h0!))
  })

  it("give proofs that verify for every leaf of every size up to 13, and fail when anything changes", () => {
    for (let size = 1; size <= 13; size++) {
      const batch = buildBatch(
        "scores",
        Array.from({ length: size }, (_, i) => score(i))
      )
      batch.leaves.forEach((leaf, leafIndex) => {
        const input = {
          kind: "scores" as const,
          leaf,
          leafIndex,
          leafCount: size,
          proof: batch.proof(leafIndex),
          root: batch.root
        }
        expect(verifyBatchLeaf(input), `${leafIndex} of ${size}`).toBe(true)
        expect(verifyBatchLeaf({ ...input, leaf: { ...leaf, score: leaf.score + 1 } })).toBe(false)
        expect(verifyBatchLeaf({ ...input, root: root(99) })).toBe(false)
        if (size > 1) expect(verifyBatchLeaf({ ...input, leafIndex: (leafIndex + 1) % size })).toBe(false)
        // The same values as the other kind's leaf do not verify.
        expect(verifyBatchLeaf({ ...input, kind: "tree_heads" as const, leaf: leaf as never })).toBe(false)
      })
    }
    expect(
      verifyBatchLeaf({ kind: "scores", leaf: score(0), leafIndex: 0, leafCount: 1, proof: ["zz"], root: "no" })
    ).toBe(false)
  })

  it("refuse an empty batch, more than 200 leaves, and an agent twice", () => {
    expect(() => buildBatch("tree_heads", [])).toThrow(RangeError)
    const many = Array.from({ length: ANCHOR_MAX_BATCH + 1 }, (_, i) => head(i))
    expect(() => buildBatch("tree_heads", many)).toThrow(/1 to 200 leaves, got 201/)
    expect(buildBatch("tree_heads", many.slice(0, ANCHOR_MAX_BATCH)).leaves).toHaveLength(200)
    expect(() => buildBatch("tree_heads", [head(1), head(1)])).toThrow(/appears twice/)
  })
})
