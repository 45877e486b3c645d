/**
 * GET /v1/stream on the JetStream feed (a split deployment): the API's reader and a second reader on
 * its own connection (as another API process would hold) see the same events in the same order; a
 * client that reconnects with Last-Event-ID gets exactly what it missed, from either reader.
 */
import { expect } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import { EventFeed } from "../../adapters/bus/EventFeed.js"
import * as EventFeedJetStream from "../../adapters/bus/EventFeedJetStream.js"
import { NatsConnection } from "../../adapters/bus/NatsConnection.js"
import { newEnvelope } from "../../core/Events.js"
import { layerIntegration } from "../support/Integration.js"
import { natsForPrefix, testNatsUrl, uniquePrefix, waitUntil } from "../adapters/bus/NatsSupport.js"
import { connectStream, type StreamClient } from "./StreamClient.js"
import * as Harness from "./Support.js"
import { ApiHarness } from "./Support.js"

const prefix = uniquePrefix("stream")

/** The API's feed: JetStream on its own connection, the prefix's streams removed afterwards. */
const apiFeed = EventFeedJetStream.layer({ prefix }).pipe(Layer.provide(natsForPrefix(prefix)))

/** The other process's feed: another connection on the same stream. */
class OtherFeed extends Effect.Tag("test/OtherFeed")<OtherFeed, EventFeed["Type"]>() {}
const otherFeed = Layer.effect(OtherFeed, EventFeed).pipe(
  Layer.provide(EventFeedJetStream.layer({ prefix })),
  Layer.provide(NatsConnection.layer(testNatsUrl(), { name: "candor-test-other-api" }).pipe(Layer.orDie)),
  Layer.orDie
)

const ids = (client: StreamClient) => client.events.map((e) => e.id)

layerIntegration("nats", Layer.merge(Harness.layer({ feed: apiFeed }), otherFeed), {
  timeout: "120 seconds",
  excludeTestServices: true
})("GET /v1/stream on JetStream", (it) => {
  it.scoped("two readers, one order; resume by id misses nothing and repeats nothing", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const other = yield* OtherFeed
      const { member, orgAgent, orgId } = api.fixtures
      const event = () =>
        newEnvelope({
          type: "agent.paused",
          source: randomUUID(),
          org_id: orgId,
          agent_id: orgAgent,
          created_at: new Date(),
          data: {}
        })
      const url = `${api.url}/v1/stream?agent_id=${orgAgent}`
      const client = yield* connectStream(url, { token: member.token })
      const second = yield* other.read({ _tag: "Now" })
      const firstBatch = Array.from({ length: 10 }, event)
      const reader = yield* Effect.fork(
        second.pipe(Stream.take(15), Stream.runCollect, Effect.map(Chunk.toReadonlyArray), Effect.timeout("30 seconds"))
      )
      // Published by "the workers", through the second process's feed.
      yield* Effect.forEach(firstBatch, other.publish, { discard: true })
      yield* waitUntil(
        "the first batch",
        Effect.sync(() => client.events.length >= 10)
      ).pipe(Effect.orDie)
      expect(ids(client)).toEqual(firstBatch.map((e) => e.id))
      const lastSeen = client.lastEventId()!
      client.close()
      const missed = Array.from({ length: 5 }, event)
      yield* Effect.forEach(missed, other.publish, { discard: true })
      // Both readers, in the same order.
      expect((yield* Fiber.join(reader)).map((e) => e.id)).toEqual([...firstBatch, ...missed].map((e) => e.id))
      const again = yield* connectStream(url, { token: member.token, headers: { "last-event-id": lastSeen } })
      const live = event()
      yield* other.publish(live)
      yield* waitUntil(
        "the replay and the live event",
        Effect.sync(() => ids(again).includes(live.id))
      ).pipe(Effect.orDie)
      expect(ids(again)).toEqual([...missed, live].map((e) => e.id))
      // The other process resumes after the same id to the same events.
      const resumed = yield* other.read({ _tag: "After", id: lastSeen })
      const replay = yield* resumed.pipe(Stream.take(6), Stream.runCollect, Effect.timeout("30 seconds"))
      expect(Chunk.toReadonlyArray(replay).map((e) => e.id)).toEqual([...missed, live].map((e) => e.id))
    })
  )
})
