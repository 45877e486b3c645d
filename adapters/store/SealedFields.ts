/**
 * The stored fields that can hold text derived from the model's reasoning, sealed at rest under the
 * key-encryption key of stored secrets (core/SecretBox.ts, adapters/keys/SecretKeys.ts):
 *
 * - `checkpoints`: `reasoning_summary`, each concern's `evidence` (an excerpt of the thinking) and
 *   each of `conscience_context.considerations` (an LLM judge's notes on the reasoning);
 * - `traces`: `decision.selection_reasoning` (the gateway writes the judge's summary there);
 * - `certificates`: `claims.reasoning_summary`. The certificate is public and its signature covers
 *   the clear text, so it is sealed only in the table and opened before anything serves or checks it.
 *
 * Each value is sealed on its own, in place inside the JSON body, so the rest of the body stays
 * JSON that SQL can filter on and the read shapes do not change. Its additional data names table,
 * field and row (`checkpoints.concerns.1.evidence:<checkpoint_id>`): a value moved to another row,
 * or to another field of its own row, does not open. The row's `sealed_by` column (migration 0014)
 * holds the id of the key; NULL marks a row written in clear before 0014, read as it is until
 * `sealLegacyFields` seals it. A sealed value that cannot be opened fails the read with a message
 * naming the row and the key id, never with the ciphertext in place of the text.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type { Certificate } from "../../core/Certificate.js"
import { open, seal, sealedKeyId, type SecretKey } from "../../core/SecretBox.js"
import type { IntegrityCheckpoint } from "../../core/schema/Checkpoint.js"
import type { APTrace } from "../../core/schema/Trace.js"
import { json } from "./Rows.js"
import { transaction } from "./Transaction.js"

/** A table whose body has sealed fields: its name, its key column, and where the fields are. */
export interface SealedTable<A> {
  readonly table: "checkpoints" | "traces" | "certificates"
  readonly idColumn: "checkpoint_id" | "trace_id"
  /** `body` with each sealed field (a string) replaced by `f(field, value)`; other members as they are. */
  readonly map: (body: A, f: (field: string, value: string) => string) => A
}

const text = (value: unknown, field: string, f: (field: string, value: string) => string) =>
  typeof value === "string" ? f(field, value) : value

export const checkpointFields: SealedTable<IntegrityCheckpoint> = {
  table: "checkpoints",
  idColumn: "checkpoint_id",
  map: (body, f) => ({
    ...body,
    reasoning_summary: text(body.reasoning_summary, "reasoning_summary", f) as string,
    concerns: Array.isArray(body.concerns)
      ? body.concerns.map((concern, i) => ({
          ...concern,
          evidence: text(concern.evidence, `concerns.${i}.evidence`, f) as string
        }))
      : body.concerns,
    conscience_context: considerationsMapped(body.conscience_context, f)
  })
}

/** The judge's considerations, each sealed on its own; a body without them (or malformed) as it is. */
const considerationsMapped = (
  context: IntegrityCheckpoint["conscience_context"],
  f: (field: string, value: string) => string
): IntegrityCheckpoint["conscience_context"] =>
  typeof context === "object" && context !== null && Array.isArray(context.considerations)
    ? {
        ...context,
        considerations: context.considerations.map(
          (note, i) => text(note, `conscience_context.considerations.${i}`, f) as string
        )
      }
    : context

export const traceFields: SealedTable<APTrace> = {
  table: "traces",
  idColumn: "trace_id",
  map: (body, f) =>
    typeof body.decision === "object" && body.decision !== null
      ? {
          ...body,
          decision: {
            ...body.decision,
            selection_reasoning: text(body.decision.selection_reasoning, "decision.selection_reasoning", f) as string
          }
        }
      : body
}

export const certificateFields: SealedTable<Certificate> = {
  table: "certificates",
  idColumn: "checkpoint_id",
  map: (body, f) =>
    typeof body.claims === "object" && body.claims !== null
      ? {
          ...body,
          claims: {
            ...body.claims,
            reasoning_summary: text(body.claims.reasoning_summary, "claims.reasoning_summary", f) as string
          }
        }
      : body
}

/** The additional data of one sealed field: table, field and row. */
export const fieldAad = (table: SealedTable<unknown>["table"], field: string, rowId: string): string =>
  `${table}.${field}:${rowId}`

/** `body` with its fields sealed under `key` for the row `rowId`. */
export const sealBody = <A>(spec: SealedTable<A>, key: SecretKey, rowId: string, body: A): A =>
  spec.map(body, (field, value) => seal(key, value, fieldAad(spec.table, field, rowId)))

/** A stored field this process cannot open; the message names the row, the field and the key, never the value. */
export class SealedFieldUnreadable extends Data.TaggedError("SealedFieldUnreadable")<{
  readonly message: string
}> {}

/** A row as read: its key column, the key id it was sealed under (NULL: clear, before 0014) and its body. */
export interface SealedRow<A> {
  readonly id: string
  readonly sealed_by: string | null
  readonly body: A
}

const unreadable = (
  table: string,
  field: string,
  rowId: string,
  value: string,
  keys: ReadonlyArray<SecretKey>
): string => {
  const keyId = sealedKeyId(value)
  const where = `the ${field} of ${table} row ${rowId}`
  if (keyId === undefined) return `${where} is not a sealed value of a known format`
  return keys.some((key) => key.keyId === keyId)
    ? `${where} does not open under key ${keyId}: altered, or moved from another row`
    : `${where} is sealed under key ${keyId}, which this process does not hold (CANDOR_SECRET_KEY must be the same on every process)`
}

/** The body with its fields opened (a clear row as it is), or why a field cannot be read. */
export const openBody = <A>(
  spec: SealedTable<A>,
  keys: ReadonlyArray<SecretKey>,
  row: SealedRow<A>
): Effect.Effect<A, SealedFieldUnreadable> => {
  if (row.sealed_by === null) return Effect.succeed(row.body)
  let failure: string | undefined
  const opened = spec.map(row.body, (field, value) => {
    if (failure !== undefined) return value
    const clear = open(keys, value, fieldAad(spec.table, field, row.id))
    if (clear === undefined) failure = unreadable(spec.table, field, row.id, value, keys)
    return clear ?? ""
  })
  return failure === undefined ? Effect.succeed(opened) : Effect.fail(new SealedFieldUnreadable({ message: failure }))
}

/** `openBody` of each row, in order. */
export const openBodies = <A>(
  spec: SealedTable<A>,
  keys: ReadonlyArray<SecretKey>,
  rows: ReadonlyArray<SealedRow<A>>
): Effect.Effect<ReadonlyArray<A>, SealedFieldUnreadable> => Effect.forEach(rows, (row) => openBody(spec, keys, row))

/** The three tables, for the passes that walk them all (bodies as stored, not typed further). */
const TABLES = [checkpointFields, traceFields, certificateFields] as unknown as ReadonlyArray<SealedTable<unknown>>

/** Rows per statement of the passes below: one batch is a few hundred kilobytes of JSON at most. */
export const SEAL_BATCH = 500

/**
 * Seals the rows written in clear before migration 0014, `batchSize` rows per statement (each an
 * UPDATE of that many rows, found through the partial index on `sealed_by is null`); returns how
 * many. Idempotent and safe beside a running store or a second process doing the same: a row is
 * only rewritten while it is still unsealed.
 */
export const sealLegacyFields = (
  sql: SqlClient.SqlClient,
  key: SecretKey,
  batchSize: number = SEAL_BATCH
): Effect.Effect<number, SqlError> =>
  Effect.gen(function* () {
    let sealed = 0
    for (const spec of TABLES) {
      const id = sql(spec.idColumn)
      for (;;) {
        const rows = yield* sql<{ id: string; body: unknown }>`
          select ${id} as id, body from ${sql(spec.table)} where sealed_by is null order by ${id} limit ${batchSize}`
        if (rows.length === 0) break
        const updated = yield* sql<{ id: string }>`
          update ${sql(spec.table)} t set body = r.body, sealed_by = ${key.keyId}
          from json_to_recordset(${json(rows.map((row) => ({ id: row.id, body: sealBody(spec, key, row.id, row.body) })))}::json)
            as r(id text, body json)
          where t.${id} = r.id and t.sealed_by is null
          returning t.${id} as id`
        sealed += updated.length
      }
    }
    if (sealed > 0)
      yield* Effect.log("reasoning-derived fields stored before 0014 sealed at rest").pipe(
        Effect.annotateLogs({ count: sealed, key_id: key.keyId })
      )
    return sealed
  })

/**
 * Re-seals every row of the three tables under `to` (clear rows too), `batchSize` rows per
 * transaction in key order: each batch moves to the new key entirely or not at all, and a failure
 * leaves the batches before it committed (every row then opens under either key: run again with
 * both). Rows already under `to` are skipped. Returns how many rows were re-sealed.
 */
export const resealFields = (
  sql: SqlClient.SqlClient,
  from: ReadonlyArray<SecretKey>,
  to: SecretKey,
  batchSize: number = SEAL_BATCH
): Effect.Effect<number, SqlError | SealedFieldUnreadable> =>
  Effect.gen(function* () {
    let resealed = 0
    for (const spec of TABLES) {
      const id = sql(spec.idColumn)
      let after = ""
      for (;;) {
        const batch = yield* transaction(
          sql,
          Effect.gen(function* () {
            const rows = yield* sql<SealedRow<unknown>>`
              select ${id} as id, sealed_by, body from ${sql(spec.table)}
              where ${id} > ${after} order by ${id} limit ${batchSize} for update`
            const moving = rows.filter((row) => row.sealed_by !== to.keyId)
            const bodies = yield* Effect.forEach(moving, (row) =>
              Effect.map(openBody(spec, from, row), (body) => ({ id: row.id, body: sealBody(spec, to, row.id, body) }))
            )
            if (bodies.length > 0)
              yield* sql`
                update ${sql(spec.table)} t set body = r.body, sealed_by = ${to.keyId}
                from json_to_recordset(${json(bodies)}::json) as r(id text, body json)
                where t.${id} = r.id`
            return { last: rows.at(-1)?.id, count: bodies.length }
          })
        )
        resealed += batch.count
        if (batch.last === undefined) break
        after = batch.last
      }
    }
    return resealed
  })
