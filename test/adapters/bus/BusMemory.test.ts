/**
 * The in-process bus: the shared conformance suite, plus its timers on the test clock.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { Bus } from "../../../adapters/bus/Bus.js"
import { eventSubject } from "../../../adapters/bus/Subjects.js"
import { agentIn, busConformance } from "./BusConformance.js"

// Its timers are exact: the timing cases run at 0.4 of their length.
busConformance("memory", (options) => Bus.layerMemoryWith(options), [], { timeScale: 0.4 })

describe("Bus.layerMemory", () => {
  it.scoped("redelivers after the default 30 s ack wait, on the Effect clock", () =>
    Effect.gen(function* () {
      const bus = yield* Bus
      const agent = agentIn(5, bus.partitions)
      yield* bus.publish(eventSubject(agent), { id: "x" })
      const deliveries = yield* bus.consumePartition(5).pipe(Stream.take(2), Stream.runCollect, Effect.fork)
      yield* TestClock.adjust("29 seconds")
      expect(Option.isNone(yield* Fiber.poll(deliveries))).toBe(true)
      yield* TestClock.adjust("1 second")
      const got = [...(yield* Fiber.join(deliveries))]
      expect(got.map((d) => [d.payload, d.deliveryCount])).toEqual([
        [{ id: "x" }, 1],
        [{ id: "x" }, 2]
      ])
    }).pipe(Effect.provide(Bus.layerMemory))
  )

  it.scoped("forgets a msgId after the duplicate window", () =>
    Effect.gen(function* () {
      const bus = yield* Bus
      const subject = eventSubject(agentIn(0, bus.partitions))
      yield* bus.publish(subject, 1, { msgId: "m" })
      yield* bus.publish(subject, 2, { msgId: "m" })
      yield* TestClock.adjust("121 seconds")
      yield* bus.publish(subject, 3, { msgId: "m" })
      const got = yield* bus.consumePartition(0).pipe(Stream.take(2), Stream.runCollect)
      expect([...got].map((d) => d.payload)).toEqual([1, 3])
    }).pipe(Effect.provide(Bus.layerMemory))
  )

  it.scoped("counts a msgId's window from when it was last stored, whatever expired around it", () =>
    Effect.gen(function* () {
      const bus = yield* Bus
      const subject = eventSubject(agentIn(0, bus.partitions))
      yield* bus.publish(subject, 1, { msgId: "m" })
      yield* TestClock.adjust("121 seconds")
      yield* bus.publish(subject, 2, { msgId: "m" }) // the first window is over: stored again
      yield* bus.publish(subject, 3, { msgId: "n" })
      yield* TestClock.adjust("60 seconds")
      yield* bus.publish(subject, 4, { msgId: "m" }) // within the second window
      yield* bus.publish(subject, 5, { msgId: "n" })
      yield* TestClock.adjust("61 seconds")
      yield* bus.publish(subject, 6, { msgId: "m" })
      yield* bus.publish(subject, 7, { msgId: "n" })
      const got = yield* bus.consumePartition(0).pipe(Stream.take(5), Stream.runCollect)
      expect([...got].map((d) => d.payload)).toEqual([1, 2, 3, 6, 7])
    }).pipe(Effect.provide(Bus.layerMemory))
  )
})

describe("Bus.layerMemory settled", () => {
  it.scoped("completes once every stored event is acked, so a stopping worker can commit what the bus holds", () =>
    Effect.gen(function* () {
      const bus = yield* Bus
      const agent = agentIn(2, bus.partitions)
      yield* bus.publish(eventSubject(agent), { id: "a" })
      yield* bus.publish(eventSubject(agent), { id: "b" })
      const settled = yield* Effect.fork(bus.settled!)
      yield* TestClock.adjust("10 millis")
      expect(Option.isNone(yield* Fiber.poll(settled))).toBe(true)
      // Delivered but not acked: still held.
      const [first, second] = [...(yield* bus.consumePartition(2).pipe(Stream.take(2), Stream.runCollect))]
      yield* first!.ack
      yield* TestClock.adjust("10 millis")
      expect(Option.isNone(yield* Fiber.poll(settled))).toBe(true)
      // Handed back with a delay: still held.
      yield* second!.nak(1_000)
      yield* TestClock.adjust("10 millis")
      expect(Option.isNone(yield* Fiber.poll(settled))).toBe(true)
      yield* TestClock.adjust("1 second")
      const again = [...(yield* bus.consumePartition(2).pipe(Stream.take(1), Stream.runCollect))]
      yield* again[0]!.ack
      yield* TestClock.adjust("10 millis")
      yield* Fiber.join(settled)
    }).pipe(Effect.provide(Bus.layerMemory))
  )
})
