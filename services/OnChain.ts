/**
 * On-chain anchoring (docs/on-chain.md): the batches of POST /v1/on-chain/anchor-root and
 * /publish-scores, their proofs, status and history, and the primitives the periodic job of the
 * worker role shares (streams/ChainAnchoring.ts).
 *
 * Private agents are never published (issue 24): the periodic job's agents (AnchorRepo.unanchored)
 * leave them out, and the API refuses them by name.
 *
 * One batch is one transaction: the leaves are built from what Candor serves publicly (the newest
 * signed tree heads; the scores of GET /v1/reputation), the batch tree (core/AnchorBatch.ts) gives the
 * root, the batch is stored as `pending`, the transaction sent, and its receipt awaited for a while:
 * `confirmed` once mined, `failed` if it reverted or could not be sent, still `pending` when the
 * receipt is late (GET /v1/on-chain/status/{id} looks again).
 *
 * Who may do what is the caller's to say (`Caller`, `readers`): anchoring or publishing needs write
 * access to every agent, an anchor is readable by whoever may read all of its agents and otherwise
 * "not found" like an unknown id. Sends are limited per organization (`chargeSend`).
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomBytes } from "node:crypto"
import type { Hex } from "viem"
import { AnchorChain } from "../adapters/chain/AnchorChain.js"
import type { AnchorChainClient, ChainError, ChainReceipt } from "../adapters/chain/AnchorChainClient.js"
import { ChainSendBudget } from "../adapters/chain/ChainSendBudget.js"
import { BadRequest, NotFound, ServiceUnavailable, TooManyRequests } from "../adapters/http/ApiErrors.js"
import { noteOrigin } from "../adapters/keys/Trust.js"
import { AnchorRepo, type Readers, type StoredAnchor } from "../adapters/store/AnchorRepo.js"
import { IdentityRepo } from "../adapters/store/identity/IdentityRepo.js"
import { ReputationRepo } from "../adapters/store/ReputationRepo.js"
import { Store, type StoreError } from "../adapters/store/Store.js"
import {
  ANCHOR_MAX_BATCH,
  type AnchorKind,
  type Batch,
  batchLeafHash,
  buildBatch,
  type LeafOf,
  leafBytes,
  type ScoreLeaf,
  type TreeHeadLeaf,
  verifyBatchLeaf
} from "../core/AnchorBatch.js"
import { toHex } from "../core/Bytes.js"
import type { AnchorSummary } from "../core/schema/OnChain.js"
import { recomputeReputation } from "./ReputationRecompute.js"

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

// ---------------------------------------------------------------------------------------------
// The routes' operations

/** Who asks, as the caller has checked it. */
export interface Caller<E, R> {
  /**
   * The agents the caller may write, of those it may see (the default set of anchor-root); it fails
   * when the caller may write none of them.
   */
  readonly writableAgents: Effect.Effect<ReadonlyArray<string>, E, R>
  /** Fails unless the caller may write the agent. */
  readonly writeAgent: (agentId: string) => Effect.Effect<unknown, E, R>
  /** Whether its sends come out of the budget: the service-role key (the deployment itself) is not limited. */
  readonly limited: boolean
  /** Who the anchor records as requesting it. */
  readonly actor: string
}

const summaryOf = (anchor: StoredAnchor): AnchorSummary => ({
  anchor_id: anchor.anchor_id,
  kind: anchor.kind,
  chain: chainName(anchor.chain_id),
  chain_id: anchor.chain_id,
  contract: anchor.contract,
  tx_hash: anchor.tx_hash,
  block_number: anchor.block_number,
  batch_root: anchor.batch_root,
  leaf_count: anchor.leaf_count,
  status: anchor.status,
  error: anchor.error,
  anchored_at: anchor.anchored_at,
  agent_ids: anchor.leaves.map((leaf) => leaf.agent_id)
})

const withoutAgents = ({ agent_ids: _, ...rest }: AnchorSummary) => rest

const anchorNotFound = (anchorId: string) => new NotFound({ error: `anchor ${anchorId} not found` })

/** 1 to 200 distinct ids. */
const batchIds = (agentIds: ReadonlyArray<string>) => {
  const ids = [...new Set(agentIds)]
  if (ids.length === 0) return Effect.fail(new BadRequest({ error: "agent_ids: name at least one agent" }))
  if (ids.length > ANCHOR_MAX_BATCH)
    return Effect.fail(
      new BadRequest({
        error: `agent_ids: at most ${ANCHOR_MAX_BATCH} distinct agents per transaction (the contract's MAX_BATCH_SIZE), got ${ids.length}`
      })
    )
  return Effect.succeed(ids)
}

export const make = Effect.gen(function* () {
  const chain = yield* AnchorChain
  const anchors = yield* AnchorRepo
  const reputation = yield* ReputationRepo
  const identity = yield* IdentityRepo
  const budget = yield* ChainSendBudget
  const stores = yield* Effect.context<AnchorRepo | ReputationRepo | Store | SqlClient.SqlClient>()

  /** The configured chain's client, or 503 naming what to set. */
  const enabled = Effect.suspend(() =>
    chain.client !== undefined
      ? Effect.succeed(chain.client)
      : Effect.fail(
          new ServiceUnavailable({
            error: `on-chain anchoring is off: set CANDOR_CHAIN_RPC_URL, CANDOR_CHAIN_PRIVATE_KEY and CANDOR_CHAIN_CONTRACT (not set: ${chain.missing.join(", ")}); docs/on-chain.md`
          })
        )
  )

  /** `chain` of a request: the configured one only, as `eip155:<id>` or the id. */
  const checkChain = (client: AnchorChainClient, requested: string | number | undefined) =>
    Effect.gen(function* () {
      if (requested === undefined) return
      const id = yield* client.chainId
      const name = chainName(id)
      if (requested === id || requested === name || requested === String(id)) return
      return yield* new BadRequest({
        error: `chain: only the configured chain ${name} (chain id ${id}) is available, got ${JSON.stringify(requested)}`
      })
    })

  /** Of the agents the caller may write, those that have a log (POST anchor-root without agent_ids). */
  const defaultAgents = <E, R>(caller: Caller<E, R>) =>
    Effect.gen(function* () {
      const withLogs = yield* anchors.withLogs(yield* caller.writableAgents)
      if (withLogs.length === 0)
        return yield* new BadRequest({ error: "no agent you may anchor has a signed tree head yet" })
      if (withLogs.length > ANCHOR_MAX_BATCH)
        return yield* new BadRequest({
          error: `${withLogs.length} of your agents have logs; name at most ${ANCHOR_MAX_BATCH} with agent_ids (one transaction each)`
        })
      return withLogs
    })

  /** The leaves of `agentIds`, each the caller may write; 400 for one without what the kind needs. */
  const leavesOf = <K extends AnchorKind, E, R>(kind: K, agentIds: ReadonlyArray<string>, caller: Caller<E, R>) =>
    Effect.gen(function* () {
      for (const agentId of agentIds) yield* caller.writeAgent(agentId)
      // Private means private: not even a leaf of a batch root goes on chain for a private agent.
      const visibility = yield* reputation.lookup(agentIds)
      const hidden = agentIds.find((agentId) => visibility.get(agentId)?.visibility === "private")
      if (hidden !== undefined)
        return yield* new BadRequest({
          error: `agent ${hidden} is private: private agents are not published on chain (set its visibility to unlisted or public first)`
        })
      const leaves: Array<TreeHeadLeaf | ScoreLeaf> = []
      for (const agentId of agentIds) {
        const leaf =
          kind === "tree_heads"
            ? yield* Effect.provide(treeHeadLeaf(agentId), stores)
            : yield* Effect.provide(scoreLeaf(agentId), stores)
        if (leaf === undefined)
          return yield* new BadRequest({
            error:
              kind === "tree_heads"
                ? `agent ${agentId} has no signed tree head yet (no certificate in its log)`
                : `agent ${agentId} has no score to publish yet (its reputation is computed over an empty log)`
          })
        leaves.push(leaf)
      }
      return leaves as unknown as ReadonlyArray<K extends "tree_heads" ? TreeHeadLeaf : ScoreLeaf>
    })

  /**
   * One send from the budget of each organization (or personal agents' user) the batch's agents
   * belong to (adapters/chain/ChainSendBudget.ts), or 429 with Retry-After. The service-role key (and
   * the local operator) is the deployment itself and is not limited, as for the request rate.
   */
  const chargeSend = <E, R>(agentIds: ReadonlyArray<string>, caller: Caller<E, R>) =>
    Effect.gen(function* () {
      if (!caller.limited) return
      const payers: Array<string> = []
      for (const agentId of agentIds) {
        const claim = yield* identity.claimOf(agentId)
        // Every agent here passed writeAgent, so a non-service caller's agents are all claimed.
        payers.push(
          claim === undefined ? "unclaimed" : claim.org_id !== null ? `org:${claim.org_id}` : `user:${claim.user_id}`
        )
      }
      const decision = yield* budget.take(payers)
      if (!decision.allowed)
        return yield* new TooManyRequests({
          error: `on-chain sends are limited per organization: retry in ${decision.retryAfterSeconds} s`,
          retry_after_seconds: decision.retryAfterSeconds
        })
    })

  /** The anchor, when `readers` may read every agent of it; otherwise it does not exist for them. */
  const readAnchor = <E, R>(anchorId: string, readers: Effect.Effect<Readers, E, R>) =>
    Effect.gen(function* () {
      const anchor = yield* anchors.get(anchorId)
      if (anchor === undefined) return yield* anchorNotFound(anchorId)
      const may = yield* readers
      if (may !== "all") {
        const visible = new Set(may)
        if (!anchor.leaves.every((leaf) => visible.has(leaf.agent_id))) return yield* anchorNotFound(anchorId)
      }
      return anchor
    })

  /** Anchors the newest signed tree heads of the named agents (default: every one the caller may write with a log). */
  const anchorRoot = <E, R>(
    requestedChain: string | number | undefined,
    named: ReadonlyArray<string> | undefined,
    caller: Caller<E, R>
  ) =>
    Effect.gen(function* () {
      const client = yield* enabled
      yield* checkChain(client, requestedChain)
      const agentIds = named === undefined ? yield* defaultAgents(caller) : yield* batchIds(named)
      const leaves = yield* leavesOf("tree_heads", agentIds, caller)
      yield* chargeSend(agentIds, caller)
      const { anchor, batch, chainError } = yield* Effect.provide(
        anchorBatch(client, "tree_heads", leaves, caller.actor),
        stores
      )
      if (chainError !== undefined)
        return yield* new ServiceUnavailable({
          error: `the chain did not take the anchor (recorded as failed, ${anchor.anchor_id}): ${chainError.message}`
        })
      return {
        ...withoutAgents(summaryOf(anchor)),
        agents: batch.leaves.map((leaf, leafIndex) => ({
          agent_id: leaf.agent_id,
          tree_size: leaf.tree_size,
          root: leaf.root,
          leaf_index: leafIndex
        }))
      }
    })

  /** Publishes the named agents' scores, with each leaf's proof. */
  const publishScores = <E, R>(
    requestedChain: string | number | undefined,
    named: ReadonlyArray<string>,
    caller: Caller<E, R>
  ) =>
    Effect.gen(function* () {
      const client = yield* enabled
      yield* checkChain(client, requestedChain)
      const agentIds = yield* batchIds(named)
      const leaves = yield* leavesOf("scores", agentIds, caller)
      yield* chargeSend(agentIds, caller)
      const { anchor, batch, chainError } = yield* Effect.provide(
        anchorBatch(client, "scores", leaves, caller.actor),
        stores
      )
      if (chainError !== undefined)
        return yield* new ServiceUnavailable({
          error: `the chain did not take the publication (recorded as failed, ${anchor.anchor_id}): ${chainError.message}`
        })
      return {
        ...withoutAgents(summaryOf(anchor)),
        scores_published: batch.leaves.length,
        proofs: batch.leaves.map((leaf, leafIndex) => ({
          ...leaf,
          leaf_index: leafIndex,
          proof: batch.proof(leafIndex)
        }))
      }
    })

  /**
   * The agent's leaf of the anchor with its proof, checked against the stored root and the chain's;
   * `readAgent` fails unless the caller may read the agent.
   */
  const verifyProof = <E, R, E2, R2>(
    anchorId: string,
    agentId: string,
    readers: Effect.Effect<Readers, E, R>,
    readAgent: Effect.Effect<unknown, E2, R2>
  ) =>
    Effect.gen(function* () {
      const client = yield* enabled
      const anchor = yield* readAnchor(anchorId, readers)
      yield* readAgent
      const batch = buildBatch(anchor.kind, anchor.leaves as ReadonlyArray<TreeHeadLeaf>)
      // The stored leaves must give the stored root: anything else is a defect of ours, never "unverified".
      if (batch.root !== anchor.batch_root)
        return yield* Effect.dieMessage(`anchor ${anchor.anchor_id}: its leaves do not give its root`)
      const leafIndex = batch.leaves.findIndex((leaf) => leaf.agent_id === agentId)
      if (leafIndex < 0) return yield* new NotFound({ error: `agent ${agentId} is not in anchor ${anchor.anchor_id}` })
      const leaf = batch.leaves[leafIndex]!
      const proof = batch.proof(leafIndex)
      const proofValid = verifyBatchLeaf({
        kind: anchor.kind,
        leaf,
        leafIndex,
        leafCount: anchor.leaf_count,
        proof,
        root: anchor.batch_root
      })
      const onChain = yield* client.read(anchor.kind, anchor.anchor_id as Hex)
      const matches =
        onChain !== undefined && onChain.root === anchor.batch_root && onChain.leaf_count === anchor.leaf_count
      return {
        anchor_id: anchor.anchor_id,
        kind: anchor.kind,
        agent_id: agentId,
        chain: chainName(anchor.chain_id),
        chain_id: anchor.chain_id,
        contract: anchor.contract,
        tx_hash: anchor.tx_hash,
        leaf,
        leaf_hex: toHex(leafBytes(anchor.kind, leaf)),
        leaf_hash: toHex(batchLeafHash(anchor.kind, leaf)),
        leaf_index: leafIndex,
        leaf_count: anchor.leaf_count,
        proof,
        batch_root: anchor.batch_root,
        proof_valid: proofValid,
        on_chain: {
          root: onChain?.root ?? null,
          leaf_count: onChain?.leaf_count ?? null,
          timestamp: onChain?.timestamp ?? null,
          matches
        },
        verified: proofValid && matches
      }
    })

  /** The anchor as stored, settled first when its receipt has come, with its confirmations. */
  const status = <E, R>(anchorId: string, readers: Effect.Effect<Readers, E, R>) =>
    Effect.gen(function* () {
      const client = yield* enabled
      const stored = yield* readAnchor(anchorId, readers)
      const { anchor, receipt } = yield* Effect.provide(refreshAnchor(client, stored), stores)
      const latest = anchor.block_number === null ? undefined : yield* client.blockNumber
      return {
        ...withoutAgents(summaryOf(anchor)),
        confirmations:
          anchor.block_number === null || latest === undefined ? 0 : Math.max(0, latest - anchor.block_number + 1),
        receipt:
          receipt === undefined
            ? null
            : {
                block_number: receipt.block_number,
                block_hash: receipt.block_hash,
                status: receipt.status,
                from: receipt.from,
                to: receipt.to,
                gas_used: receipt.gas_used,
                effective_gas_price: receipt.effective_gas_price
              }
      }
    })

  /** A page of the anchors `readers` may read (of one agent, when named), newest first. */
  const history = (query: {
    readonly agentId: string | undefined
    readonly readers: Readers
    readonly limit: number
    readonly cursor: number | undefined
  }) =>
    Effect.gen(function* () {
      const found = yield* anchors.history(query)
      const last = found.at(-1)
      return {
        agent_id: query.agentId ?? null,
        anchors: found.map(summaryOf),
        next_cursor: found.length === query.limit && last !== undefined ? String(last.seq) : null
      }
    })

  return { anchorRoot, publishScores, verifyProof, status, history }
})

export class OnChain extends Context.Tag("candor/services/OnChain")<OnChain, Effect.Effect.Success<typeof make>>() {}

export const layer = Layer.effect(OnChain, make)
