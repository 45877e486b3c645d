/**
 * The store feed (embedded default) on PGlite: the shared conformance suite, then what is its own:
 * a durable cursor that survives the process, and retention.
 */
import { describe, expect, it } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { EventFeed } from "../../../adapters/bus/EventFeed.js"
import * as EventFeedStore from "../../../adapters/bus/EventFeedStore.js"
import type { WebhookEnvelope } from "../../../core/schema/WebhookEvents.js"
import { feedConformance, testEvent } from "./EventFeedConformance.js"
import { migratedPglite } from "../../support/PgliteTemplate.js"

const database = () => migratedPglite.pipe(Layer.orDie)

feedConformance("store", (options) => EventFeedStore.layer(options).pipe(Layer.provide(database())))

describe("EventFeedStore", () => {
  it.live("a durable consumer resumes after its stored cursor in a new process", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const run = "cursor"
      // The first "process": publishes five, acks three, stops (its cursor is flushed on close).
      yield* Effect.gen(function* () {
        const feed = yield* EventFeed
        for (let i = 0; i < 5; i++) yield* feed.publish(testEvent(run, i))
        yield* feed.consume("webhooks").pipe(
          Stream.tap((d) => d.ack),
          Stream.take(3),
          Stream.runDrain
        )
      }).pipe(Effect.provide(EventFeedStore.layer()))
      const cursor = yield* sql<{ seq: unknown }>`select seq from feed_cursors where name = 'webhooks'`
      expect(Number(cursor[0]?.seq)).toBe(3)
      // The second: gets 3 and 4 only.
      const rest = yield* Effect.gen(function* () {
        const feed = yield* EventFeed
        return yield* feed.consume("webhooks").pipe(
          Stream.tap((d) => d.ack),
          Stream.take(2),
          Stream.runCollect,
          Effect.timeout("10 seconds")
        )
      }).pipe(Effect.provide(EventFeedStore.layer()))
      expect(Chunk.toReadonlyArray(rest).map((d) => (d.envelope.data as { i: number }).i)).toEqual([3, 4])
    }).pipe(Effect.provide(database()))
  )

  it.live("a reader more than the broadcast buffer behind reads what it missed from the table, in order, once", () =>
    Effect.gen(function* () {
      const feed = yield* EventFeed
      const slow = yield* Stream.toPull(yield* feed.read({ _tag: "Now" }))
      const fast = yield* feed.read({ _tag: "Now" })
      const n = 5_000
      yield* feed.publish(testEvent("gap", -1))
      // The slow reader takes the first event (it is following the broadcast now), then stalls.
      const first = Chunk.toReadonlyArray(yield* slow)
      expect(first.map((e) => e.data)).toEqual([{ i: -1 }])
      yield* Effect.forEach(
        Array.from({ length: n }, (_, i) => i),
        (i) => feed.publish(testEvent("gap", i)),
        { concurrency: 500, discard: true }
      )
      // Once the fast reader has them all, all were broadcast (pages of at most 500, so at least ten):
      // the slow one kept only the last two pages.
      const expected = yield* fast.pipe(Stream.take(n + 1), Stream.runCollect, Effect.timeout("60 seconds"))
      const got: Array<WebhookEnvelope> = [...first]
      while (got.length < n + 1) got.push(...Chunk.toReadonlyArray(yield* Effect.timeout(slow, "20 seconds")))
      expect(got.map((e) => e.id)).toEqual(Chunk.toReadonlyArray(expected).map((e) => e.id))
    }).pipe(Effect.scoped, Effect.provide(EventFeedStore.layer({ broadcastPages: 2 })), Effect.provide(database()))
  )

  it.live("purges events older than its retention", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`insert into feed_events (id, type, org_id, agent_id, created_at, published_at, envelope)
        values ('evt-old', 'agent.paused', null, null, now() - interval '8 days', now() - interval '8 days', '{}'::json)`
      yield* Effect.gen(function* () {
        const feed = yield* EventFeed
        yield* feed.publish(testEvent("purge", 0))
      }).pipe(Effect.provide(EventFeedStore.layer()))
      const ids = yield* sql<{ id: string }>`select id from feed_events order by seq`
      expect(ids.map((r) => r.id)).toEqual([testEvent("purge", 0).id])
    }).pipe(Effect.provide(database()))
  )
})
