/**
 * The batch trees Candor anchors on chain (docs/on-chain.md): pure, so a third party recomputes a
 * batch root from public data with this file alone (or any RFC 6962 implementation).
 *
 * A batch is an RFC 6962 Merkle tree (core/Merkle.ts: SHA-256, 0x00 leaf and 0x01 node prefixes)
 * whose leaves are, in order of `agent_id` (UTF-16 code units, as JCS orders keys):
 *
 * - tree-head anchors: `"candor/v1/anchor-tree-head" ‖ 0x00 ‖ JCS({agent_id, log_origin, tree_size,
 *   root})`, one per agent, from the signed tree head `GET /v1/agents/{id}/merkle-root` served (a head
 *   of an older size: `GET /v1/agents/{id}/consistency-proof?from=N&to=N`);
 * - score publications: `"candor/v1/anchor-score" ‖ 0x00 ‖ JCS({agent_id, score, grade,
 *   computed_over: {tree_size, root}})`, one per agent, from the score `GET /v1/reputation/{id}`
 *   serves (Candor computes it; a caller never supplies numbers).
 *
 * The two tags keep a leaf of one kind from ever passing for the other, or for any other document
 * Candor hashes (core/Hash.ts `domainTag`); the RFC 6962 prefixes keep a leaf from passing for a node.
 */
import { concatBytes, fromHex, toHex } from "./Bytes.js"
import { canonicalBytes } from "./Canonical.js"
import { domainTag } from "./Hash.js"
import { leafHash, MemoryMerkleLog, verifyInclusion } from "./Merkle.js"
import type { Grade } from "./schema/Reputation.js"

/** The contract's MAX_BATCH_SIZE: leaves of one batch. */
export const ANCHOR_MAX_BATCH = 200

export const TREE_HEAD_LEAF_PURPOSE = "anchor-tree-head"
export const SCORE_LEAF_PURPOSE = "anchor-score"

/** One anchored signed tree head; `root` is the log's 64-hex-character SHA-256 root. */
export interface TreeHeadLeaf {
  readonly agent_id: string
  readonly log_origin: string
  readonly tree_size: number
  readonly root: string
}

/** One published score, with the log prefix it was computed over (`root` null for an empty log). */
export interface ScoreLeaf {
  readonly agent_id: string
  readonly score: number
  readonly grade: Grade
  readonly computed_over: { readonly tree_size: number; readonly root: string | null }
}

export type AnchorKind = "tree_heads" | "scores"

export type LeafOf<K extends AnchorKind> = K extends "tree_heads" ? TreeHeadLeaf : ScoreLeaf

/** Only the named fields: a leaf carries nothing the definition does not (extra fields would change the hash). */
const treeHeadValue = (leaf: TreeHeadLeaf): TreeHeadLeaf => ({
  agent_id: leaf.agent_id,
  log_origin: leaf.log_origin,
  tree_size: leaf.tree_size,
  root: leaf.root
})

const scoreValue = (leaf: ScoreLeaf): ScoreLeaf => ({
  agent_id: leaf.agent_id,
  score: leaf.score,
  grade: leaf.grade,
  computed_over: { tree_size: leaf.computed_over.tree_size, root: leaf.computed_over.root }
})

/** The leaf's bytes (what RFC 6962 hashes as `SHA-256(0x00 ‖ bytes)`). */
export const leafBytes = <K extends AnchorKind>(kind: K, leaf: LeafOf<K>): Uint8Array =>
  kind === "tree_heads"
    ? concatBytes(domainTag(TREE_HEAD_LEAF_PURPOSE), canonicalBytes(treeHeadValue(leaf as TreeHeadLeaf)))
    : concatBytes(domainTag(SCORE_LEAF_PURPOSE), canonicalBytes(scoreValue(leaf as ScoreLeaf)))

/** The leaf's RFC 6962 leaf hash. */
export const batchLeafHash = <K extends AnchorKind>(kind: K, leaf: LeafOf<K>): Uint8Array =>
  leafHash(leafBytes(kind, leaf))

/** JavaScript's default string order: UTF-16 code units, as JCS orders object keys. */
const byAgent = (a: { readonly agent_id: string }, b: { readonly agent_id: string }): number =>
  a.agent_id < b.agent_id ? -1 : a.agent_id > b.agent_id ? 1 : 0

export interface Batch<K extends AnchorKind> {
  readonly kind: K
  /** The leaves in tree order (by agent_id). */
  readonly leaves: ReadonlyArray<LeafOf<K>>
  /** Hex SHA-256 root. */
  readonly root: string
  /** The bottom-up RFC 9162 inclusion proof (hex hashes) of leaf `index`. */
  readonly proof: (index: number) => ReadonlyArray<string>
}

/**
 * The batch tree over `leaves` (1 to ANCHOR_MAX_BATCH, one per agent), sorted by agent_id. Throws a
 * RangeError for an empty or oversized batch or a repeated agent: the caller checks these first.
 */
export const buildBatch = <K extends AnchorKind>(kind: K, leaves: ReadonlyArray<LeafOf<K>>): Batch<K> => {
  if (leaves.length === 0 || leaves.length > ANCHOR_MAX_BATCH)
    throw new RangeError(`a batch holds 1 to ${ANCHOR_MAX_BATCH} leaves, got ${leaves.length}`)
  const sorted = [...leaves].sort(byAgent)
  for (let i = 1; i < sorted.length; i++)
    if (sorted[i]!.agent_id === sorted[i - 1]!.agent_id)
      throw new RangeError(`agent ${sorted[i]!.agent_id} appears twice in one batch`)
  const log = new MemoryMerkleLog()
  for (const leaf of sorted) log.append(batchLeafHash(kind, leaf))
  return {
    kind,
    leaves: sorted,
    root: toHex(log.root()),
    proof: (index) => log.inclusionProof(index).map(toHex)
  }
}

/**
 * Whether `leaf` is leaf `leafIndex` of a batch of `leafCount` leaves with root `root` (hex), by the
 * hex `proof`. Never throws.
 */
export const verifyBatchLeaf = <K extends AnchorKind>(input: {
  readonly kind: K
  readonly leaf: LeafOf<K>
  readonly leafIndex: number
  readonly leafCount: number
  readonly proof: ReadonlyArray<string>
  readonly root: string
}): boolean => {
  try {
    const root = fromHex(input.root)
    const proof = input.proof.map(fromHex)
    if (root === undefined || proof.some((hash) => hash === undefined)) return false
    return verifyInclusion({
      leafIndex: input.leafIndex,
      treeSize: input.leafCount,
      leafHash: batchLeafHash(input.kind, input.leaf),
      proof: proof as ReadonlyArray<Uint8Array>,
      root
    })
  } catch {
    return false
  }
}
