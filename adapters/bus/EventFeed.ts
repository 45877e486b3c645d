/**
 * The feed of catalogue events (core/schema/WebhookEvents.ts): every event, in one order, kept at
 * least 24 hours, read by the live stream (`GET /v1/stream`) and consumed by the webhook fan-out.
 *
 * - `publish` is durable and idempotent on the envelope id.
 * - `read` replays from a position, then follows live, in the feed's order: a client that resumes
 *   after the last id it saw misses nothing and sees nothing twice.
 * - `consume` is a durable, shared consumption: each event goes to one of the processes consuming
 *   under the same name, at least once, until acked.
 *
 * On a split deployment the feed is a JetStream stream; on the embedded default, the store's event
 * table with an in-process signal.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"
import type { WebhookEnvelope } from "../../core/schema/WebhookEvents.js"
import type { BusError } from "./BusError.js"

export type FeedPosition =
  /** After the event with this id (`Last-Event-ID`); an id the feed no longer holds reads from the oldest kept. */
  | { readonly _tag: "After"; readonly id: string }
  /** Events created at or after this time (`?since=`). */
  | { readonly _tag: "Since"; readonly at: Date }
  /** Only what is published from now on. */
  | { readonly _tag: "Now" }

export interface FeedDelivery {
  readonly envelope: WebhookEnvelope
  readonly ack: Effect.Effect<void, BusError>
  /** Deliver again, after `delayMs` when given. */
  readonly nak: (delayMs?: number) => Effect.Effect<void, BusError>
}

export class EventFeed extends Context.Tag("candor/adapters/bus/EventFeed")<
  EventFeed,
  {
    readonly publish: (envelope: WebhookEnvelope) => Effect.Effect<void, BusError>
    readonly read: (from: FeedPosition) => Stream.Stream<WebhookEnvelope, BusError>
    readonly consume: (durable: string) => Stream.Stream<FeedDelivery, BusError>
  }
>() {}
