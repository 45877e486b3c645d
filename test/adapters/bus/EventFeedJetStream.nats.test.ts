/**
 * The feed on the real NATS server: the shared conformance suite, then what only JetStream shows:
 * its stream and subjects as in-cluster subscribers see them, and idempotence past the duplicate window.
 */
import { jetstream, jetstreamManager } from "@nats-io/jetstream"
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { EventFeed } from "../../../adapters/bus/EventFeed.js"
import * as EventFeedJetStream from "../../../adapters/bus/EventFeedJetStream.js"
import { NatsConnection } from "../../../adapters/bus/NatsConnection.js"
import { feedStreamName } from "../../../adapters/bus/Subjects.js"
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
})
