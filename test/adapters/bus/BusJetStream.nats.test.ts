/**
 * The bus on the real NATS server: the shared conformance suite, then what only JetStream can show:
 * the topology it creates, dead letters kept in their stream, a consumer that survives being deleted,
 * a second process resuming where the first stopped, and a server restart (on a private server).
 */
import { jetstreamManager } from "@nats-io/jetstream"
import { expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { Bus, type BusOptions, type Delivery } from "../../../adapters/bus/Bus.js"
import { NatsConnection } from "../../../adapters/bus/NatsConnection.js"
import { eventSubject, streamNames } from "../../../adapters/bus/Subjects.js"
import { agentIn, busConformance } from "./BusConformance.js"
import {
  NatsTest,
  natsForPrefix,
  privateNatsServer,
  removeNatsResources,
  uniquePrefix,
  waitUntil
} from "./NatsSupport.js"
import { describeIntegration } from "../../support/Integration.js"

busConformance(
  "JetStream",
  (options) => Bus.layerJetStream(options).pipe(Layer.provide(natsForPrefix(options.prefix))),
  ["nats"]
)

// The same contract with events published in micro-batches (off by default, BusOptions.publishBatchEvents).
busConformance(
  "JetStream, micro-batches",
  (options) =>
    Bus.layerJetStream({ publishBatchEvents: 64, ...options }).pipe(Layer.provide(natsForPrefix(options.prefix))),
  ["nats"]
)

const P = 4

/** A bus (with its own connection) on the shared server; the prefix's streams are removed by the caller. */
const busLayer = (options: Partial<BusOptions> & { readonly prefix: string }) =>
  Bus.layerJetStream({ partitions: P, ...options }).pipe(Layer.provideMerge(NatsTest))

const jsmOf = Effect.flatMap(NatsConnection, (nc) => Effect.promise(() => jetstreamManager(nc)))

const idOf = (d: Delivery) => (d.payload as { readonly id: string }).id

/** Removes the prefix's streams when the test's scope closes, on a connection of its own. */
const cleanup = (prefix: string) =>
  Effect.addFinalizer(() => removeNatsResources(prefix).pipe(Effect.provide(NatsTest)))

describeIntegration("nats", "Bus.layerJetStream", () => {
  it.live("creates the three streams and one durable consumer per partition, named after the prefix", () => {
    const prefix = uniquePrefix("topo")
    return Effect.gen(function* () {
      yield* Bus
      const jsm = yield* jsmOf
      const names = streamNames(prefix)
      const events = yield* Effect.promise(() => jsm.streams.info(names.events))
      expect(events.config.subjects).toEqual([`${prefix}.events.>`])
      expect(events.config.retention).toBe("workqueue")
      expect(events.config.storage).toBe("file")
      const decisions = yield* Effect.promise(() => jsm.streams.info(names.decisions))
      expect(decisions.config.subjects).toEqual([`${prefix}.alerts.>`, `${prefix}.containment.>`])
      yield* Effect.promise(() => jsm.streams.info(names.dead))
      const consumers: Array<string> = []
      yield* Effect.promise(async () => {
        for await (const c of jsm.consumers.list(names.events)) consumers.push(c.name)
      })
      expect(consumers.sort()).toEqual(["events-p00", "events-p01", "events-p02", "events-p03"])
      expect(names.events).toBe(`${prefix.toUpperCase()}_EVENTS`)
    }).pipe(Effect.provide(busLayer({ prefix })), Effect.provide(natsForPrefix(prefix)))
  })

  it.live("keeps dead letters in the dead-letter stream, with the original subject", () => {
    const prefix = uniquePrefix("dead")
    return Effect.gen(function* () {
      const bus = yield* Bus
      const subject = eventSubject(agentIn(1, P), prefix, P)
      yield* bus.publish(subject, { id: "poison" })
      yield* bus.consumePartition(1).pipe(
        Stream.runForEach((d) => d.nak()),
        Effect.forkScoped
      )
      const jsm = yield* jsmOf
      const dead = streamNames(prefix).dead
      yield* waitUntil(
        "the dead letter",
        Effect.promise(() => jsm.streams.info(dead)).pipe(Effect.map((i) => i.state.messages === 1))
      )
      const letter = yield* Effect.promise(() => jsm.streams.getMessage(dead, { seq: 1 }))
      expect(letter?.subject).toBe(`${prefix}.dead.${subject.slice(prefix.length + 1)}`)
      expect(letter?.json()).toEqual({ id: "poison" })
      expect(letter?.header.get("Candor-Original-Subject")).toBe(subject)
      // Deliveries to a consumer (maxDeliver 1): the bus's own delivery, which gave it up, is not one.
      expect(letter?.header.get("Candor-Deliveries")).toBe("1")
      expect(letter?.header.get("Candor-Reason")).toBe("delivered 1 times")
      expect(letter?.header.get("Candor-Dead-Letter-Id")).toMatch(/^[0-9a-f-]{36}$/)
      // Terminated: nothing of it is left in the events stream.
      yield* waitUntil(
        "the events stream to be empty",
        Effect.promise(() => jsm.streams.info(streamNames(prefix).events)).pipe(
          Effect.map((i) => i.state.messages === 0)
        )
      )
    }).pipe(Effect.scoped, Effect.provide(busLayer({ prefix, maxDeliver: 1 })), Effect.provide(natsForPrefix(prefix)))
  })

  it.live(
    "re-creates its consumer when it is deleted on the server, and carries on",
    () => {
      const prefix = uniquePrefix("del")
      return Effect.gen(function* () {
        const bus = yield* Bus
        const jsm = yield* jsmOf
        const names = streamNames(prefix)
        const subject = eventSubject(agentIn(2, P), prefix, P)
        const seen: Array<string> = []
        yield* bus.consumePartition(2).pipe(
          Stream.runForEach((d) =>
            Effect.zipRight(
              d.ack,
              Effect.sync(() => seen.push(idOf(d)))
            )
          ),
          Effect.forkScoped
        )
        yield* bus.publish(subject, { id: "before" })
        yield* waitUntil(
          "the first event",
          Effect.sync(() => seen.length === 1)
        )
        // Acked on the server (the ack is asynchronous) before the consumer goes away.
        yield* waitUntil(
          "the ack",
          Effect.promise(() => jsm.consumers.info(names.events, "events-p02")).pipe(
            Effect.map((i) => i.num_ack_pending === 0)
          )
        )
        yield* Effect.promise(() => jsm.consumers.delete(names.events, "events-p02"))
        yield* bus.publish(subject, { id: "after" })
        yield* waitUntil(
          "the event after the deletion",
          Effect.sync(() => seen.length === 2)
        )
        expect(seen).toEqual(["before", "after"])
      }).pipe(Effect.scoped, Effect.provide(busLayer({ prefix })), Effect.provide(natsForPrefix(prefix)))
    },
    30_000
  )

  it.live(
    "re-creates the events stream and its consumer when the stream is deleted",
    () => {
      const prefix = uniquePrefix("gone")
      return Effect.gen(function* () {
        const bus = yield* Bus
        const jsm = yield* jsmOf
        const subject = eventSubject(agentIn(1, P), prefix, P)
        const seen: Array<string> = []
        yield* bus.consumePartition(1).pipe(
          Stream.runForEach((d) =>
            Effect.zipRight(
              d.ack,
              Effect.sync(() => seen.push(idOf(d)))
            )
          ),
          Effect.forkScoped
        )
        yield* bus.publish(subject, { id: "before" })
        yield* waitUntil(
          "the first event",
          Effect.sync(() => seen.length === 1)
        )
        yield* Effect.promise(() => jsm.streams.delete(streamNames(prefix).events))
        // The publisher puts the stream back; the consumer notices its consumer is gone (at the latest
        // after two missed heartbeats) and re-creates it.
        yield* bus.publish(subject, { id: "after" })
        yield* waitUntil(
          "the event after the deletion",
          Effect.sync(() => seen.length === 2),
          45_000
        )
        expect(seen).toEqual(["before", "after"])
      }).pipe(Effect.scoped, Effect.provide(busLayer({ prefix })), Effect.provide(natsForPrefix(prefix)))
    },
    60_000
  )

  it.live(
    "a second process resumes where the first stopped: acked events are not delivered again, the rest at once and in order",
    () => {
      const prefix = uniquePrefix("resume")
      const partition = 3
      const subject = eventSubject(agentIn(partition, P), prefix, P)
      return Effect.gen(function* () {
        yield* cleanup(prefix)
        // First process: publishes ten, is handed all ten, acks the first five, stops.
        const first = yield* Effect.gen(function* () {
          const bus = yield* Bus
          for (let i = 0; i < 10; i++) yield* bus.publish(subject, { id: `e${i}` })
          return yield* bus.consumePartition(partition).pipe(
            Stream.tap((d) => (Number(idOf(d).slice(1)) < 5 ? d.ack : Effect.void)),
            Stream.take(10),
            Stream.runCollect
          )
        }).pipe(Effect.provide(busLayer({ prefix, ackWaitMs: 20_000 })))
        expect(Chunk.toReadonlyArray(first).map(idOf)).toEqual(Array.from({ length: 10 }, (_, i) => `e${i}`))
        // Second process, its own connection: only the five unacked, in order. The consumer was rewound
        // (re-created), so they come at once rather than after the ack wait, and count from 1 again.
        const resumedAt = Date.now()
        const second = yield* Effect.gen(function* () {
          const bus = yield* Bus
          return yield* bus.consumePartition(partition).pipe(
            Stream.tap((d) => d.ack),
            Stream.take(5),
            Stream.runCollect
          )
        }).pipe(Effect.provide(busLayer({ prefix, ackWaitMs: 20_000 })))
        expect(Chunk.toReadonlyArray(second).map((d) => [idOf(d), d.deliveryCount])).toEqual(
          Array.from({ length: 5 }, (_, i) => [`e${i + 5}`, 1])
        )
        expect(Date.now() - resumedAt).toBeLessThan(10_000)
      }).pipe(Effect.scoped)
    },
    30_000
  )

  it.live(
    "survives a server restart: the consumer reconnects and resumes, publishes wait it out",
    () =>
      Effect.gen(function* () {
        const server = yield* privateNatsServer
        yield* Effect.gen(function* () {
          const bus = yield* Bus
          const subject = eventSubject(agentIn(0, P), "candor", P)
          const seen: Array<string> = []
          const consumer = yield* bus.consumePartition(0).pipe(
            Stream.runForEach((d) =>
              Effect.zipRight(
                d.ack,
                Effect.sync(() => seen.push(idOf(d)))
              )
            ),
            Effect.forkScoped
          )
          yield* bus.publish(subject, { id: "before" })
          yield* waitUntil(
            "the event before the restart",
            Effect.sync(() => seen.length === 1)
          )
          yield* server.stop
          const during = yield* bus.publish(subject, { id: "during" }).pipe(Effect.fork)
          yield* server.start
          yield* Fiber.join(during)
          yield* bus.publish(subject, { id: "after" })
          yield* waitUntil(
            "the events after the restart",
            Effect.sync(() => seen.length === 3),
            30_000
          )
          expect(seen).toEqual(["before", "during", "after"])
          expect(consumer.unsafePoll()).toBeNull()
        }).pipe(
          Effect.scoped,
          Effect.provide(
            Bus.layerJetStream({ prefix: "candor", partitions: P }).pipe(
              Layer.provide(NatsConnection.layer(server.url, { reconnectWaitMs: 100 }))
            )
          )
        )
      }).pipe(Effect.scoped),
    60_000
  )
})
