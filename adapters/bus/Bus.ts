/**
 * The event bus between gateways and the actors in `streams/`.
 *
 * - `publish` is durable: it resolves once the message is stored. Events go to
 *   `<prefix>.events.<partition>.<agent_id>`, decisions to `<prefix>.alerts.…` / `<prefix>.containment.…`;
 *   a subject no stream stores is refused. `msgId` deduplicates republishes within a window.
 * - `consumePartition` is the durable, shared queue of one partition: explicit acks, redelivery after
 *   the ack wait, and after `maxDeliver` deliveries a copy to `<prefix>.dead.events.…` instead of
 *   another delivery. Chunks of the stream are the batches as they arrive.
 * - A dead letter is the event as published, on `<prefix>.dead.<original subject without prefix>`
 *   (JetStream: headers `Candor-Original-Subject`, `Candor-Deliveries`, `Candor-Reason`), whether
 *   the bus gave up on it (max deliveries, not JSON) or its consumer refused it (`deadLetter`).
 * - `subscribe` is a live, non-durable fan-out by subject prefix (security tooling, tests).
 *
 * `layerMemory` is the embedded default (one process, nothing survives it); `layerJetStream` runs
 * the same contract on NATS JetStream. Both pass `test/adapters/bus/BusConformance.ts`.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type { BusError } from "./BusError.js"
import { make as makeJetStream } from "./BusJetStream.js"
import { make as makeMemory } from "./BusMemory.js"
import { type BusOptions, busOptions } from "./BusOptions.js"
import type { NatsConnection } from "./NatsConnection.js"

export { BusError } from "./BusError.js"
export { type BusOptions } from "./BusOptions.js"

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
  readonly ack: Effect.Effect<void, BusError>
  /** Deliver again, after `delayMs` when given. */
  readonly nak: (delayMs?: number) => Effect.Effect<void, BusError>
  /** Still being handled (a store outage waited out): the ack wait starts again. */
  readonly working: Effect.Effect<void, BusError>
  /** Refused for good: copied to the dead-letter subject with the reason, then never delivered again. */
  readonly deadLetter: (reason: string) => Effect.Effect<void, BusError>
}

export interface PublishOptions {
  /** Publishes with the same id within the duplicate window are stored once. */
  readonly msgId?: string
}

export class Bus extends Context.Tag("candor/adapters/bus/Bus")<Bus, {
  readonly partitions: number
  /** Resolves once stored; safe to call with many publishes in flight. */
  readonly publish: (subject: string, payload: unknown, options?: PublishOptions) => Effect.Effect<void, BusError>
  /** Never ends on its own: outages are retried; it fails only when the bus is gone for good. */
  readonly consumePartition: (partition: number) => Stream.Stream<Delivery, BusError>
  /** Subscribed from the moment this effect completes until its scope closes. */
  readonly subscribe: (subjectPrefix: string) => Effect.Effect<Subscription, never, Scope.Scope>
}>() {
  /** In-process, with the default options. */
  static readonly layerMemory: Layer.Layer<Bus> = Layer.scoped(Bus, makeMemory(busOptions()))

  /** In-process, with options (short ack waits in tests). */
  static readonly layerMemoryWith = (options: Partial<BusOptions> = {}): Layer.Layer<Bus> =>
    Layer.scoped(Bus, makeMemory(busOptions(options)))

  /** On NATS JetStream: streams and one durable consumer per partition are created at start. */
  static readonly layerJetStream = (options: Partial<BusOptions> = {}): Layer.Layer<Bus, BusError, NatsConnection> =>
    Layer.scoped(Bus, makeJetStream(busOptions(options)))
}
