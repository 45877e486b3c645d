/**
 * The feed of catalogue events (core/schema/WebhookEvents.ts): every event, in one order, kept at
 * least 24 hours, read by the live stream (`GET /v1/stream`) and consumed by the webhook fan-out.
 *
 * - `publish` is durable and idempotent on the envelope id.
 * - `read` replays from a position, then follows live, in the feed's order: a client that resumes
 *   after the last id it saw misses nothing and sees nothing twice. The position is fixed when the
 *   effect succeeds (for `Now`: what is published after that is read), so a caller can tell its
 *   client it is live only then; the reader is released with the scope.
 * - `consume` is a durable, shared consumption: each event goes to one of the processes consuming
 *   under the same name, at least once, until acked (a delivery neither acked nor nak'd comes back
 *   after the ack wait).
 *
 * On a split deployment the feed is a JetStream stream (EventFeedJetStream.ts); on the embedded
 * default, the store's event table with an in-process signal (EventFeedStore.ts). Both pass
 * test/adapters/bus/EventFeedConformance.ts.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { WebhookEnvelope } from "../../core/schema/WebhookEvents.js"
import type { BusError } from "./BusError.js"
import { DEFAULT_PREFIX } from "./Subjects.js"

export type FeedPosition =
  /** After the event with this id (`Last-Event-ID`); an id the feed no longer holds reads from the oldest kept. */
  | { readonly _tag: "After"; readonly id: string }
  /** Events stored at or after this time (`?since=`): at least every event created since. */
  | { readonly _tag: "Since"; readonly at: Date }
  /** Only what is published from now on. */
  | { readonly _tag: "Now" }

export interface FeedDelivery {
  readonly envelope: WebhookEnvelope
  /** 1 on the first delivery. */
  readonly deliveryCount: number
  readonly ack: Effect.Effect<void, BusError>
  /** Deliver again, after `delayMs` when given. */
  readonly nak: (delayMs?: number) => Effect.Effect<void, BusError>
}

export class EventFeed extends Context.Tag("candor/adapters/bus/EventFeed")<
  EventFeed,
  {
    readonly publish: (envelope: WebhookEnvelope) => Effect.Effect<void, BusError>
    readonly read: (
      from: FeedPosition
    ) => Effect.Effect<Stream.Stream<WebhookEnvelope, BusError>, BusError, Scope.Scope>
    readonly consume: (durable: string) => Stream.Stream<FeedDelivery, BusError>
  }
>() {
  /**
   * A feed with no one behind it, for a lone embedded gateway (`--role gateway` without NATS_URL:
   * no store, no workers, no API to read it): publishes are dropped, readers wait forever.
   */
  static readonly layerDetached: Layer.Layer<EventFeed> = Layer.succeed(EventFeed, {
    publish: () => Effect.void,
    read: () => Effect.succeed(Stream.never),
    consume: () => Stream.never
  })
}

/** The knobs both feeds share. */
export interface FeedOptions {
  /** CANDOR_NATS_PREFIX (JetStream names). */
  readonly prefix: string
  /** How long events are kept: 48 h on JetStream, 7 days in the store; never below the 24 h the stream promises. */
  readonly retentionMs: number
  /** How long a republished id is recognised by JetStream's duplicate window (the store keeps ids as long as events). */
  readonly duplicateWindowMs: number
  /** A consumed delivery neither acked nor nak'd within this is delivered again. */
  readonly ackWaitMs: number
  /** Unsettled deliveries per durable consumer; consumption waits when it reaches this. */
  readonly maxAckPending: number
  /** JetStream: copies of the feed's stream and index bucket (CANDOR_NATS_REPLICAS). */
  readonly replicas: number
}

export const HOUR_MS = 3_600_000

export const defaultFeedOptions: FeedOptions = {
  prefix: DEFAULT_PREFIX,
  retentionMs: 48 * HOUR_MS,
  duplicateWindowMs: 10 * 60_000,
  ackWaitMs: 30_000,
  maxAckPending: 1_000,
  replicas: 1
}

/** Durable consumer names: letters, digits, `_` and `-` (they become JetStream consumer names). */
export const isDurableName = (name: string): boolean => /^[A-Za-z0-9_-]{1,64}$/.test(name)
