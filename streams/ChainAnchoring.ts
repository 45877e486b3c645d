/**
 * The periodic on-chain anchoring job of the worker role (CANDOR_CHAIN_ANCHOR_INTERVAL,
 * docs/on-chain.md): it builds and sends its batches with the OnChain service's primitives
 * (services/OnChain.ts), which the API's routes use too.
 *
 * Private agents are never published (issue 24): the job's agents (AnchorRepo.unanchored) leave
 * them out.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SYSTEM_ACTOR } from "../adapters/auth/Principal.js"
import { AnchorChain } from "../adapters/chain/AnchorChain.js"
import { AnchorRepo, type StoredAnchor } from "../adapters/store/AnchorRepo.js"
import * as AnchorRepoLayer from "../adapters/store/AnchorRepo.js"
import * as ReputationRepoLayer from "../adapters/store/ReputationRepo.js"
import type { Store } from "../adapters/store/Store.js"
import { ANCHOR_MAX_BATCH, type TreeHeadLeaf } from "../core/AnchorBatch.js"
import { anchorBatch, treeHeadLeaf } from "../services/OnChain.js"

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
