/**
 * The on-chain routes (groups/OnChain.ts, docs/on-chain.md). The batches are built and sent by
 * streams/ChainAnchoring.ts, which the periodic job shares; this file decides who may do what and
 * shapes the answers.
 *
 * Access: anchoring or publishing needs write access to every agent (404 for one the caller may not
 * see, 403 for one it may only read); the default set of POST anchor-root is every agent the caller
 * may write that has a log. An anchor is readable by whoever may read all of its agents, and is
 * otherwise "not found" like an unknown id. Sends are limited per organization (`chargeSend`).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import type { Hex } from "viem"
import { AccessControl } from "../../../adapters/auth/AccessControl.js"
import { actorOf, CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { AnchorChain } from "../../../adapters/chain/AnchorChain.js"
import type { AnchorChainClient, ChainError } from "../../../adapters/chain/AnchorChainClient.js"
import { ChainSendBudget } from "../../../adapters/chain/ChainSendBudget.js"
import {
  BadRequest,
  Forbidden,
  NotFound,
  ServiceUnavailable,
  TooManyRequests
} from "../../../adapters/http/ApiErrors.js"
import { IdentityRepo } from "../../../adapters/store/identity/IdentityRepo.js"
import { AnchorRepo, type Readers, type StoredAnchor } from "../../../adapters/store/AnchorRepo.js"
import { ReputationRepo } from "../../../adapters/store/ReputationRepo.js"
import {
  ANCHOR_MAX_BATCH,
  type AnchorKind,
  buildBatch,
  leafBytes,
  batchLeafHash,
  type ScoreLeaf,
  type TreeHeadLeaf,
  verifyBatchLeaf
} from "../../../core/AnchorBatch.js"
import { toHex } from "../../../core/Bytes.js"
import type { AnchorSummary } from "../../../core/schema/OnChain.js"
import { anchorBatch, chainName, refreshAnchor, scoreLeaf, treeHeadLeaf } from "../../../streams/ChainAnchoring.js"
import { CandorApi } from "../Api.js"
import { internal } from "./Access.js"
import { readAgent, writeAgent } from "./AgentAccess.js"

/** The configured chain's client, or 503 naming what to set. */
const enabled = Effect.flatMap(AnchorChain, ({ client, missing }) =>
  client !== undefined
    ? Effect.succeed(client)
    : Effect.fail(
        new ServiceUnavailable({
          error: `on-chain anchoring is off: set CANDOR_CHAIN_RPC_URL, CANDOR_CHAIN_PRIVATE_KEY and CANDOR_CHAIN_CONTRACT (not set: ${missing.join(", ")}); docs/on-chain.md`
        })
      )
)

const unavailable = (error: ChainError) =>
  Effect.fail(
    new ServiceUnavailable({ error: `the chain could not be reached or refused the request: ${error.message}` })
  )

/** `chain` of a request: the configured one only, as `eip155:<id>` or the id. */
const checkChain = (client: AnchorChainClient, chain: string | number | undefined) =>
  Effect.gen(function* () {
    if (chain === undefined) return
    const id = yield* client.chainId
    const name = chainName(id)
    if (chain === id || chain === name || chain === String(id)) return
    return yield* new BadRequest({
      error: `chain: only the configured chain ${name} (chain id ${id}) is available, got ${JSON.stringify(chain)}`
    })
  })

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

/** The agents the caller may write, of those it may see, that have a log (POST anchor-root without agent_ids). */
const defaultAgents = Effect.gen(function* () {
  const principal = yield* CurrentPrincipal
  const access = yield* AccessControl
  yield* access.write(principal)
  const visible = yield* access.visibleAgents(principal)
  const writable: Array<string> = []
  for (const agentId of visible)
    if ((yield* Effect.either(access.agent(principal, agentId, "write")))._tag === "Right") writable.push(agentId)
  if (visible.length > 0 && writable.length === 0)
    return yield* new Forbidden({ error: "anchoring needs the admin role on the agents; you may only read them" })
  const withLogs = yield* (yield* AnchorRepo).withLogs(writable)
  if (withLogs.length === 0)
    return yield* new BadRequest({ error: "no agent you may anchor has a signed tree head yet" })
  if (withLogs.length > ANCHOR_MAX_BATCH)
    return yield* new BadRequest({
      error: `${withLogs.length} of your agents have logs; name at most ${ANCHOR_MAX_BATCH} with agent_ids (one transaction each)`
    })
  return withLogs
})

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

/** Whose anchors the caller may read: all (service-role key), else the agents it may see. */
const readers = Effect.gen(function* () {
  const principal = yield* CurrentPrincipal
  if (principal.kind === "service") return "all" as Readers
  return (yield* (yield* AccessControl).visibleAgents(principal)) as Readers
})

/** The anchor, when the caller may read every agent of it; otherwise it does not exist for it. */
const readAnchor = (anchorId: string) =>
  Effect.gen(function* () {
    const anchor = yield* (yield* AnchorRepo).get(anchorId)
    if (anchor === undefined) return yield* anchorNotFound(anchorId)
    const may = yield* readers
    if (may !== "all") {
      const visible = new Set(may)
      if (!anchor.leaves.every((leaf) => visible.has(leaf.agent_id))) return yield* anchorNotFound(anchorId)
    }
    return anchor
  })

/** The leaves of `agentIds`, each the caller may write; 400 for one without what the kind needs. */
const leavesOf = <K extends AnchorKind>(kind: K, agentIds: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    for (const agentId of agentIds) yield* writeAgent(agentId)
    // Private means private: not even a leaf of a batch root goes on chain for a private agent.
    const visibility = yield* (yield* ReputationRepo).lookup(agentIds)
    const hidden = agentIds.find((agentId) => visibility.get(agentId)?.visibility === "private")
    if (hidden !== undefined)
      return yield* new BadRequest({
        error: `agent ${hidden} is private: private agents are not published on chain (set its visibility to unlisted or public first)`
      })
    const leaves: Array<TreeHeadLeaf | ScoreLeaf> = []
    for (const agentId of agentIds) {
      const leaf = kind === "tree_heads" ? yield* treeHeadLeaf(agentId) : yield* scoreLeaf(agentId)
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
const chargeSend = (agentIds: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const principal = yield* CurrentPrincipal
    if (principal.kind === "service") return
    const identity = yield* IdentityRepo
    const payers: Array<string> = []
    for (const agentId of agentIds) {
      const claim = yield* identity.claimOf(agentId)
      // Every agent here passed writeAgent, so a non-service caller's agents are all claimed.
      payers.push(
        claim === undefined ? "unclaimed" : claim.org_id !== null ? `org:${claim.org_id}` : `user:${claim.user_id}`
      )
    }
    const decision = yield* (yield* ChainSendBudget).take(payers)
    if (!decision.allowed)
      return yield* new TooManyRequests({
        error: `on-chain sends are limited per organization: retry in ${decision.retryAfterSeconds} s`,
        retry_after_seconds: decision.retryAfterSeconds
      })
  })

export const OnChainLive = HttpApiBuilder.group(CandorApi, "onChain", (handlers) =>
  handlers
    .handle("anchorRoot", ({ payload }) =>
      Effect.gen(function* () {
        const client = yield* enabled
        yield* checkChain(client, payload.chain)
        const agentIds = payload.agent_ids === undefined ? yield* defaultAgents : yield* batchIds(payload.agent_ids)
        const leaves = yield* leavesOf("tree_heads", agentIds)
        yield* chargeSend(agentIds)
        const principal = yield* CurrentPrincipal
        const { anchor, batch, chainError } = yield* anchorBatch(client, "tree_heads", leaves, actorOf(principal))
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
      }).pipe(Effect.catchTag("StoreError", internal), Effect.catchTag("ChainError", unavailable))
    )
    .handle("publishScores", ({ payload }) =>
      Effect.gen(function* () {
        const client = yield* enabled
        yield* checkChain(client, payload.chain)
        const agentIds = yield* batchIds(payload.agent_ids)
        const leaves = yield* leavesOf("scores", agentIds)
        yield* chargeSend(agentIds)
        const principal = yield* CurrentPrincipal
        const { anchor, batch, chainError } = yield* anchorBatch(client, "scores", leaves, actorOf(principal))
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
      }).pipe(Effect.catchTag("StoreError", internal), Effect.catchTag("ChainError", unavailable))
    )
    .handle("verifyAnchorProof", ({ urlParams }) =>
      Effect.gen(function* () {
        const client = yield* enabled
        const anchor = yield* readAnchor(urlParams.anchor_id)
        yield* readAgent(urlParams.agent_id)
        const batch = buildBatch(anchor.kind, anchor.leaves as ReadonlyArray<TreeHeadLeaf>)
        // The stored leaves must give the stored root: anything else is a defect of ours, never "unverified".
        if (batch.root !== anchor.batch_root)
          return yield* Effect.dieMessage(`anchor ${anchor.anchor_id}: its leaves do not give its root`)
        const leafIndex = batch.leaves.findIndex((leaf) => leaf.agent_id === urlParams.agent_id)
        if (leafIndex < 0)
          return yield* new NotFound({ error: `agent ${urlParams.agent_id} is not in anchor ${anchor.anchor_id}` })
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
          agent_id: urlParams.agent_id,
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
      }).pipe(Effect.catchTag("StoreError", internal), Effect.catchTag("ChainError", unavailable))
    )
    .handle("getAnchorStatus", ({ path }) =>
      Effect.gen(function* () {
        const client = yield* enabled
        const stored = yield* readAnchor(path.anchor_id)
        const { anchor, receipt } = yield* refreshAnchor(client, stored)
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
      }).pipe(Effect.catchTag("StoreError", internal), Effect.catchTag("ChainError", unavailable))
    )
    .handle("getAnchorHistory", ({ urlParams }) =>
      Effect.gen(function* () {
        if (urlParams.agent_id !== undefined) yield* readAgent(urlParams.agent_id)
        const anchors = yield* (yield* AnchorRepo).history({
          agentId: urlParams.agent_id,
          readers: yield* readers,
          limit: urlParams.limit,
          cursor: urlParams.cursor
        })
        const last = anchors.at(-1)
        return {
          agent_id: urlParams.agent_id ?? null,
          anchors: anchors.map(summaryOf),
          next_cursor: anchors.length === urlParams.limit && last !== undefined ? String(last.seq) : null
        }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
)
