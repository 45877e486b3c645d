/**
 * The shapes of the bus contract (what `Bus` provides, and the messages and deliveries it hands
 * out), apart from the `Bus` tag so that its implementations (`BusMemory.ts`, `BusJetStream.ts`),
 * which the tag's layers build, need not import the tag: no import cycle. `Bus.ts` says what the
 * contract promises and re-exports these.
 */
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type { BusError } from "./BusError.js"

export interface BusMessage {
  readonly subject: string
  /** A JSON value: what was published, after a JSON round trip. */
  readonly payload: unknown
}

export interface Subscription {
  /** The next message under the prefix, in publish order. */
  readonly take: Effect.Effect<BusMessage>
}

/**
 * One delivery of a stored event; settle it with `ack` (done), `nak` (deliver again) or
 * `deadLetter` (never again). Unsettled past the ack wait, it is delivered again, unless `working`
 * keeps restarting the wait.
 */
export interface Delivery extends BusMessage {
  /** 1 on the first delivery, 2 on the first redelivery, … */
  readonly deliveryCount: number
  /** The W3C trace context it was published with (`PublishOptions.traceparent`), if any. */
  readonly traceparent?: string | undefined
  readonly ack: Effect.Effect<void, BusError>
  /** Deliver again, after `delayMs` when given. */
  readonly nak: (delayMs?: number) => Effect.Effect<void, BusError>
  /** Still being handled (a store outage waited out): the ack wait starts again. */
  readonly working: Effect.Effect<void, BusError>
  /** Refused for good: copied to the dead-letter subject with the reason, then never delivered again. */
  readonly deadLetter: (reason: string) => Effect.Effect<void, BusError>
}

/**
 * What the bus knows of one dead letter, never its payload: the alarm's record (streams/DeadLetters.ts).
 * Settle it with `ack` once recorded; `nak` hands it back for another try after `delayMs`.
 */
export interface DeadLetterNotice {
  /** Unique per dead letter and the same on every redelivery of this notice: the record's key. */
  readonly id: string
  /** The subject the event was published on (`<prefix>.events.<partition>.<agent_id>`). */
  readonly subject: string
  /** Why: the consumer's reason (`Delivery.deadLetter`) or the bus's (`delivered 5 times`, `not JSON`). */
  readonly reason: string
  /** Deliveries of the event before it was given up. */
  readonly deliveries: number
  /** When it was dead-lettered (ISO 8601). */
  readonly at: string
  readonly ack: Effect.Effect<void, BusError>
  readonly nak: (delayMs: number) => Effect.Effect<void, BusError>
}

export interface PublishOptions {
  /**
   * Publishes with the same id within the duplicate window are stored once, except on JetStream when
   * the republish travels in a batch with other events (the batch has an id of its own): consumers
   * that must be exact drop duplicates by an id of their own too (the workers: checkpoint ids).
   */
  readonly msgId?: string
  /**
   * The W3C `traceparent` of the publishing span (adapters/tracing/TraceParent.ts): it travels beside
   * the payload (a NATS header, a field of the batch entry or of the in-process entry), never in it,
   * and comes out as `Delivery.traceparent`, so the consumer's spans join the publisher's trace.
   */
  readonly traceparent?: string | undefined
}

export interface BusService {
  readonly partitions: number
  /** Resolves once stored (for an event in a batch: once its batch is); safe to call with many publishes in flight. */
  readonly publish: (subject: string, payload: unknown, options?: PublishOptions) => Effect.Effect<void, BusError>
  /** Never ends on its own: outages are retried; it fails only when the bus is gone for good. */
  readonly consumePartition: (partition: number) => Stream.Stream<Delivery, BusError>
  /**
   * The notices of dead letters (every copy to the dead-letter subject, whoever made it), durable and
   * shared: each notice goes to one of the processes consuming, and comes back until acked.
   */
  readonly consumeDeadLetters: Stream.Stream<DeadLetterNotice, BusError>
  /** Subscribed from the moment this effect completes until its scope closes. */
  readonly subscribe: (subjectPrefix: string) => Effect.Effect<Subscription, never, Scope.Scope>
  /**
   * The in-process bus only (where nothing outlives the process): completes once every stored event
   * is settled, so a stopping worker can finish what the bus holds first.
   */
  readonly settled?: Effect.Effect<void>
}
