/**
 * Anchoring on chain (docs/on-chain.md), shared by the API (POST /v1/on-chain/anchor-root and
 * /publish-scores) and the periodic job of the worker role (CANDOR_CHAIN_ANCHOR_INTERVAL).
 *
 * Private agents are never published (issue 24): the periodic job's agents (AnchorRepo.unanchored)
 * leave them out, and the API refuses them by name.
 *
 * One batch is one transaction: the leaves are built from what Candor serves publicly (the newest
 * signed tree heads; the scores of GET /v1/reputation), the batch tree (core/AnchorBatch.ts) gives the
 * root, the batch is stored as `pending`, the transaction sent, and its receipt awaited for a while:
 * `confirmed` once mined, `failed` if it reverted or could not be sent, still `pending` when the
 * receipt is late (GET /v1/on-chain/status/{id} looks again).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomBytes } from "node:crypto"
import type { Hex } from "viem"
import { AnchorChain } from "../adapters/chain/AnchorChain.js"
import type { AnchorChainClient, ChainError, ChainReceipt } from "../adapters/chain/AnchorChainClient.js"
import { noteOrigin } from "../adapters/keys/Trust.js"
import { AnchorRepo, type StoredAnchor } from "../adapters/store/AnchorRepo.js"
import { ReputationRepo } from "../adapters/store/ReputationRepo.js"
import * as ReputationRepoLayer from "../adapters/store/ReputationRepo.js"
import { Store, type StoreError } from "../adapters/store/Store.js"
import {
  ANCHOR_MAX_BATCH,
  type AnchorKind,
  type Batch,
  buildBatch,
  type LeafOf,
  type ScoreLeaf,
  type TreeHeadLeaf
} from "../core/AnchorBatch.js"
import { SYSTEM_ACTOR } from "../adapters/auth/Principal.js"
import * as AnchorRepoLayer from "../adapters/store/AnchorRepo.js"
import { recomputeReputation } from "../services/ReputationRecompute.js"

/** CAIP-2 name of an EVM chain. */
export const chainName = (chainId: number): string => `eip155:${chainId}`

/** The newest signed tree head of each agent as a leaf; `undefined` for an agent without a log. */
export const treeHeadLeaf = (agentId: string) =>
  Effect.gen(function* () {
    const head = yield* (yield* Store).treeHead(agentId)
    if (head === undefined || head.tree_size === 0) return undefined
    const origin = noteOrigin(head.note)
    if (origin === undefined) return yield* Effect.dieMessage(`the tree head of ${agentId} has no origin line`)
    return { agent_id: agentId, log_origin: origin, tree_size: head.tree_size, root: head.root } satisfies TreeHeadLeaf
  })

/**
 * The score GET /v1/reputation/{id} serves (the stored one, or computed now when none is stored yet)
 * as a leaf; `undefined` when it is computed over an empty log (there is nothing to publish).
 */
export const scoreLeaf = (agentId: string) =>
  Effect.gen(function* () {
    const stored = yield* (yield* ReputationRepo).stored(agentId)
    const record = stored?.record ?? (yield* recomputeReputation(agentId)).record
    if (record.computed_over.tree_size === 0 || record.computed_over.root === null) return undefined
    return {
      agent_id: agentId,
      score: record.score,
      grade: record.grade,
      computed_over: { tree_size: record.computed_over.tree_size, root: record.computed_over.root }
    } satisfies ScoreLeaf
  })

export interface Anchored<K extends AnchorKind> {
  readonly anchor: StoredAnchor
  readonly batch: Batch<K>
  /** Why the chain refused or could not be reached, when it did. */
  readonly chainError: ChainError | undefined
}

const outcomeOf = (receipt: ChainReceipt | undefined) =>
  receipt === undefined
    ? undefined
    : receipt.status === "success"
      ? { status: "confirmed" as const, block_number: receipt.block_number, error: null }
      : { status: "failed" as const, block_number: receipt.block_number, error: "the transaction reverted" }

/**
 * Builds the batch of `leaves` (1 to 200, one per agent), records it, sends it, and waits a while
 * for its receipt. A chain failure after the batch was recorded leaves it `failed` with the reason.
 */
export const anchorBatch = <K extends AnchorKind>(
  client: AnchorChainClient,
  kind: K,
  leaves: ReadonlyArray<LeafOf<K>>,
  requestedBy: string
): Effect.Effect<Anchored<K>, StoreError | ChainError, AnchorRepo> =>
  Effect.gen(function* () {
    const repo = yield* AnchorRepo
    const chainId = yield* client.chainId
    const batch = buildBatch(kind, leaves)
    const anchorId = `0x${randomBytes(32).toString("hex")}` as Hex
    const now = yield* Clock.currentTimeMillis
    yield* repo.insert({
      anchor_id: anchorId,
      kind,
      chain_id: chainId,
      contract: client.contract,
      batch_root: batch.root,
      leaves: batch.leaves as StoredAnchor["leaves"],
      requested_by: requestedBy,
      anchored_at: new Date(now).toISOString()
    })
    const sent = yield* Effect.either(client.send(kind, anchorId, batch.root, batch.leaves.length))
    let chainError: ChainError | undefined
    if (sent._tag === "Left") {
      chainError = sent.left
      yield* repo.settle(anchorId, { status: "failed", block_number: null, error: sent.left.message })
    } else {
      yield* repo.setTransaction(anchorId, sent.right)
      const receipt = yield* Effect.either(client.waitForReceipt(sent.right))
      // A receipt we could not read is not a failure of the transaction: it stays pending.
      const outcome = receipt._tag === "Right" ? outcomeOf(receipt.right) : undefined
      if (outcome !== undefined) yield* repo.settle(anchorId, outcome)
    }
    const anchor = yield* repo.get(anchorId)
    if (anchor === undefined) return yield* Effect.dieMessage(`anchor ${anchorId} vanished`)
    return { anchor, batch, chainError }
  })

/**
 * A pending anchor with a transaction, looked at again: settled when its receipt has come. Answers
 * the anchor as stored afterwards and the receipt when there is one.
 */
export const refreshAnchor = (client: AnchorChainClient, anchor: StoredAnchor) =>
  Effect.gen(function* () {
    if (anchor.tx_hash === null) return { anchor, receipt: undefined }
    const receipt = yield* client.receipt(anchor.tx_hash as Hex)
    const outcome = outcomeOf(receipt)
    if (anchor.status !== "pending" || outcome === undefined) return { anchor, receipt }
    yield* (yield* AnchorRepo).settle(anchor.anchor_id, outcome)
    return { anchor: { ...anchor, ...outcome }, receipt }
  })

export interface AnchorJobOptions {
  readonly interval: Duration.DurationInput
}

/**
 * One pass of the periodic job: every agent whose newest tree head is not anchored yet, batched per
 * owner (organization, else user) in groups of at most 200, one transaction each, so every anchor's
 * agents are readable by the same people. Returns the anchors made.
 */
export const anchorPass = Effect.gen(function* () {
  const { client } = yield* AnchorChain
  if (client === undefined) return []
  const due = yield* (yield* AnchorRepo).unanchored
  const groups = new Map<string, Array<string>>()
  for (const { agent_id, owner } of due) groups.set(owner, [...(groups.get(owner) ?? []), agent_id])
  const made: Array<StoredAnchor> = []
  for (const agents of groups.values())
    for (let start = 0; start < agents.length; start += ANCHOR_MAX_BATCH) {
      const leaves: Array<TreeHeadLeaf> = []
      for (const agentId of agents.slice(start, start + ANCHOR_MAX_BATCH)) {
        const leaf = yield* treeHeadLeaf(agentId)
        if (leaf !== undefined) leaves.push(leaf)
      }
      if (leaves.length === 0) continue
      const { anchor, chainError } = yield* anchorBatch(client, "tree_heads", leaves, SYSTEM_ACTOR)
      made.push(anchor)
      // The chain is down or refusing: the next pass tries again, no use sending the other batches now.
      if (chainError !== undefined) return yield* chainError
    }
  return made
})

/** Runs passes every `interval` until the scope closes (the first after one interval). */
export const runAnchorJob = (options: AnchorJobOptions) =>
  Effect.zipRight(Effect.sleep(options.interval), anchorPass).pipe(
    Effect.tap((made) =>
      made.length === 0
        ? Effect.void
        : Effect.logInfo("anchored tree heads on chain").pipe(
            Effect.annotateLogs({ anchors: made.map((a) => a.anchor_id), statuses: made.map((a) => a.status) })
          )
    ),
    // A failed pass (the chain or the store unreachable) is logged; the next one runs at its time.
    Effect.catchAllCause((cause) =>
      Effect.logWarning("on-chain anchoring pass failed").pipe(Effect.annotateLogs({ cause: String(cause) }))
    ),
    Effect.forever,
    Effect.forkScoped,
    Effect.asVoid
  )

/** The periodic job on the process's store and chain (the worker role, when an interval is set). */
export const layer = (
  options: AnchorJobOptions
): Layer.Layer<never, never, AnchorChain | SqlClient.SqlClient | Store> =>
  Layer.scopedDiscard(runAnchorJob(options)).pipe(
    Layer.provide(Layer.mergeAll(AnchorRepoLayer.layer, ReputationRepoLayer.layer))
  )
