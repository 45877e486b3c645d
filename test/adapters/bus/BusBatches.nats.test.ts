/**
 * Micro-batches on JetStream (adapters/bus/EventBatch.ts): events published together travel as one
 * message, each agent's order is kept across batches, a batch message is settled only when all its
 * events are, a nak of one of them hands the whole message back, a dead letter copies only its own
 * event, and single-event messages (as published before batches) are still consumed.
 */
import { jetstream, jetstreamManager } from "@nats-io/jetstream"
import { headers } from "@nats-io/transport-node"
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as Chunk from "effect/Chunk"
import { Bus, type BusOptions, type Delivery } from "../../../adapters/bus/Bus.js"
import { BATCH_HEADER, BATCH_VERSION } from "../../../adapters/bus/EventBatch.js"
import { NatsConnection } from "../../../adapters/bus/NatsConnection.js"
import { eventSubject, partitionOf, streamNames } from "../../../adapters/bus/Subjects.js"
import { agentIn } from "./BusConformance.js"
import { NatsTest, natsForPrefix, uniquePrefix, waitUntil } from "./NatsSupport.js"
import { describeIntegration } from "../../support/Integration.js"

const P = 4

const busLayer = (options: Partial<BusOptions> & { readonly prefix: string }) =>
  Bus.layerJetStream({ partitions: P, ...options }).pipe(Layer.provideMerge(NatsTest))

const jsmOf = Effect.flatMap(NatsConnection, (nc) => Effect.promise(() => jetstreamManager(nc)))

/** Messages stored in the events stream now. */
const storedMessages = (prefix: string) =>
  Effect.flatMap(jsmOf, (jsm) =>
    Effect.promise(() => jsm.streams.info(streamNames(prefix).events)).pipe(Effect.map((i) => i.state.messages))
  )

type Payload = { readonly agent: string; readonly i: number }
const payloadOf = (d: Delivery) => d.payload as Payload

/** Publishes all at once (forked in order, so they join the partition's buffer in this order). */
const publishTogether = (bus: Bus["Type"], prefix: string, events: ReadonlyArray<Payload>) =>
  Effect.forEach(events, (e) => bus.publish(eventSubject(e.agent, prefix, P), e), {
    concurrency: "unbounded",
    discard: true
  })

/** The chunks of a partition's deliveries until `n` deliveries have come, each chunk settled by `settle`. */
const takeChunks = (
  bus: Bus["Type"],
  partition: number,
  n: number,
  settle: (chunk: ReadonlyArray<Delivery>) => Effect.Effect<void, unknown>
) =>
  Effect.gen(function* () {
    const got: Array<Delivery> = []
    yield* bus.consumePartition(partition).pipe(
      Stream.chunks,
      Stream.mapEffect((chunk) => {
        const deliveries = Chunk.toReadonlyArray(chunk)
        got.push(...deliveries)
        return settle(deliveries)
      }),
      Stream.takeUntil(() => got.length >= n),
      Stream.runDrain,
      Effect.timeout("20 seconds")
    )
    return got
  })

describeIntegration("nats", "Bus.layerJetStream: micro-batches", () => {
  it.live("sends events published together as one message and keeps each agent's order across batches", () => {
    const prefix = uniquePrefix("batch")
    return Effect.gen(function* () {
      const bus = yield* Bus
      const partition = 2
      const a = agentIn(partition, P)
      const b = Array.from({ length: 1_000 }, (_, i) => `agt-other-${i}`).find(
        (id) => partitionOf(id, P) === partition
      )!
      // 50 events of two agents, interleaved; at most 8 per message: at least 7 batches.
      const events = Array.from({ length: 50 }, (_, i) => ({ agent: i % 2 === 0 ? a : b, i }))
      yield* publishTogether(bus, prefix, events)
      const stored = yield* storedMessages(prefix)
      expect(stored).toBeGreaterThanOrEqual(7)
      expect(stored).toBeLessThan(50)
      const got = yield* takeChunks(bus, partition, 50, (chunk) => Effect.forEach(chunk, (d) => d.ack))
      for (const agent of [a, b]) {
        const mine = got.filter((d) => payloadOf(d).agent === agent)
        expect(mine.map((d) => payloadOf(d).i)).toEqual(events.filter((e) => e.agent === agent).map((e) => e.i))
        expect(mine.every((d) => d.subject === eventSubject(agent, prefix, P) && d.deliveryCount === 1)).toBe(true)
      }
      // Acked once every event of each message was: nothing left.
      yield* waitUntil(
        "the messages acked",
        Effect.map(storedMessages(prefix), (n) => n === 0)
      )
    }).pipe(
      Effect.scoped,
      Effect.provide(busLayer({ prefix, publishBatchMs: 50, publishBatchEvents: 8 })),
      Effect.provide(natsForPrefix(prefix))
    )
  })

  it.live("carries each event's traceparent inside the batch, beside its payload", () => {
    const prefix = uniquePrefix("batch-trace")
    return Effect.gen(function* () {
      const bus = yield* Bus
      const agent = agentIn(3, P)
      const traced = (i: number) => `00-${"ab".repeat(16)}-${i.toString(16).padStart(16, "0")}-01`
      // Odd events traced, even ones not, all in the same messages.
      yield* Effect.forEach(
        Array.from({ length: 6 }, (_, i) => i),
        (i) =>
          bus.publish(
            eventSubject(agent, prefix, P),
            { agent, i },
            i % 2 === 1 ? { msgId: `t-${i}`, traceparent: traced(i) } : undefined
          ),
        { concurrency: "unbounded", discard: true }
      )
      expect(yield* storedMessages(prefix)).toBeLessThan(6)
      const got = yield* takeChunks(bus, 3, 6, (chunk) => Effect.forEach(chunk, (d) => d.ack))
      expect(got.map((d) => [payloadOf(d).i, d.traceparent])).toEqual(
        Array.from({ length: 6 }, (_, i) => [i, i % 2 === 1 ? traced(i) : undefined])
      )
    }).pipe(
      Effect.scoped,
      Effect.provide(busLayer({ prefix, publishBatchMs: 50, publishBatchEvents: 8 })),
      Effect.provide(natsForPrefix(prefix))
    )
  })

  it.live(
    "hands a whole batch message back when one of its events is nak'd, the acked ones with it",
    () => {
      const prefix = uniquePrefix("batchnak")
      return Effect.gen(function* () {
        const bus = yield* Bus
        const agent = agentIn(1, P)
        yield* publishTogether(
          bus,
          prefix,
          [0, 1, 2].map((i) => ({ agent, i }))
        )
        expect(yield* storedMessages(prefix)).toBe(1)
        // First delivery: 0 and 2 acked, 1 nak'd. Second: all three again, then acked.
        const got = yield* takeChunks(bus, 1, 6, (chunk) =>
          Effect.forEach(chunk, (d) => (d.deliveryCount === 1 && payloadOf(d).i === 1 ? d.nak(100) : d.ack))
        )
        expect(got.map((d) => [payloadOf(d).i, d.deliveryCount])).toEqual([
          [0, 1],
          [1, 1],
          [2, 1],
          [0, 2],
          [1, 2],
          [2, 2]
        ])
        yield* waitUntil(
          "the message acked",
          Effect.map(storedMessages(prefix), (n) => n === 0)
        )
      }).pipe(
        Effect.scoped,
        Effect.provide(busLayer({ prefix, publishBatchMs: 50, publishBatchEvents: 64 })),
        Effect.provide(natsForPrefix(prefix))
      )
    },
    30_000
  )

  it.live("dead-letters one event of a batch alone and acks the message once the others are acked", () => {
    const prefix = uniquePrefix("batchdead")
    return Effect.gen(function* () {
      const bus = yield* Bus
      const agent = agentIn(3, P)
      const dead = yield* bus.subscribe(`${prefix}.dead.`)
      yield* publishTogether(
        bus,
        prefix,
        [0, 1, 2].map((i) => ({ agent, i }))
      )
      yield* takeChunks(bus, 3, 3, (chunk) =>
        Effect.forEach(chunk, (d) => (payloadOf(d).i === 1 ? d.deadLetter("refused") : d.ack))
      )
      expect(yield* dead.take.pipe(Effect.timeout("20 seconds"))).toEqual({
        subject: `${prefix}.dead.events.3.${agent}`,
        payload: { agent, i: 1 }
      })
      yield* waitUntil(
        "the message acked",
        Effect.map(storedMessages(prefix), (n) => n === 0)
      )
    }).pipe(
      Effect.scoped,
      Effect.provide(busLayer({ prefix, publishBatchMs: 50, publishBatchEvents: 64 })),
      Effect.provide(natsForPrefix(prefix))
    )
  })

  it.live("consumes single-event messages (as published before batches) beside batch messages", () => {
    const prefix = uniquePrefix("legacy")
    return Effect.gen(function* () {
      const bus = yield* Bus
      const nc = yield* NatsConnection
      const js = jetstream(nc)
      const agent = agentIn(0, P)
      const subject = eventSubject(agent, prefix, P)
      const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value))
      // As a gateway before batches published: the event alone, no header.
      yield* Effect.promise(() => js.publish(subject, encode({ agent, i: 0 }), { msgID: "legacy-0" }))
      const h = headers()
      h.set(BATCH_HEADER, BATCH_VERSION)
      yield* Effect.promise(() =>
        js.publish(
          subject,
          encode([
            { subject, payload: { agent, i: 1 } },
            { subject, payload: { agent, i: 2 } }
          ]),
          { headers: h }
        )
      )
      yield* Effect.promise(() => js.publish(subject, encode({ agent, i: 3 }), { msgID: "legacy-3" }))
      const got = yield* takeChunks(bus, 0, 4, (chunk) => Effect.forEach(chunk, (d) => d.ack))
      expect(got.map((d) => [d.subject, payloadOf(d).i])).toEqual([0, 1, 2, 3].map((i) => [subject, i]))
    }).pipe(Effect.scoped, Effect.provide(busLayer({ prefix })), Effect.provide(natsForPrefix(prefix)))
  })
})
