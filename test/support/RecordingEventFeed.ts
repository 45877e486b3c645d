/**
 * An `EventFeed` that records what is published, for tests of producers that publish directly
 * (the gateway): `published` holds the envelopes in order, `take` waits for the next one. It only
 * records: reading and consuming are not what these tests exercise.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import { EventFeed } from "../../adapters/bus/EventFeed.js"
import type { WebhookEnvelope } from "../../core/schema/WebhookEvents.js"

export class RecordedEvents extends Context.Tag("candor/test/support/RecordedEvents")<
  RecordedEvents,
  {
    readonly published: Array<WebhookEnvelope>
    /** The next envelope published (in publish order), waiting for it. */
    readonly take: Effect.Effect<WebhookEnvelope>
  }
>() {}

/** The recording feed and its record. `fail`: every publish fails (a feed that is down). */
export const layer = (options: { readonly fail?: boolean } = {}) =>
  Layer.effectContext(
    Effect.gen(function* () {
      const queue = yield* Queue.unbounded<WebhookEnvelope>()
      const published: Array<WebhookEnvelope> = []
      const feed: EventFeed["Type"] = {
        publish: (envelope) =>
          options.fail === true
            ? Effect.dieMessage("feed unavailable")
            : Effect.sync(() => void published.push(envelope)).pipe(Effect.zipRight(Queue.offer(queue, envelope))),
        read: () => Effect.succeed(Stream.empty),
        consume: () => Stream.empty
      }
      return Context.make(EventFeed, feed).pipe(Context.add(RecordedEvents, { published, take: Queue.take(queue) }))
    })
  )
