/**
 * The governance logs' reads: a page of entries with the newest signed tree head, an entry's
 * inclusion proof (with its record, so the answer alone can be checked offline), and consistency
 * between two sizes. Every signed tree head was stored when its size was reached. Whether the caller
 * may read the log (its agent's readers, its organization's members) is the caller's to check.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { BadRequest, NotFound } from "../adapters/http/ApiErrors.js"
import { GovernanceLog } from "../adapters/store/GovernanceLog.js"
import type { GovernanceLogRef } from "../core/Governance.js"

export const make = Effect.gen(function* () {
  const logs = yield* GovernanceLog

  /** `limit` entries from `offset`, with the head of the log's size. */
  const page = (log: GovernanceLogRef, offset: number, limit: number) =>
    Effect.gen(function* () {
      const { entries, size } = yield* logs.entries(log, offset, limit)
      const head = size === 0 ? undefined : yield* logs.treeHead(log, size)
      return {
        origin: logs.origin(log),
        tree_size: size,
        root: head?.root ?? null,
        signed_tree_head: head?.note ?? null,
        offset,
        limit,
        entries
      }
    })

  /** The head of exactly `treeSize` (default: the newest); 404 when the log has not reached it. */
  const headOf = (log: GovernanceLogRef, treeSize: number | undefined) =>
    Effect.flatMap(logs.treeHead(log, treeSize), (head) =>
      head === undefined
        ? Effect.fail(
            new NotFound({
              error:
                treeSize === undefined ? "the governance log is empty" : `the governance log has no size ${treeSize}`
            })
          )
        : Effect.succeed(head)
    )

  /** Entry `index` with its audit path to the head of `treeSize` (default: the newest). */
  const inclusion = (log: GovernanceLogRef, index: number, treeSize: number | undefined) =>
    Effect.gen(function* () {
      const head = yield* headOf(log, treeSize)
      if (index >= head.tree_size) {
        return yield* new NotFound({ error: `no entry ${index} in a log of ${head.tree_size} entries` })
      }
      const [entry] = (yield* logs.entries(log, index, 1)).entries
      const path = yield* logs.inclusionProof(log, index, head.tree_size)
      if (entry === undefined || path === undefined) return yield* new NotFound({ error: `no entry ${index}` })
      return {
        origin: head.origin,
        index,
        leaf_hash: entry.leaf_hash,
        record: entry.record,
        tree_size: head.tree_size,
        root: head.root,
        audit_path: path,
        signed_tree_head: head.note
      }
    })

  /** The consistency proof from size `from` to size `to` (default: the newest), with both heads. */
  const consistency = (log: GovernanceLogRef, from: number, to: number | undefined) =>
    Effect.gen(function* () {
      const end = yield* headOf(log, to)
      if (from > end.tree_size) {
        return yield* new BadRequest({ error: `from (${from}) must not exceed to (${end.tree_size})` })
      }
      const start = yield* headOf(log, from)
      const proof = yield* logs.consistencyProof(log, from, end.tree_size)
      if (proof === undefined)
        return yield* new NotFound({ error: `no consistency proof from ${from} to ${end.tree_size}` })
      const sized = (head: typeof end) => ({ tree_size: head.tree_size, root: head.root, signed_tree_head: head.note })
      return { origin: end.origin, from: sized(start), to: sized(end), proof }
    })

  return { page, inclusion, consistency }
})

export class GovernanceLogs extends Context.Tag("candor/services/GovernanceLogs")<
  GovernanceLogs,
  Effect.Effect.Success<typeof make>
>() {}

export const layer = Layer.effect(GovernanceLogs, make)
