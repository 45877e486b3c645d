/**
 * Normalising what the two drivers hand back: `pg` returns int8 as a string and PGlite as a number,
 * timestamps come back as `Date`, bytea is never read (hashes are selected as hex).
 */

/** An int8 / numeric column (count, position, size) as a JS number; all of ours are safe integers. */
export const toCount = (value: unknown): number => (value === null || value === undefined ? 0 : Number(value))

/** A timestamptz column as an ISO 8601 string. */
export const toIso = (value: unknown): string =>
  value instanceof Date ? value.toISOString() : new Date(String(value)).toISOString()

/** A JSON parameter, expanded in SQL by `json_to_recordset` or cast to `json`/`jsonb`. */
export const json = (value: unknown): string => JSON.stringify(value)
