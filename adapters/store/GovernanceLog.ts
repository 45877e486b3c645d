/**
 * The governance logs on the store (migrations/0006_governance_log.ts): append an action, read
 * entries, the signed tree head, inclusion and consistency proofs. The same RFC 6962 machinery as
 * the checkpoint logs (core/Merkle.ts, SqlMerkle.ts) and the same C2SP notes (core/Note.ts).
 *
 * `append` runs in the caller's transaction when there is one (a nested `withTransaction` is a
 * savepoint), so an action and its entry are stored together or not at all. The log's head row is
 * locked while appending: concurrent actions on one log get consecutive indexes, never a fork.
 * Every append stores the tree head signed at its new size, so any size has its head on record.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { fromHex, toHex } from "../../core/Bytes.js"
import { type GovernanceLogRef, governanceLeafHash, governanceLogKey, governanceOrigin } from "../../core/Governance.js"
import { appendToFrontier, frontierRoot } from "../../core/Merkle.js"
import { formatCheckpoint, signNote } from "../../core/Note.js"
import {
  type GovernanceAction,
  type GovernanceHashes,
  type GovernanceLogEntry,
  GovernanceRecord
} from "../../core/schema/Governance.js"
import { SigningKeys } from "../keys/SigningKeys.js"
import { json, toCount, toIso } from "./Rows.js"
import { makeMerkleReads } from "./SqlMerkle.js"
import { StoreError, storeError } from "./Store.js"
import { transaction } from "./Transaction.js"

/** What the caller says about an action; the log adds its origin and the time. */
export interface GovernanceDraft {
  readonly action: GovernanceAction
  readonly actor: string
  readonly reason?: string | null | undefined
  readonly previous_state: unknown
  readonly new_state: unknown
  readonly hashes?: GovernanceHashes | undefined
}

/** A log's signed tree head at one size. */
export interface GovernanceTreeHead {
  readonly origin: string
  readonly tree_size: number
  /** Hex SHA-256 root. */
  readonly root: string
  /** The C2SP signed note (tlog-checkpoint). */
  readonly note: string
  readonly created_at: string
}

export class GovernanceLog extends Context.Tag("candor/adapters/store/GovernanceLog")<
  GovernanceLog,
  {
    /** The log's origin (its tree heads' origin and key name). */
    readonly origin: (log: GovernanceLogRef) => string
    /** Appends in the ambient transaction, if any; returns the stored entry. */
    readonly append: (log: GovernanceLogRef, draft: GovernanceDraft) => Effect.Effect<GovernanceLogEntry, StoreError>
    /** Entries from `offset` in index order, and the log's size. */
    readonly entries: (
      log: GovernanceLogRef,
      offset: number,
      limit: number
    ) => Effect.Effect<{ readonly entries: ReadonlyArray<GovernanceLogEntry>; readonly size: number }, StoreError>
    /** The newest signed tree head, or the one of exactly `treeSize`; undefined for an empty log or a size not reached. */
    readonly treeHead: (
      log: GovernanceLogRef,
      treeSize?: number
    ) => Effect.Effect<GovernanceTreeHead | undefined, StoreError>
    /** Audit path (hex, bottom-up), or undefined when the index or size is not in the log. */
    readonly inclusionProof: (
      log: GovernanceLogRef,
      index: number,
      treeSize: number
    ) => Effect.Effect<ReadonlyArray<string> | undefined, StoreError>
    /** Consistency proof (hex), or undefined unless 0 < from ≤ to ≤ size. */
    readonly consistencyProof: (
      log: GovernanceLogRef,
      fromSize: number,
      toSize: number
    ) => Effect.Effect<ReadonlyArray<string> | undefined, StoreError>
  }
>() {}

export interface GovernanceLogOptions {
  /** CANDOR_LOG_ORIGIN. */
  readonly logOrigin: string
}

const decodeRecord = Schema.decodeUnknown(GovernanceRecord)

export const make = (options: GovernanceLogOptions) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const keys = yield* SigningKeys
    const merkle = makeMerkleReads(sql, {
      heads: "governance_logs",
      sizeColumn: "size",
      nodes: "governance_nodes",
      logColumn: "log_id"
    })
    const origin = (log: GovernanceLogRef) => governanceOrigin(options.logOrigin, log)

    type Head = { readonly size: unknown; readonly frontier: ReadonlyArray<string> }
    const selectHead = (logId: string) =>
      sql<Head>`select size, frontier from governance_logs where log_id = ${logId} for update`
    /** The log's head row, locked until the transaction ends; created on the log's first append. */
    const lockHead = (logId: string) =>
      Effect.flatMap(selectHead(logId), ([head]) =>
        head !== undefined
          ? Effect.succeed(head)
          : sql`insert into governance_logs (log_id, size, frontier) values (${logId}, 0, '[]') on conflict do nothing`.pipe(
              Effect.zipRight(selectHead(logId)),
              Effect.map(([created]) => created ?? { size: 0, frontier: [] })
            )
      )

    const append = (log: GovernanceLogRef, draft: GovernanceDraft) =>
      Effect.gen(function* () {
        const logId = governanceLogKey(log)
        const now = yield* Clock.currentTimeMillis
        const record: GovernanceRecord = {
          origin: origin(log),
          action: draft.action,
          actor: draft.actor,
          reason: draft.reason ?? null,
          previous_state: draft.previous_state ?? null,
          new_state: draft.new_state ?? null,
          hashes: draft.hashes ?? {},
          created_at: new Date(now).toISOString()
        }
        const leaf = governanceLeafHash(record)
        const head = yield* lockHead(logId)
        const before = { size: toCount(head.size), hashes: head.frontier.map((hash) => fromHex(hash)!) }
        const { frontier, nodes } = appendToFrontier(before, leaf)
        const root = frontierRoot(frontier)
        const note = signNote(formatCheckpoint({ origin: record.origin, size: frontier.size, root, extensions: [] }), {
          name: record.origin,
          key: keys.active
        })
        const index = before.size
        // One statement for the entry, its tree nodes, the signed head and the log's new frontier: an
        // append is two round trips (the lock above, this), not six. Data-modifying CTEs run exactly
        // once, whether or not the outer statement reads them.
        yield* sql`
          with entry as (
            insert into governance_entries (log_id, idx, leaf_hash, record)
            values (${logId}, ${index}, decode(${toHex(leaf)}, 'hex'), ${json(record)}::json)
          ), tree_nodes as (
            insert into governance_nodes (log_id, level, idx, hash)
            select ${logId}, level, idx, decode(hash, 'hex')
            from json_to_recordset(${json(nodes.map((node) => ({ level: node.level, idx: node.index, hash: toHex(node.hash) })))}::json)
              as r(level smallint, idx bigint, hash text)
          ), tree_head as (
            insert into governance_tree_heads (log_id, tree_size, root, note)
            values (${logId}, ${frontier.size}, decode(${toHex(root)}, 'hex'), ${note})
          )
          update governance_logs set size = ${frontier.size}, frontier = ${json(frontier.hashes.map(toHex))}::jsonb
          where log_id = ${logId}`
        return { index, leaf_hash: toHex(leaf), record } satisfies GovernanceLogEntry
      }).pipe((effect) => transaction(sql, effect), storeError("governance append"))

    const entries = (log: GovernanceLogRef, offset: number, limit: number) =>
      Effect.gen(function* () {
        const logId = governanceLogKey(log)
        const rows = yield* sql<{ idx: unknown; leaf_hash: string; record: unknown }>`
          select idx, encode(leaf_hash, 'hex') as leaf_hash, record from governance_entries
          where log_id = ${logId} and idx >= ${offset} order by idx limit ${limit}`
        const size = yield* merkle.logSize(logId)
        const decoded = yield* Effect.forEach(rows, (row) =>
          Effect.map(decodeRecord(typeof row.record === "string" ? JSON.parse(row.record) : row.record), (record) => ({
            index: toCount(row.idx),
            leaf_hash: row.leaf_hash,
            record
          }))
        )
        return { entries: decoded, size }
      }).pipe(storeError("governance entries"))

    const treeHead = (log: GovernanceLogRef, treeSize?: number) =>
      sql<{ tree_size: unknown; root: string; note: string; created_at: unknown }>`
        select tree_size, encode(root, 'hex') as root, note, created_at from governance_tree_heads
        where log_id = ${governanceLogKey(log)} ${treeSize === undefined ? sql`` : sql`and tree_size = ${treeSize}`}
        order by tree_size desc limit 1`.pipe(
        Effect.map(([row]) =>
          row === undefined
            ? undefined
            : {
                origin: origin(log),
                tree_size: toCount(row.tree_size),
                root: row.root,
                note: row.note,
                created_at: toIso(row.created_at)
              }
        ),
        storeError("governance tree head")
      )

    return GovernanceLog.of({
      origin,
      append,
      entries,
      treeHead,
      inclusionProof: (log, index, treeSize) => merkle.inclusion(governanceLogKey(log), index, treeSize),
      consistencyProof: (log, fromSize, toSize) =>
        fromSize === 0 ? Effect.succeed(undefined) : merkle.consistency(governanceLogKey(log), fromSize, toSize)
    })
  })

/** The governance logs on the process's SqlClient, signed with its active key. */
export const layer = (
  options: GovernanceLogOptions
): Layer.Layer<GovernanceLog, never, SqlClient.SqlClient | SigningKeys> => Layer.effect(GovernanceLog, make(options))
