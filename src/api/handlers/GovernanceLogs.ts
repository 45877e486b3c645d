/**
 * The governance logs' reads: a page of entries with the newest signed tree head, an entry's
 * inclusion proof (with its record, so the answer alone can be checked offline), and consistency
 * between two sizes. Every signed tree head was stored when its size was reached.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { BadRequest, NotFound } from "../../../adapters/http/ApiErrors.js"
import { GovernanceLog } from "../../../adapters/store/GovernanceLog.js"
import type { StoreError } from "../../../adapters/store/Store.js"
import { agentGovernanceLog, type GovernanceLogRef, orgGovernanceLog } from "../../../core/Governance.js"
import { CandorApi } from "../Api.js"
import { readAgent } from "./AgentAccess.js"
import { internal, orgRole } from "./Access.js"

const page = (log: GovernanceLogRef, offset: number, limit: number) =>
  Effect.gen(function* () {
    const logs = yield* GovernanceLog
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
  Effect.flatMap(GovernanceLog, (logs) => logs.treeHead(log, treeSize)).pipe(
    Effect.flatMap((head) =>
      head === undefined
        ? Effect.fail(
            new NotFound({
              error:
                treeSize === undefined ? "the governance log is empty" : `the governance log has no size ${treeSize}`
            })
          )
        : Effect.succeed(head)
    )
  )

const inclusion = (log: GovernanceLogRef, index: number, treeSize: number | undefined) =>
  Effect.gen(function* () {
    const logs = yield* GovernanceLog
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

const consistency = (log: GovernanceLogRef, from: number, to: number | undefined) =>
  Effect.gen(function* () {
    const logs = yield* GovernanceLog
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

type LogRead<A> = Effect.Effect<A, BadRequest | NotFound | StoreError, GovernanceLog>

/** A read of an agent's log, for readers of the agent. */
const agentLog = <A>(agentId: string, read: (log: GovernanceLogRef) => LogRead<A>) =>
  readAgent(agentId).pipe(Effect.zipRight(read(agentGovernanceLog(agentId))), Effect.catchTag("StoreError", internal))

/** A read of an organization's log, for its members of any role. */
const orgLog = <A>(orgId: string, read: (log: GovernanceLogRef) => LogRead<A>) =>
  orgRole(orgId).pipe(Effect.zipRight(read(orgGovernanceLog(orgId))), Effect.catchTag("StoreError", internal))

export const GovernanceLogsLive = HttpApiBuilder.group(CandorApi, "governanceLogs", (handlers) =>
  handlers
    .handle("agentGovernanceLog", ({ path, urlParams }) =>
      agentLog(path.agent_id, (log) => page(log, urlParams.offset, urlParams.limit))
    )
    .handle("agentGovernanceConsistency", ({ path, urlParams }) =>
      agentLog(path.agent_id, (log) => consistency(log, urlParams.from, urlParams.to))
    )
    .handle("agentGovernanceInclusion", ({ path, urlParams }) =>
      agentLog(path.agent_id, (log) => inclusion(log, path.index, urlParams.tree_size))
    )
    .handle("orgGovernanceLog", ({ path, urlParams }) =>
      orgLog(path.org_id, (log) => page(log, urlParams.offset, urlParams.limit))
    )
    .handle("orgGovernanceConsistency", ({ path, urlParams }) =>
      orgLog(path.org_id, (log) => consistency(log, urlParams.from, urlParams.to))
    )
    .handle("orgGovernanceInclusion", ({ path, urlParams }) =>
      orgLog(path.org_id, (log) => inclusion(log, path.index, urlParams.tree_size))
    )
)
