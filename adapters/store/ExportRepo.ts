/**
 * The evidence export's reads (services/EvidenceExport.ts): an agent's checkpoints in log order, a
 * page at a time by keyset on the chain position (the `(agent_id, position)` unique index), each
 * with its certificate, linked trace and completed verdict proof; and the inclusion proofs of a
 * page's leaves at one tree size from one read of the Merkle nodes. Same SQL on PostgreSQL and PGlite.
 *
 * Rows are the stored bodies, their sealed fields opened (./SealedFields.ts): an export holds
 * only what the store holds (no prompt, response or thinking text is ever stored). Checkpoints past retention are gone from the page;
 * their leaves stay in the log.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Certificate } from "../../core/Certificate.js"
import type { ExportEntry } from "../../core/Export.js"
import type { IntegrityCheckpoint } from "../../core/schema/Checkpoint.js"
import type { EnforcementRecord } from "../../core/schema/EnforcementRecord.js"
import type { APTrace } from "../../core/schema/Trace.js"
import type { SecretKey } from "../../core/SecretBox.js"
import { SecretKeys } from "../keys/SecretKeys.js"
import { enforcementRecordOf, type EnforcementRecordRow } from "./EnforcementRecordRows.js"
import { toCount } from "./Rows.js"
import {
  certificateFields,
  checkpointFields,
  openBody,
  type SealedFieldUnreadable,
  traceFields
} from "./SealedFields.js"
import { makeMerkleReads } from "./SqlMerkle.js"
import { StoreError } from "./Store.js"

export interface ExportPageQuery {
  readonly agentId: string
  /** Positions after this one (-1 for the start of the log). */
  readonly after: number
  /** Positions below this one: the size of the tree head the export ends with. */
  readonly below: number
  /** Checkpoint timestamps at or after this instant (RFC 3339). */
  readonly from?: string | undefined
  /** Checkpoint timestamps before this instant. */
  readonly to?: string | undefined
  readonly limit: number
}

export interface ExportRecordQuery {
  readonly agentId: string
  /** Records after this one in (created_at, id) order; undefined: from the first. */
  readonly after: ExportRecordCursor | undefined
  /** Records at or after this instant (RFC 3339). */
  readonly from?: string | undefined
  /** Records before this instant. */
  readonly to?: string | undefined
  readonly limit: number
}

export interface ExportRecordCursor {
  /** The row's `created_at` as PostgreSQL writes it (exact). */
  readonly createdAt: string
  readonly id: string
}

export interface ExportRow extends ExportEntry {
  readonly position: number
}

export class ExportRepo extends Context.Tag("candor/adapters/store/ExportRepo")<
  ExportRepo,
  {
    readonly page: (query: ExportPageQuery) => Effect.Effect<ReadonlyArray<ExportRow>, StoreError>
    /** The agent's enforcement records, oldest first, a keyset page at a time, with the cursor of each. */
    readonly enforcementRecords: (
      query: ExportRecordQuery
    ) => Effect.Effect<
      ReadonlyArray<{ readonly record: EnforcementRecord; readonly cursor: ExportRecordCursor }>,
      StoreError
    >
    /** Audit paths (hex) of these leaves at `treeSize`, in order; undefined for a leaf not in the log. */
    readonly inclusionProofs: (
      agentId: string,
      leafIndices: ReadonlyArray<number>,
      treeSize: number
    ) => Effect.Effect<ReadonlyArray<ReadonlyArray<string> | undefined>, StoreError>
  }
>() {}

interface Row {
  readonly position: unknown
  readonly checkpoint_id: string
  readonly checkpoint_sealed_by: string | null
  readonly checkpoint: IntegrityCheckpoint
  readonly certificate_sealed_by: string | null
  readonly certificate: Certificate
  readonly trace_id: string | null
  readonly trace_sealed_by: string | null
  readonly trace: APTrace | null
  readonly proof: Record<string, unknown> | null
}

const entryOf = (keys: ReadonlyArray<SecretKey>, row: Row): Effect.Effect<ExportRow, SealedFieldUnreadable> =>
  Effect.all({
    checkpoint: openBody(checkpointFields, keys, {
      id: row.checkpoint_id,
      sealed_by: row.checkpoint_sealed_by,
      body: row.checkpoint
    }),
    certificate: openBody(certificateFields, keys, {
      id: row.checkpoint_id,
      sealed_by: row.certificate_sealed_by,
      body: row.certificate
    }),
    trace:
      row.trace === null || row.trace_id === null
        ? Effect.succeed(null)
        : openBody(traceFields, keys, { id: row.trace_id, sealed_by: row.trace_sealed_by, body: row.trace })
  }).pipe(
    Effect.map(({ certificate, checkpoint, trace }) => ({
      position: toCount(row.position),
      checkpoint,
      certificate,
      trace,
      proof: row.proof ?? null
    }))
  )

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const secretKeys = yield* SecretKeys
  const merkle = makeMerkleReads(sql)

  const page = (query: ExportPageQuery) =>
    sql<Row>`
      select k.position, k.checkpoint_id, k.sealed_by as checkpoint_sealed_by, k.body as checkpoint,
        c.sealed_by as certificate_sealed_by, c.body as certificate,
        t.trace_id, t.sealed_by as trace_sealed_by, t.body as trace, p.proof
      from checkpoints k
      join certificates c on c.checkpoint_id = k.checkpoint_id
      left join traces t on t.trace_id = (k.body ->> 'linked_trace_id') and t.agent_id = k.agent_id
      left join proofs p on p.checkpoint_id = k.checkpoint_id and p.status = 'completed'
      where k.agent_id = ${query.agentId} and k.position > ${query.after} and k.position < ${query.below}
        ${query.from === undefined ? sql`` : sql`and k.occurred_at >= ${query.from}::timestamptz`}
        ${query.to === undefined ? sql`` : sql`and k.occurred_at < ${query.to}::timestamptz`}
      order by k.position
      limit ${query.limit}`.pipe(
      Effect.flatMap((rows) => Effect.forEach(rows, (row) => entryOf(secretKeys.all, row))),
      Effect.mapError((cause) => new StoreError({ operation: "exportPage", cause }))
    )

  const enforcementRecords = (query: ExportRecordQuery) =>
    sql<EnforcementRecordRow & { id: unknown; cursor_at: string }>`
      -- The cursor's time as text: exact to the microsecond, where an ISO string keeps milliseconds.
      select id, record_id, agent_id, kind, rule, reason, checkpoint_id, session_id, actor, created_at,
        created_at::text as cursor_at
      from enforcement_records
      where agent_id = ${query.agentId}
        ${
          query.after === undefined
            ? sql``
            : sql`and (created_at, id) > (${query.after.createdAt}::timestamptz, ${query.after.id}::bigint)`
        }
        ${query.from === undefined ? sql`` : sql`and created_at >= ${query.from}::timestamptz`}
        ${query.to === undefined ? sql`` : sql`and created_at < ${query.to}::timestamptz`}
      order by created_at, id
      limit ${query.limit}`.pipe(
      Effect.map((rows) =>
        rows.map(({ cursor_at, id, ...row }) => ({
          record: enforcementRecordOf(row),
          cursor: { createdAt: cursor_at, id: String(id) }
        }))
      ),
      Effect.mapError((cause) => new StoreError({ operation: "exportEnforcementRecords", cause }))
    )

  return ExportRepo.of({ page, enforcementRecords, inclusionProofs: merkle.inclusions })
})

export const layer: Layer.Layer<ExportRepo, never, SqlClient.SqlClient | SecretKeys> = Layer.effect(ExportRepo, make)
