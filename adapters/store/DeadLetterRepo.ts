/**
 * Dead letters on the store (migrations/0026_dead_letters.ts): the record of every gateway event the
 * pipeline gave up on, never its payload. Written only by the workers' recorder
 * (streams/DeadLetters.ts), in the transaction that also writes its event; read, newest first and a
 * bounded page at a time, by the service-role key's route and by an organization's Owners (the dead
 * letters naming the organization's agents).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { DeadLetter, type DeadLetterPage } from "../../core/schema/DeadLetter.js"
import { type StoreError, storeError } from "./Store.js"

export interface DeadLetterQuery {
  /** Only rows recorded before this cursor (a page's `next_before`). */
  readonly before?: string | undefined
  /** At most this many (the API bounds it). */
  readonly limit: number
}

export class DeadLetterRepo extends Context.Tag("candor/adapters/store/DeadLetterRepo")<
  DeadLetterRepo,
  {
    /** The organization the agent is claimed into, else null. */
    readonly orgOfAgent: (agentId: string) => Effect.Effect<string | null, StoreError>
    /** Stores the entry unless its id is stored already; true when it was new. Runs in the caller's transaction. */
    readonly insert: (entry: DeadLetter) => Effect.Effect<boolean, StoreError>
    /** Every dead letter, newest recorded first. */
    readonly page: (query: DeadLetterQuery) => Effect.Effect<DeadLetterPage, StoreError>
    /** The dead letters naming the organization's agents (as claimed now), newest recorded first. */
    readonly orgPage: (orgId: string, query: DeadLetterQuery) => Effect.Effect<DeadLetterPage, StoreError>
  }
>() {}

/** `pg` answers int8 as a string and timestamptz as a Date, PGlite a number and a Date: both decode. */
const Count = Schema.Union(Schema.Number, Schema.NumberFromString)
const Time = Schema.Union(Schema.DateFromSelf, Schema.Date)

/** A row as either driver answers it, decoded into its cursor and the published shape. */
const DeadLetterRow = Schema.Struct({
  seq: Schema.Union(Schema.String, Schema.Number.pipe(Schema.int())),
  dead_letter_id: Schema.String,
  subject: Schema.String,
  agent_id: Schema.NullOr(Schema.String),
  reason: Schema.String,
  deliveries: Count,
  dead_lettered_at: Time
})
const decodeRows = Schema.decodeUnknown(Schema.Array(DeadLetterRow))
const decodeEntry = Schema.decodeUnknown(DeadLetter)

const COLUMNS = "seq, dead_letter_id, subject, agent_id, reason, deliveries, dead_lettered_at"

/** The page of `limit` from `limit + 1` rows: the extra row only says that there is a next page. */
const pageOf = (rows: unknown, limit: number) =>
  Effect.gen(function* () {
    const decoded = yield* decodeRows(rows)
    const shown = decoded.slice(0, limit)
    const entries = yield* Effect.forEach(shown, (row) =>
      decodeEntry({
        dead_letter_id: row.dead_letter_id,
        subject: row.subject,
        agent_id: row.agent_id,
        reason: row.reason,
        deliveries: row.deliveries,
        dead_lettered_at: row.dead_lettered_at.toISOString()
      })
    )
    const last = shown[shown.length - 1]
    return {
      dead_letters: entries,
      next_before: decoded.length > limit && last !== undefined ? String(last.seq) : null
    } satisfies DeadLetterPage
  })

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const columns = sql.literal(COLUMNS)
  const below = (query: DeadLetterQuery) =>
    query.before === undefined ? sql`` : sql`and seq < ${query.before}::bigint`

  return DeadLetterRepo.of({
    orgOfAgent: (agentId) =>
      sql<{ readonly org_id: string | null }>`select org_id from agent_claims where agent_id = ${agentId}`.pipe(
        Effect.flatMap((rows) =>
          Schema.decodeUnknown(Schema.Array(Schema.Struct({ org_id: Schema.NullOr(Schema.String) })))(rows)
        ),
        Effect.map((rows) => rows[0]?.org_id ?? null),
        storeError("deadLetterOrg")
      ),
    insert: (entry) =>
      sql`
        insert into dead_letters (dead_letter_id, subject, agent_id, reason, deliveries, dead_lettered_at)
        values (${entry.dead_letter_id}, ${entry.subject}, ${entry.agent_id}, ${entry.reason}, ${entry.deliveries},
          ${entry.dead_lettered_at}::timestamptz)
        on conflict (dead_letter_id) do nothing
        returning seq`.pipe(
        Effect.map((rows) => rows.length > 0),
        storeError("recordDeadLetter")
      ),
    page: (query) =>
      sql`select ${columns} from dead_letters where true ${below(query)} order by seq desc limit ${query.limit + 1}`.pipe(
        Effect.flatMap((rows) => pageOf(rows, query.limit)),
        storeError("deadLetters")
      ),
    // Per agent of the organization, its newest rows below the cursor (one index range each), then the
    // newest of those: a page reads at most limit + 1 rows per agent, however many dead letters there are.
    orgPage: (orgId, query) =>
      sql`
        select d.* from agent_claims c
        cross join lateral (
          select ${columns} from dead_letters
          where agent_id = c.agent_id ${below(query)}
          order by seq desc limit ${query.limit + 1}
        ) d
        where c.org_id = ${orgId}
        order by d.seq desc limit ${query.limit + 1}`.pipe(
        Effect.flatMap((rows) => pageOf(rows, query.limit)),
        storeError("orgDeadLetters")
      )
  })
})

export const layer: Layer.Layer<DeadLetterRepo, never, SqlClient.SqlClient> = Layer.effect(DeadLetterRepo, make)
