/**
 * The event bus between gateways and the actors in `streams/`.
 *
 * - `publish` is durable: it resolves once the message is stored. Events go to
 *   `<prefix>.events.<partition>.<agent_id>`, decisions to `<prefix>.alerts.…` / `<prefix>.containment.…`;
 *   a subject no stream stores is refused. On JetStream a partition's events published together
 *   travel as one message (a micro-batch, `EventBatch.ts`), each still delivered on its own, in
 *   publish order. `msgId` deduplicates a republish within a window when the event is stored alone
 *   (always on the in-process bus); an event republished into a batch may be delivered twice, and
 *   its consumer drops it by its id (the workers: the store's checkpoint id).
 * - `consumePartition` is the durable, shared queue of one partition: explicit acks, redelivery after
 *   the ack wait, and after `maxDeliver` deliveries a copy to `<prefix>.dead.events.…` instead of
 *   another delivery. Chunks of the stream are the batches as they arrive. The deliveries of one
 *   batch message are settled together on JetStream: acked once all are, handed back whole when one
 *   is nak'd (its events already acked come again: consumers must drop what they already stored).
 * - A dead letter is the event as published, on `<prefix>.dead.<original subject without prefix>`
 *   (JetStream: headers `Candor-Original-Subject`, `Candor-Deliveries`, `Candor-Reason`), whether
 *   the bus gave up on it (max deliveries, not JSON) or its consumer refused it (`deadLetter`).
 *   Every dead letter is also announced on `consumeDeadLetters` (subject, reason, deliveries, time;
 *   never the payload), a durable, shared consumption the workers record and raise as an alarm.
 * - `subscribe` is a live, non-durable fan-out by subject prefix (security tooling, tests).
 *
 * `layerMemory` is the embedded default (one process, nothing survives it); `layerJetStream` runs
 * the same contract on NATS JetStream. Both pass `test/adapters/bus/BusConformance.ts`.
 */
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import type { BusService } from "./BusContract.js"
import type { BusError } from "./BusError.js"
import { make as makeJetStream } from "./BusJetStream.js"
import { make as makeMemory } from "./BusMemory.js"
import { type BusOptions, busOptions } from "./BusOptions.js"
import type { NatsConnection } from "./NatsConnection.js"

export { BusError } from "./BusError.js"
export { type BusOptions } from "./BusOptions.js"
export type { BusMessage, BusService, DeadLetterNotice, Delivery, PublishOptions, Subscription } from "./BusContract.js"

export class Bus extends Context.Tag("candor/adapters/bus/Bus")<Bus, BusService>() {
  /** In-process, with the default options. */
  static readonly layerMemory: Layer.Layer<Bus> = Layer.scoped(Bus, makeMemory(busOptions()))

  /** In-process, with options (short ack waits in tests). */
  static readonly layerMemoryWith = (options: Partial<BusOptions> = {}): Layer.Layer<Bus> =>
    Layer.scoped(Bus, makeMemory(busOptions(options)))

  /** On NATS JetStream: streams and one durable consumer per partition are created at start. */
  static readonly layerJetStream = (options: Partial<BusOptions> = {}): Layer.Layer<Bus, BusError, NatsConnection> =>
    Layer.scoped(Bus, makeJetStream(busOptions(options)))
}
