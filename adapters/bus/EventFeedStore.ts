/**
 * The event feed on the store (the embedded default, no NATS): table `feed_events`
 * (migrations/0012_feed_events.ts), one row per event id, read in `seq` order.
 *
 * - `publish` hands the envelope to the process's one writer, which inserts what has queued up (up
 *   to `PUBLISH_BATCH`) in one transaction under an advisory lock (`on conflict (id) do nothing`),
 *   so sequences are committed in order and a reader that has seen `seq` n has seen everything
 *   below it; then it wakes the tailer. A publish resolves once its batch has committed.
 * - One tailer per process reads what was committed past its head (woken by local publishes,
 *   polling for other processes' on a shared PostgreSQL) and broadcasts each row with the sequence
 *   of the row before it. Readers replay from the table by pages, then follow the broadcast; a
 *   broadcast row whose predecessor they have not seen (their buffer overflowed, or they subscribed
 *   mid-way) makes them read the gap from the table first. So 100 clients cost one query per wake,
 *   not 100, and a slow client costs table reads, never memory.
 * - `consume(durable)`: one dispatcher per durable name and process reads after the cursor stored in
 *   `feed_cursors` and hands deliveries to whichever consumer takes them. The cursor advances over
 *   the acked prefix (written at most every `CURSOR_FLUSH`); unsettled deliveries come back after
 *   the ack wait, nak'd ones after their delay. A restart redelivers what was not acked.
 * - Events published more than `retentionMs` ago (7 days by default) are purged every hour.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { WebhookEnvelope } from "../../core/schema/WebhookEvents.js"
import { json, toCount } from "../store/Rows.js"
import { transaction } from "../store/Transaction.js"
import { BusError } from "./BusError.js"
import {
  defaultFeedOptions,
  EventFeed,
  type FeedDelivery,
  type FeedOptions,
  type FeedPosition,
  HOUR_MS,
  isDurableName
} from "./EventFeed.js"

export interface StoreFeedOptions extends FeedOptions {
  /** How often the tailer looks for rows other processes committed. */
  readonly pollMs: number
  /** Broadcast pages a slow reader may lag before it reads the gap from the table instead. */
  readonly broadcastPages: number
}

export const defaultStoreFeedOptions: StoreFeedOptions = {
  ...defaultFeedOptions,
  retentionMs: 7 * 24 * HOUR_MS,
  pollMs: 1_000,
  broadcastPages: 256
}

/** Serialises inserts (commit order = sequence order); distinct from the migrations' lock. */
const PUBLISH_LOCK = 7260412
const PAGE = 500
/** Envelopes written in one transaction at most. */
const PUBLISH_BATCH = 500
const CURSOR_FLUSH = "250 millis"
/** The tailer reads at most this often (what is published meanwhile is broadcast together). */
const TAIL_SPACING_MS = 20

interface FeedRow {
  readonly seq: number
  readonly envelope: WebhookEnvelope
}

/** A broadcast row, with the sequence of the one broadcast before it. */
interface Tailed extends FeedRow {
  readonly prev: number
}

interface Entry extends FeedRow {
  deliveries: number
  state: "ready" | "pending" | "done"
}

const feedError = (operation: string) => (cause: unknown) => new BusError({ operation, cause })

export const make = (
  options: Partial<StoreFeedOptions> = {}
): Effect.Effect<EventFeed["Type"], BusError, SqlClient.SqlClient | Scope.Scope> =>
  Effect.gen(function* () {
    const settings = { ...defaultStoreFeedOptions, ...options }
    const sql = yield* SqlClient.SqlClient
    const scope = yield* Effect.scope

    const rowsAfter = (after: number, before: number = Number.MAX_SAFE_INTEGER) =>
      sql<{ seq: unknown; envelope: WebhookEnvelope }>`
        select seq, envelope from feed_events where seq > ${after} and seq < ${before} order by seq limit ${PAGE}`.pipe(
        Effect.map((rows) => rows.map((row): FeedRow => ({ seq: toCount(row.seq), envelope: row.envelope }))),
        Effect.mapError(feedError("feed read"))
      )

    /** Every row after `after` (and before `before`), a page at a time. */
    const pages = (after: number, before?: number): Stream.Stream<FeedRow, BusError> =>
      Stream.paginateChunkEffect(after, (from) =>
        Effect.map(
          rowsAfter(from, before),
          (rows) =>
            [
              Chunk.unsafeFromArray(rows),
              rows.length < PAGE ? Option.none<number>() : Option.some(rows[rows.length - 1]!.seq)
            ] as const
        )
      )

    const maxSeq = sql<{ seq: unknown }>`select coalesce(max(seq), 0) as seq from feed_events`.pipe(
      Effect.map((rows) => toCount(rows[0]?.seq)),
      Effect.mapError(feedError("feed read"))
    )

    // ---- the tailer ----
    // A page is one element: each reader takes it with one queue operation, not one per row.
    const hub = yield* PubSub.sliding<ReadonlyArray<Tailed>>(settings.broadcastPages)
    const wake = yield* Queue.sliding<void>(1)
    let head = yield* maxSeq
    const tail: Effect.Effect<void, BusError> = Effect.gen(function* () {
      const rows = yield* rowsAfter(head)
      const tailed = rows.map((row): Tailed => {
        const prev = head
        head = row.seq
        return { ...row, prev }
      })
      // One publish per page: each reader wakes once and takes the page as one chunk, not a row at a time.
      if (tailed.length > 0) yield* PubSub.publish(hub, tailed)
      if (rows.length === PAGE) yield* tail
    })
    let tailedAt = 0
    yield* Effect.race(Queue.take(wake), Effect.sleep(settings.pollMs)).pipe(
      // At most one read per TAIL_SPACING_MS: under load, each reader takes one larger chunk rather than many small ones.
      Effect.zipRight(
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          const wait = tailedAt + TAIL_SPACING_MS - now
          tailedAt = Math.max(now, tailedAt + TAIL_SPACING_MS)
          return wait > 0 ? Effect.sleep(wait) : Effect.void
        })
      ),
      Effect.zipRight(tail),
      Effect.catchAll((error) =>
        Effect.logWarning("event feed tail failed").pipe(Effect.annotateLogs({ error: error.message }))
      ),
      Effect.forever,
      Effect.forkIn(scope)
    )

    // ---- publishing: group commit, one writer per process ----
    const pending = yield* Queue.unbounded<{
      readonly envelope: WebhookEnvelope
      readonly done: Deferred.Deferred<void, BusError>
    }>()
    const insert = (envelopes: ReadonlyArray<WebhookEnvelope>, publishedAt: string) =>
      transaction(
        sql,
        Effect.zipRight(
          sql`select pg_advisory_xact_lock(${PUBLISH_LOCK}) as locked`,
          sql`insert into feed_events (id, type, org_id, agent_id, created_at, published_at, envelope)
            select r.id, r.type, r.org_id, r.agent_id, r.created_at, ${publishedAt}::timestamptz, r.envelope
            from json_to_recordset(${json(
              envelopes.map((envelope, ord) => ({
                ord,
                id: envelope.id,
                type: envelope.type,
                org_id: envelope.org_id,
                agent_id: envelope.agent_id ?? null,
                created_at: envelope.created_at,
                envelope
              }))
            )}::json)
              as r(ord integer, id text, type text, org_id text, agent_id text, created_at timestamptz, envelope json)
            order by r.ord
            on conflict (id) do nothing`
        )
      ).pipe(Effect.mapError(feedError("feed publish")))
    yield* Effect.gen(function* () {
      const batch = yield* Queue.takeBetween(pending, 1, PUBLISH_BATCH)
      const now = new Date(yield* Clock.currentTimeMillis).toISOString()
      const exit = yield* Effect.exit(
        Effect.asVoid(insert(Chunk.toReadonlyArray(Chunk.map(batch, (p) => p.envelope)), now))
      )
      for (const p of batch) yield* Deferred.done(p.done, exit)
      yield* Queue.offer(wake, undefined)
    }).pipe(Effect.forever, Effect.forkIn(scope))

    /** Durable once its batch has committed; concurrent publishes share one transaction. */
    const publish: EventFeed["Type"]["publish"] = (envelope) =>
      Effect.flatMap(Deferred.make<void, BusError>(), (done) =>
        Effect.zipRight(Queue.offer(pending, { envelope, done }), Deferred.await(done))
      )

    /** The sequence a position reads after. */
    const startOf = (from: FeedPosition): Effect.Effect<number, BusError> => {
      switch (from._tag) {
        case "Now":
          // The table's, not the tailer's head: a row committed but not yet broadcast is before "now".
          return maxSeq
        case "After":
          // An id the feed no longer holds (or never did): from the oldest kept.
          return sql<{ seq: unknown }>`select seq from feed_events where id = ${from.id}`.pipe(
            Effect.map((rows) => (rows.length === 0 ? 0 : toCount(rows[0]!.seq))),
            Effect.mapError(feedError("feed read"))
          )
        case "Since":
          return sql<{ seq: unknown }>`
            select min(seq) - 1 as seq from feed_events where published_at >= ${from.at.toISOString()}::timestamptz`.pipe(
            Effect.flatMap((rows) =>
              rows[0]?.seq === null || rows[0]?.seq === undefined ? maxSeq : Effect.succeed(toCount(rows[0].seq))
            ),
            Effect.mapError(feedError("feed read"))
          )
      }
    }

    /** Replay after `start`, then the broadcast, in sequence order, each row once. */
    const readAfter = (start: number): Effect.Effect<Stream.Stream<FeedRow, BusError>, never, Scope.Scope> =>
      Effect.map(PubSub.subscribe(hub), (live) => {
        let last = start
        // Decided as each broadcast row is taken (not when it has gone downstream, which may be
        // several rows later): a row is followed only if it is new, after its gap when it has one.
        const following = Stream.fromQueue(live).pipe(
          Stream.chunks,
          Stream.flatMap((chunk) => {
            // What arrived together goes on together (one chunk), gaps read from the table in between.
            const parts: Array<Stream.Stream<FeedRow, BusError>> = []
            let run: Array<FeedRow> = []
            for (const page of chunk) {
              for (const row of page) {
                if (row.seq <= last) continue
                const from = last
                last = row.seq
                if (row.prev > from) {
                  if (run.length > 0) parts.push(Stream.fromChunk(Chunk.unsafeFromArray(run)))
                  run = []
                  parts.push(pages(from, row.seq))
                }
                run.push(row)
              }
            }
            if (run.length > 0) parts.push(Stream.fromChunk(Chunk.unsafeFromArray(run)))
            return parts.length === 1 ? parts[0]! : Stream.concatAll(Chunk.unsafeFromArray(parts))
          })
        )
        const replay = Stream.suspend(() => pages(start)).pipe(
          Stream.tap((row) => Effect.sync(() => void (last = row.seq)))
        )
        return Stream.concat(replay, following)
      })

    const read: EventFeed["Type"]["read"] = (from) =>
      Effect.flatMap(startOf(from), (start) =>
        Effect.map(readAfter(start), (rows) => Stream.map(rows, (row) => row.envelope))
      )

    // ---- durable consumers ----
    /** One per durable name: the next delivery, shared by every consumer of that name in this process. */
    const dispatchers = new Map<string, Effect.Effect<FeedDelivery>>()
    const creating = yield* Effect.makeSemaphore(1)

    const makeDispatcher = (durable: string) =>
      Effect.gen(function* () {
        const ready = yield* Queue.unbounded<Entry>()
        const permits = yield* Effect.makeSemaphore(settings.maxAckPending)
        const cursor = yield* sql<{ seq: unknown }>`select seq from feed_cursors where name = ${durable}`.pipe(
          Effect.map((rows) => (rows.length === 0 ? 0 : toCount(rows[0]!.seq))),
          Effect.mapError(feedError("feed consume"))
        )
        /** Dispatched, not yet acked, in sequence order (a Map keeps insertion order). */
        const outstanding = new Map<number, Entry>()
        let dispatched = cursor
        let stored = cursor
        const flush = Effect.suspend(() => {
          const upTo = outstanding.size === 0 ? dispatched : outstanding.keys().next().value! - 1
          if (upTo <= stored) return Effect.void
          return Effect.flatMap(
            Clock.currentTimeMillis,
            (now) =>
              sql`insert into feed_cursors (name, seq, updated_at)
                values (${durable}, ${upTo}, ${new Date(now).toISOString()}::timestamptz)
                on conflict (name) do update set seq = greatest(feed_cursors.seq, excluded.seq), updated_at = excluded.updated_at`
          ).pipe(
            Effect.map(() => void (stored = Math.max(stored, upTo))),
            Effect.catchAll((error) =>
              Effect.logWarning("event feed cursor not stored").pipe(
                Effect.annotateLogs({ durable, error: error.message })
              )
            )
          )
        })
        yield* flush.pipe(Effect.repeat(Schedule.spaced(CURSOR_FLUSH)), Effect.forkIn(scope))
        yield* Scope.addFinalizer(scope, flush)
        const rows = yield* Scope.extend(readAfter(cursor), scope)
        yield* rows.pipe(
          Stream.runForEach((row) =>
            Effect.zipRight(
              permits.take(1),
              Effect.suspend(() => {
                const entry: Entry = { ...row, deliveries: 0, state: "ready" }
                outstanding.set(row.seq, entry)
                dispatched = row.seq
                return Queue.offer(ready, entry)
              })
            )
          ),
          Effect.catchAll((error) =>
            Effect.logError("event feed dispatcher stopped").pipe(
              Effect.annotateLogs({ durable, error: error.message })
            )
          ),
          Effect.forkIn(scope)
        )

        /** Settles delivery `count` if it is still the entry's pending one. */
        const settle = (entry: Entry, count: number) => {
          if (entry.state !== "pending" || entry.deliveries !== count) return false
          entry.state = "ready"
          return true
        }
        const later = (effect: Effect.Effect<unknown>, delayMs: number) =>
          Effect.asVoid(Effect.forkIn(Effect.delay(effect, delayMs), scope))

        return Effect.flatMap(Queue.take(ready), (entry) => {
          entry.deliveries++
          entry.state = "pending"
          const count = entry.deliveries
          const delivery: FeedDelivery = {
            envelope: entry.envelope,
            deliveryCount: count,
            ack: Effect.suspend(() => {
              if (!settle(entry, count)) return Effect.void
              entry.state = "done"
              outstanding.delete(entry.seq)
              return permits.release(1)
            }),
            nak: (delayMs) =>
              Effect.suspend(() => {
                if (!settle(entry, count)) return Effect.void
                const again = Queue.offer(ready, entry)
                return delayMs === undefined || delayMs <= 0 ? Effect.asVoid(again) : later(again, delayMs)
              })
          }
          // The ack wait: a delivery still pending when it ends is delivered again.
          const expire = Effect.suspend(() => (settle(entry, count) ? Queue.offer(ready, entry) : Effect.void))
          return Effect.as(later(expire, settings.ackWaitMs), delivery)
        })
      })

    const dispatcher = (durable: string): Effect.Effect<Effect.Effect<FeedDelivery>, BusError> =>
      creating.withPermits(1)(
        Effect.suspend(() => {
          const existing = dispatchers.get(durable)
          if (existing !== undefined) return Effect.succeed(existing)
          return Effect.tap(makeDispatcher(durable), (next) => Effect.sync(() => dispatchers.set(durable, next)))
        })
      )

    const consume: EventFeed["Type"]["consume"] = (durable) =>
      isDurableName(durable)
        ? Stream.unwrap(Effect.map(dispatcher(durable), (next) => Stream.repeatEffect(next)))
        : Stream.fail(
            new BusError({ operation: "feed consume", cause: `bad durable name ${durable}`, permanent: true })
          )

    // ---- retention: at start, then every hour ----
    const purge = Effect.flatMap(
      Clock.currentTimeMillis,
      (now) =>
        sql`delete from feed_events where published_at < ${new Date(now - settings.retentionMs).toISOString()}::timestamptz`
    ).pipe(
      Effect.catchAll((error) =>
        Effect.logWarning("event feed purge failed").pipe(Effect.annotateLogs({ error: error.message }))
      )
    )
    yield* purge
    yield* purge.pipe(Effect.delay("1 hour"), Effect.forever, Effect.forkIn(scope))

    return EventFeed.of({ publish, read, consume })
  })

export const layer = (options: Partial<StoreFeedOptions> = {}): Layer.Layer<EventFeed, BusError, SqlClient.SqlClient> =>
  Layer.scoped(EventFeed, make(options))
