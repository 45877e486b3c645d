/**
 * Normalising what the two drivers hand back: `pg` returns int8 as a string and PGlite as a number,
 * timestamps come back as `Date`, bytea is never read (hashes are selected as hex).
 *
 * Rows are decoded with a Schema (`decodeAll`, `decodeFirst`), never cast: a row schema is the
 * published shape's fields (core/schema) with the driver's columns (`IsoTimestamp`, `Count`) in
 * place of theirs, so a column that changes type fails the read as a StoreError, not a response later.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/** An int8 / numeric column (count, position, size) as a JS number; all of ours are safe integers. */
export const toCount = (value: unknown): number => (value === null || value === undefined ? 0 : Number(value))

/** A timestamptz column as an ISO 8601 string. */
export const toIso = (value: unknown): string =>
  value instanceof Date ? value.toISOString() : new Date(String(value)).toISOString()

/** A timestamptz column as the ISO 8601 string the API publishes (both drivers answer a `Date`). */
export const IsoTimestamp = Schema.transform(Schema.Union(Schema.DateFromSelf, Schema.String), Schema.String, {
  strict: true,
  decode: toIso,
  encode: (iso) => iso
})

/** An int8 / numeric column as a number (`pg` answers a string, PGlite a number). */
export const Count = Schema.transform(
  Schema.Union(Schema.Number, Schema.String, Schema.BigIntFromSelf),
  Schema.Number,
  {
    strict: true,
    decode: (value) => Number(value),
    encode: (value) => value
  }
)

/** Every row decoded with `schema`. */
export const decodeAll = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknown(Schema.Array(schema))
  return (rows: ReadonlyArray<unknown>) => decode(rows)
}

/** The first row decoded with `schema`; undefined when there is none. */
export const decodeFirst = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknown(schema)
  return (rows: ReadonlyArray<unknown>) => (rows[0] === undefined ? Effect.succeed(undefined) : decode(rows[0]))
}

/**
 * The row a query returns for a domain type A: the columns in K (int8, numeric, timestamptz) arrive in the
 * driver's own type and are read with toCount / toIso; the others arrive as A declares them.
 */
export type Columns<A, K extends keyof A> = Omit<A, K> & { readonly [P in K]: unknown }

/**
 * A row mapper that accepts the driver's untyped rows: the SQL that selects the columns is what guarantees R,
 * as it does for `sql<R>`; this only names R once, beside the mapper.
 */
export const fromRow =
  <R, A>(of: (row: R) => A) =>
  (row: unknown): A =>
    of(row as R)

/** A JSON parameter, expanded in SQL by `json_to_recordset` or cast to `json`/`jsonb`. */
export const json = (value: unknown): string => JSON.stringify(value)
