/**
 * Merkle proofs from stored nodes. core/Merkle.ts names the perfect nodes a proof needs for any
 * (leaf, size) or (size1, size2) pair, this size or an older one; they are fetched in one query and
 * folded there. Sizes are checked against the chain head first: a size the log has not reached
 * could otherwise be "proved" from nodes that happen to exist.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import { fromHex, toHex } from "../../core/Bytes.js"
import {
  consistencyProof,
  consistencyProofNodes,
  inclusionProof,
  inclusionProofNodes,
  type NodeReader,
  rootAt,
  rootNodes
} from "../../core/Merkle.js"
import { isCount } from "../../core/MerkleRange.js"
import { json, toCount } from "./Rows.js"
import { StoreError } from "./Store.js"

const key = (level: number, index: number) => `${level}/${index}`

export const makeMerkleReads = (sql: SqlClient) => {
  const logSize = (agentId: string) =>
    Effect.map(sql<{ position: unknown }>`select position from chain_heads where agent_id = ${agentId}`, (rows) =>
      toCount(rows[0]?.position)
    )

  const readNodes = (agentId: string, ids: ReadonlyArray<{ level: number; index: number }>) =>
    Effect.map(
      ids.length === 0
        ? Effect.succeed([])
        : sql<{ level: number; idx: unknown; hash: string }>`
            select m.level, m.idx, encode(m.hash, 'hex') as hash
            from merkle_nodes m
            join json_to_recordset(${json(ids)}::json) as r(level smallint, index bigint)
              on m.level = r.level and m.idx = r.index
            where m.agent_id = ${agentId}`,
      (rows): NodeReader => {
        const nodes = new Map(rows.map((row) => [key(row.level, toCount(row.idx)), fromHex(row.hash)]))
        return (level, index) => nodes.get(key(level, index))
      }
    )

  /** Reads the nodes of a proof the arguments allow, at a size the log has reached. */
  const prove = (
    operation: string,
    agentId: string,
    treeSize: number,
    valid: boolean,
    nodes: () => ReadonlyArray<{ level: number; index: number }>,
    build: (read: NodeReader) => ReadonlyArray<Uint8Array> | undefined
  ): Effect.Effect<ReadonlyArray<string> | undefined, StoreError> =>
    (valid
      ? Effect.flatMap(logSize(agentId), (size) =>
          treeSize > size
            ? Effect.succeed(undefined)
            : Effect.map(readNodes(agentId, nodes()), (read) => build(read)?.map(toHex))
        )
      : Effect.succeed(undefined)
    ).pipe(Effect.mapError((cause) => new StoreError({ operation, cause })))

  const inclusion = (agentId: string, leafIndex: number, treeSize: number) =>
    prove(
      "inclusionProof",
      agentId,
      treeSize,
      isCount(leafIndex) && isCount(treeSize) && leafIndex < treeSize,
      () => inclusionProofNodes(leafIndex, treeSize),
      (read) => inclusionProof(leafIndex, treeSize, read)
    )

  /** As core/Merkle.ts: 0 < fromSize ≤ toSize, or both 0 (the empty proof). */
  const consistency = (agentId: string, fromSize: number, toSize: number) =>
    prove(
      "consistencyProof",
      agentId,
      toSize,
      isCount(fromSize) && isCount(toSize) && fromSize <= toSize && (fromSize > 0 || toSize === 0),
      () => consistencyProofNodes(fromSize, toSize),
      (read) => consistencyProof(fromSize, toSize, read)
    )

  /** The hex root at an earlier size, for a tree head signed on demand; `undefined` past the log's size. */
  const root = (agentId: string, treeSize: number) =>
    (isCount(treeSize)
      ? Effect.flatMap(logSize(agentId), (size) =>
          treeSize > size
            ? Effect.succeed(undefined)
            : Effect.map(readNodes(agentId, rootNodes(treeSize)), (read) => {
                const hash = rootAt(treeSize, read)
                return hash === undefined ? undefined : toHex(hash)
              })
        )
      : Effect.succeed(undefined)
    ).pipe(Effect.mapError((cause) => new StoreError({ operation: "rootAt", cause })))

  return { logSize, inclusion, consistency, root }
}
