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

/** Where a family of logs keeps its heads (one row per log, with its size) and its perfect nodes. */
export interface MerkleTables {
  readonly heads: string
  readonly sizeColumn: string
  readonly nodes: string
  /** The column naming the log in both tables. */
  readonly logColumn: string
}

/** The agents' checkpoint logs. */
export const checkpointLogTables: MerkleTables = {
  heads: "chain_heads",
  sizeColumn: "position",
  nodes: "merkle_nodes",
  logColumn: "agent_id"
}

export const makeMerkleReads = (sql: SqlClient, tables: MerkleTables = checkpointLogTables) => {
  const logSize = (logId: string) =>
    Effect.map(
      sql<{ size: unknown }>`
        select ${sql(tables.sizeColumn)} as size from ${sql(tables.heads)} where ${sql(tables.logColumn)} = ${logId}`,
      (rows) => toCount(rows[0]?.size)
    )

  const readNodes = (logId: string, ids: ReadonlyArray<{ level: number; index: number }>) =>
    Effect.map(
      ids.length === 0
        ? Effect.succeed([])
        : sql<{ level: number; idx: unknown; hash: string }>`
            select m.level, m.idx, encode(m.hash, 'hex') as hash
            from ${sql(tables.nodes)} m
            join json_to_recordset(${json(ids)}::json) as r(level smallint, index bigint)
              on m.level = r.level and m.idx = r.index
            where m.${sql(tables.logColumn)} = ${logId}`,
      (rows): NodeReader => {
        const nodes = new Map(rows.map((row) => [key(row.level, toCount(row.idx)), fromHex(row.hash)]))
        return (level, index) => nodes.get(key(level, index))
      }
    )

  /** Reads the nodes of a proof the arguments allow, at a size the log has reached. */
  const prove = (
    operation: string,
    logId: string,
    treeSize: number,
    valid: boolean,
    nodes: () => ReadonlyArray<{ level: number; index: number }>,
    build: (read: NodeReader) => ReadonlyArray<Uint8Array> | undefined
  ): Effect.Effect<ReadonlyArray<string> | undefined, StoreError> =>
    (valid
      ? Effect.flatMap(logSize(logId), (size) =>
          treeSize > size
            ? Effect.succeed(undefined)
            : Effect.map(readNodes(logId, nodes()), (read) => build(read)?.map(toHex))
        )
      : Effect.succeed(undefined)
    ).pipe(Effect.mapError((cause) => new StoreError({ operation, cause })))

  const inclusion = (logId: string, leafIndex: number, treeSize: number) =>
    prove(
      "inclusionProof",
      logId,
      treeSize,
      isCount(leafIndex) && isCount(treeSize) && leafIndex < treeSize,
      () => inclusionProofNodes(leafIndex, treeSize),
      (read) => inclusionProof(leafIndex, treeSize, read)
    )

  /**
   * Inclusion proofs of several leaves at one size, from one read of their nodes (the export's page
   * of certificates): the same proofs as `inclusion`, one undefined per leaf that is not in the log.
   */
  const inclusions = (logId: string, leafIndices: ReadonlyArray<number>, treeSize: number) => {
    const valid = (leafIndex: number) => isCount(leafIndex) && isCount(treeSize) && leafIndex < treeSize
    const ids = new Map<string, { level: number; index: number }>()
    for (const leafIndex of leafIndices.filter(valid))
      for (const node of inclusionProofNodes(leafIndex, treeSize)) ids.set(key(node.level, node.index), node)
    return (
      leafIndices.length === 0
        ? Effect.succeed([])
        : Effect.flatMap(logSize(logId), (size) =>
            treeSize > size
              ? Effect.succeed(leafIndices.map(() => undefined))
              : Effect.map(readNodes(logId, [...ids.values()]), (read) =>
                  leafIndices.map((leafIndex) =>
                    valid(leafIndex) ? inclusionProof(leafIndex, treeSize, read)?.map(toHex) : undefined
                  )
                )
          )
    ).pipe(Effect.mapError((cause) => new StoreError({ operation: "inclusionProofs", cause })))
  }

  /** As core/Merkle.ts: 0 < fromSize ≤ toSize, or both 0 (the empty proof). */
  const consistency = (logId: string, fromSize: number, toSize: number) =>
    prove(
      "consistencyProof",
      logId,
      toSize,
      isCount(fromSize) && isCount(toSize) && fromSize <= toSize && (fromSize > 0 || toSize === 0),
      () => consistencyProofNodes(fromSize, toSize),
      (read) => consistencyProof(fromSize, toSize, read)
    )

  /** The hex root at an earlier size, for a tree head signed on demand; `undefined` past the log's size. */
  const root = (logId: string, treeSize: number) =>
    (isCount(treeSize)
      ? Effect.flatMap(logSize(logId), (size) =>
          treeSize > size
            ? Effect.succeed(undefined)
            : Effect.map(readNodes(logId, rootNodes(treeSize)), (read) => {
                const hash = rootAt(treeSize, read)
                return hash === undefined ? undefined : toHex(hash)
              })
        )
      : Effect.succeed(undefined)
    ).pipe(Effect.mapError((cause) => new StoreError({ operation: "rootAt", cause })))

  return { logSize, inclusion, inclusions, consistency, root }
}
