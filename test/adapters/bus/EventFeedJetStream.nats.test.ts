/**
 * The feed on the real NATS server: the shared conformance suite, then what only JetStream shows:
 * its stream and subjects as in-cluster subscribers see them, and idempotence past the duplicate window.
 */
import { jetstream, jetstreamManager } from "@nats-io/jetstream"
import { Kvm } from "@nats-io/kv"
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { EventFeed } from "../../../adapters/bus/EventFeed.js"
import * as EventFeedJetStream from "../../../adapters/bus/EventFeedJetStream.js"
import { NatsConnection } from "../../../adapters/bus/NatsConnection.js"
import { feedIndexBucket, feedStreamName } from "../../../adapters/bus/Subjects.js"
import { describeIntegration } from "../../support/Integration.js"
import { feedConformance, testEvent } from "./EventFeedConformance.js"
import { natsForPrefix, uniquePrefix } from "./NatsSupport.js"

feedConformance(
  "JetStream",
  (options) => EventFeedJetStream.layer(options).pipe(Layer.provide(natsForPrefix(options.prefix))),
  ["nats"]
)

describeIntegration("nats", "EventFeedJetStream", () => {
  it.live("stores each event once on <prefix>.feed.<org>.<agent>.<type>, msg id = envelope id, 48 h", () => {
    const prefix = uniquePrefix("feed")
    return Effect.gen(function* () {
      const feed = yield* EventFeed
      const nc = yield* NatsConnection
      const event = testEvent(prefix, 0, "agt-plain")
      const dotted = testEvent(prefix, 1)
      yield* feed.publish(event)
      yield* feed.publish(dotted)
      yield* feed.publish(event)
      const jsm = yield* Effect.promise(() => jetstreamManager(nc))
      const info = yield* Effect.promise(() => jsm.streams.info(feedStreamName(prefix)))
      expect(info.state.messages).toBe(2)
      expect(info.config.max_age).toBe(48 * 3600 * 1e9)
      const first = yield* Effect.promise(() => jsm.streams.getMessage(feedStreamName(prefix), { seq: 1 }))
      expect(first?.subject).toBe(`${prefix}.feed.org_feed.agt-plain.agent.paused`)
      expect(first?.header.get("Nats-Msg-Id")).toBe(event.id)
      expect(first?.json()).toEqual(event)
      const second = yield* Effect.promise(() => jsm.streams.getMessage(feedStreamName(prefix), { seq: 2 }))
      expect(second?.subject).toBe(
        `${prefix}.feed.org_feed.=${Buffer.from("agt.one").toString("base64url")}.agent.paused`
      )
      // A subscriber filtering by type (type last) sees the event.
      const js = jetstream(nc)
      const consumer = yield* Effect.promise(() =>
        js.consumers.get(feedStreamName(prefix), { filter_subjects: `${prefix}.feed.*.*.agent.>` })
      )
      const m = yield* Effect.promise(() => consumer.next({ expires: 5_000 }))
      expect(m?.json()).toEqual(event)
      yield* Effect.promise(() => consumer.delete())
    }).pipe(
      Effect.provide(
        EventFeedJetStream.layer({ prefix, duplicateWindowMs: 1_000 }).pipe(Layer.provideMerge(natsForPrefix(prefix)))
      )
    )
  })

  it.live("asks the index only for an envelope older than half the duplicate window", () => {
    const prefix = uniquePrefix("feed-fresh")
    return Effect.gen(function* () {
      const feed = yield* EventFeed
      const nc = yield* NatsConnection
      const jsm = yield* Effect.promise(() => jetstreamManager(nc))
      const stored = () =>
        Effect.map(
          Effect.promise(() => jsm.streams.info(feedStreamName(prefix))),
          (info) => info.state.messages
        )
      // Both ids indexed as if published already, though the stream has neither.
      const old = { ...testEvent(prefix, 0), created_at: new Date(Date.now() - 3_600_000).toISOString() }
      const fresh = testEvent(prefix, 1)
      const index = yield* Effect.promise(() => new Kvm(nc).open(feedIndexBucket(prefix)))
      yield* Effect.promise(() => index.put(old.id, "1"))
      yield* Effect.promise(() => index.put(fresh.id, "1"))
      // The old one is taken as published: a retry past the window must not repeat it.
      yield* feed.publish(old)
      expect(yield* stored()).toBe(0)
      // The fresh one, made within the window, goes to JetStream unasked, which drops a repeat.
      yield* feed.publish(fresh)
      yield* feed.publish(fresh)
      expect(yield* stored()).toBe(1)
    }).pipe(Effect.provide(EventFeedJetStream.layer({ prefix }).pipe(Layer.provideMerge(natsForPrefix(prefix)))))
  })
})
