/**
 * The in-process bus: JetStream's semantics without a server, for the embedded default and tests.
 * Each partition is a queue of stored events; a delivery stays pending until acked, and comes back
 * after the ack wait or a nak (redeliveries first, in sequence order); after `maxDeliver` deliveries
 * the event is copied to the dead-letter subject instead, and its notice (no payload) queued for
 * `consumeDeadLetters`. Timers run on the Effect clock, so tests can drive them with TestClock.
 * Nothing survives the process.
 */
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import type { BusMessage, BusService, DeadLetterNotice, Delivery, Subscription } from "./BusContract.js"
import { BusError } from "./BusError.js"
import type { BusOptions } from "./BusOptions.js"
import { deadLetterSubject, matchesPrefix, partitionOfSubject, streamOf } from "./Subjects.js"

interface Entry {
  readonly seq: number
  readonly subject: string
  readonly payload: unknown
  /** The publisher's trace context, handed to every delivery. */
  readonly traceparent: string | undefined
  /** Deliveries so far; a delivery may settle the entry only while it is the latest one. */
  deliveries: number
  state: "ready" | "pending" | "delayed" | "done"
  /** The ack-wait or nak-delay timer. */
  timer: Fiber.RuntimeFiber<void> | undefined
}

/** One partition's stored events; all its consumers share it, like a durable JetStream consumer. */
class PartitionQueue {
  private fresh: Array<Entry> = []
  private head = 0
  /** Entries to deliver again, sorted by sequence. */
  private again: Array<Entry> = []
  pending = 0
  /** Entries waiting out a nak delay. */
  delayed = 0
  /** Completed (and replaced) whenever something becomes deliverable. */
  changed = Deferred.unsafeMake<void>(FiberId.none)

  append(entry: Entry): void {
    this.fresh.push(entry)
    this.wake()
  }

  redeliver(entry: Entry): void {
    entry.state = "ready"
    let i = this.again.length
    while (i > 0 && this.again[i - 1]!.seq > entry.seq) i--
    this.again.splice(i, 0, entry)
    this.wake()
  }

  /** Up to `n` deliverable entries: redeliveries first, then new events, each in sequence order. */
  take(n: number): Array<Entry> {
    const taken = this.again.splice(0, n)
    while (taken.length < n && this.head < this.fresh.length) taken.push(this.fresh[this.head++]!)
    if (this.head > 1024 && this.head * 2 > this.fresh.length) {
      this.fresh = this.fresh.slice(this.head)
      this.head = 0
    }
    return taken
  }

  /** Nothing to deliver and nothing unsettled (delayed redeliveries count as unsettled). */
  idle(): boolean {
    return this.head >= this.fresh.length && this.again.length === 0 && this.pending === 0 && this.delayed === 0
  }

  wake(): void {
    Deferred.unsafeDone(this.changed, Exit.void)
    this.changed = Deferred.unsafeMake<void>(FiberId.none)
  }
}

export const make = (options: BusOptions): Effect.Effect<BusService, never, Scope.Scope> =>
  Effect.gen(function* () {
    const { ackWaitMs, batchSize, duplicateWindowMs, maxAckPending, maxDeliver, partitions, prefix } = options
    // Timers are forked into the layer's scope, so none outlives the layer.
    const scope = yield* Effect.scope
    const hub = yield* PubSub.unbounded<BusMessage>()
    const queues = Array.from({ length: partitions }, () => new PartitionQueue())
    /** msgId → when it may be stored again. */
    const seen = new Map<string, number>()
    let seq = 0

    // The map is kept in expiry order (a msgId stored again moves to the end), so expired ids are
    // pruned from its front, each once: a scan of every id on each publish once the window held many
    // made a busy embedded bus quadratic.
    const isDuplicate = (msgId: string, now: number): boolean => {
      const until = seen.get(msgId)
      if (until !== undefined && until > now) return true
      for (const [id, t] of seen) {
        if (t > now) break
        seen.delete(id)
      }
      seen.delete(msgId)
      seen.set(msgId, now + duplicateWindowMs)
      return false
    }

    const stopTimer = (entry: Entry): Effect.Effect<void> => {
      const timer = entry.timer
      entry.timer = undefined
      return timer === undefined ? Effect.void : Fiber.interruptFork(timer)
    }

    const startTimer = (entry: Entry, delayMs: number, fire: () => void): Effect.Effect<void> =>
      Effect.sleep(delayMs).pipe(
        Effect.zipRight(Effect.sync(fire)),
        Effect.forkIn(scope),
        Effect.map((fiber) => void (entry.timer = fiber))
      )

    /** Settles the delivery numbered `count` if it is still the entry's latest pending delivery. */
    const settle = (queue: PartitionQueue, entry: Entry, count: number): boolean => {
      if (entry.state !== "pending" || entry.deliveries !== count) return false
      queue.pending--
      queue.wake()
      return true
    }

    /** The ack wait of delivery `count`: unsettled when it ends, the entry is delivered again. */
    const startAckWait = (queue: PartitionQueue, entry: Entry, count: number): Effect.Effect<void> =>
      startTimer(entry, ackWaitMs, () => {
        if (settle(queue, entry, count)) queue.redeliver(entry)
      })

    /** Dead letters not yet recorded: what `consumeDeadLetters` hands out (a nak'd one comes back here). */
    const notices = yield* Queue.unbounded<Omit<DeadLetterNotice, "ack" | "nak">>()

    const toDeadLetter = (entry: Entry, reason: string): Effect.Effect<void> =>
      Effect.zipRight(
        PubSub.publish(hub, { subject: deadLetterSubject(entry.subject, prefix), payload: entry.payload }),
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          Queue.offer(notices, {
            id: `memory-${randomUUID()}`,
            subject: entry.subject,
            reason,
            deliveries: entry.deliveries,
            at: new Date(now).toISOString()
          })
        )
      )

    const delivery = (queue: PartitionQueue, entry: Entry): Delivery => {
      const count = entry.deliveries
      const latest = () => entry.state === "pending" && entry.deliveries === count
      return {
        subject: entry.subject,
        payload: entry.payload,
        deliveryCount: count,
        traceparent: entry.traceparent,
        ack: Effect.suspend(() => {
          if (!settle(queue, entry, count)) return Effect.void
          entry.state = "done"
          return stopTimer(entry)
        }),
        nak: (delayMs) =>
          Effect.suspend(() => {
            if (!settle(queue, entry, count)) return Effect.void
            if (delayMs === undefined || delayMs <= 0)
              return Effect.zipRight(
                stopTimer(entry),
                Effect.sync(() => queue.redeliver(entry))
              )
            entry.state = "delayed"
            queue.delayed++
            return Effect.zipRight(
              stopTimer(entry),
              startTimer(entry, delayMs, () => {
                queue.delayed--
                queue.redeliver(entry)
              })
            )
          }),
        working: Effect.suspend(() =>
          latest() ? Effect.zipRight(stopTimer(entry), startAckWait(queue, entry, count)) : Effect.void
        ),
        deadLetter: (reason) =>
          Effect.suspend(() => {
            if (!settle(queue, entry, count)) return Effect.void
            entry.state = "done"
            return Effect.zipRight(stopTimer(entry), toDeadLetter(entry, reason))
          })
      }
    }

    /** The next batch of one partition, waiting until something is deliverable. */
    const nextBatch = (queue: PartitionQueue): Effect.Effect<Chunk.Chunk<Delivery>> =>
      Effect.suspend(() => {
        const changed = queue.changed
        const taken = queue.take(Math.min(batchSize, maxAckPending - queue.pending))
        if (taken.length === 0) return Effect.zipRight(Deferred.await(changed), nextBatch(queue))
        const live: Array<Entry> = []
        const dead: Array<Entry> = []
        for (const entry of taken) {
          if (entry.deliveries >= maxDeliver) {
            entry.state = "done"
            dead.push(entry)
          } else {
            entry.deliveries++
            entry.state = "pending"
            queue.pending++
            live.push(entry)
          }
        }
        return Effect.forEach(dead, (entry) => toDeadLetter(entry, `delivered ${entry.deliveries} times`), {
          discard: true
        }).pipe(
          Effect.zipRight(
            Effect.forEach(live, (entry) => startAckWait(queue, entry, entry.deliveries), { discard: true })
          ),
          Effect.zipRight(
            live.length === 0
              ? nextBatch(queue)
              : Effect.succeed(Chunk.unsafeFromArray(live.map((e) => delivery(queue, e))))
          )
        )
      })

    const publish: BusService["publish"] = (subject, payload, publishOptions) =>
      Effect.gen(function* () {
        const stream = streamOf(subject, prefix)
        const partition = stream === "events" ? partitionOfSubject(subject, prefix)! : undefined
        if (stream === undefined || (partition !== undefined && partition >= partitions)) {
          return yield* new BusError({
            operation: "publish",
            cause: `no stream stores subject ${subject}`,
            permanent: true
          })
        }
        // The JSON round trip JetStream does: the same values come out, and the stored copy is detached.
        const stored: unknown = yield* Effect.try({
          try: () => JSON.parse(JSON.stringify(payload) ?? "null"),
          catch: (cause) => new BusError({ operation: "publish", cause, permanent: true })
        })
        const msgId = publishOptions?.msgId
        if (msgId !== undefined && isDuplicate(msgId, yield* Clock.currentTimeMillis)) return
        if (partition !== undefined) {
          queues[partition]!.append({
            seq: ++seq,
            subject,
            payload: stored,
            traceparent: publishOptions?.traceparent,
            deliveries: 0,
            state: "ready",
            timer: undefined
          })
        }
        yield* PubSub.publish(hub, { subject, payload: stored })
      })

    const consumePartition: BusService["consumePartition"] = (partition) => {
      const queue = Number.isInteger(partition) ? queues[partition] : undefined
      return queue === undefined
        ? Stream.fail(new BusError({ operation: "consumePartition", cause: `no partition ${partition}` }))
        : Stream.repeatEffectChunk(nextBatch(queue))
    }

    const subscribe: BusService["subscribe"] = (subjectPrefix) =>
      Effect.map(PubSub.subscribe(hub), (messages): Subscription => {
        const take: Effect.Effect<BusMessage> = Effect.flatMap(Queue.take(messages), (m) =>
          matchesPrefix(m.subject, subjectPrefix) ? Effect.succeed(m) : take
        )
        return { take }
      })

    const consumeDeadLetters: BusService["consumeDeadLetters"] = Stream.repeatEffect(
      Effect.map(Queue.take(notices), (notice): DeadLetterNotice => ({
        ...notice,
        ack: Effect.void,
        nak: (delayMs) =>
          Effect.asVoid(Effect.forkIn(Effect.zipRight(Effect.sleep(delayMs), Queue.offer(notices, notice)), scope))
      }))
    )

    const settled: Effect.Effect<void> = Effect.suspend(() =>
      queues.every((queue) => queue.idle()) ? Effect.void : Effect.zipRight(Effect.sleep("10 millis"), settled)
    )

    return { partitions, publish, consumePartition, consumeDeadLetters, subscribe, settled }
  })
