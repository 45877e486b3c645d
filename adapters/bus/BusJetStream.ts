/**
 * The bus on NATS JetStream (server 2.9: no subject transforms, so the publisher names the partition).
 *
 * Publishing awaits the PubAck and retries transient failures; every publish carries a Nats-Msg-Id
 * (the caller's, else a fresh one) so a retry of a publish that was in fact stored is dropped by the
 * server. A partition consumer runs the client's `consume()` into a mailbox: the stream's chunks are
 * what has arrived. Whenever `consume()` ends (consumer deleted, stream missing, heartbeats lost) the
 * consumer is re-created and consumption resumes, with backoff, for as long as the connection lives.
 */
import { headers } from "@nats-io/transport-node"
import { jetstream, jetstreamManager, type JsMsg } from "@nats-io/jetstream"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Mailbox from "effect/Mailbox"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import type { BusMessage, BusService, Delivery, Subscription } from "./BusContract.js"
import { BusError } from "./BusError.js"
import type { BusOptions } from "./BusOptions.js"
import { ensureConsumer, ensureStreams, rewindConsumer, tryNats } from "./JetStreamSetup.js"
import { NatsConnection } from "./NatsConnection.js"
import { consumerName, deadLetterSubject, partitionOfSubject, streamNames, streamOf, wildcardsOf } from "./Subjects.js"

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** JSON, or undefined for bytes that are not (never published through this bus). */
const decode = (data: Uint8Array): { readonly value: unknown } | undefined => {
  try {
    return { value: JSON.parse(decoder.decode(data)) }
  } catch {
    return undefined
  }
}

const isNoStream = (error: BusError): boolean =>
  error.cause instanceof Error && error.cause.name === "JetStreamNotEnabled"

/**
 * A PubAck lost to a reconnect is retried (the msgId makes the retry harmless): after 100 ms, then
 * five more times, 200 ms to 1.6 s apart.
 */
const FIRST_RETRY = "100 millis"
const publishRetry = Schedule.exponential("200 millis").pipe(Schedule.intersect(Schedule.recurs(4)))

/** Re-creating a consumer after it ended: quickly at first, then every few seconds, forever. */
const resumeRetry = Schedule.exponential("100 millis").pipe(Schedule.union(Schedule.spaced("5 seconds")))

export const make = (options: BusOptions): Effect.Effect<BusService, BusError, NatsConnection | Scope.Scope> =>
  Effect.gen(function* () {
    const { batchSize, maxDeliver, partitions, prefix } = options
    const nc = yield* NatsConnection
    const js = jetstream(nc)
    const jsm = yield* tryNats("jetstreamManager", () => jetstreamManager(nc))
    const names = streamNames(prefix)
    yield* ensureStreams(jsm, options)
    yield* Effect.forEach(
      Array.from({ length: partitions }, (_, p) => p),
      (p) => ensureConsumer(jsm, options, p),
      { concurrency: 8, discard: true }
    )

    // Every response of every gateway goes through here, so the happy path is kept plain: no
    // generator, and the retry schedule is only set up once an attempt has failed.
    const publish: BusService["publish"] = (subject, payload, publishOptions) => {
      const partition = partitionOfSubject(subject, prefix)
      if (streamOf(subject, prefix) === undefined || (partition !== undefined && partition >= partitions)) {
        return Effect.fail(
          new BusError({ operation: "publish", cause: `no stream stores subject ${subject}`, permanent: true })
        )
      }
      let data: Uint8Array
      try {
        data = encoder.encode(JSON.stringify(payload) ?? "null")
      } catch (cause) {
        return Effect.fail(new BusError({ operation: "publish", cause, permanent: true }))
      }
      const msgID = publishOptions?.msgId ?? randomUUID()
      const attempt = tryNats("publish", () => js.publish(subject, data, { msgID })).pipe(
        // No stream answered: it was deleted (or the server lost its storage). Put it back, then retry.
        Effect.tapError((error) => (isNoStream(error) ? Effect.ignore(ensureStreams(jsm, options)) : Effect.void))
      )
      return Effect.catchAll(attempt, () =>
        Effect.zipRight(Effect.sleep(FIRST_RETRY), Effect.retry(attempt, publishRetry))
      )
    }

    const consumePartition: BusService["consumePartition"] = (partition) =>
      Number.isInteger(partition) && partition >= 0 && partition < partitions
        ? Stream.unwrapScoped(
            Effect.gen(function* () {
              const arrived = yield* Mailbox.make<JsMsg, BusError>()
              // What the partition's last owner left unacked comes back at once, ahead of newer events.
              yield* rewindConsumer(jsm, options, partition).pipe(
                Effect.catchAll((error) =>
                  Effect.logWarning("bus consumer not rewound").pipe(Effect.annotateLogs({ error: error.message }))
                )
              )
              // Deliveries not settled when the stream stops are redelivered after the ack wait. Not
              // nak'd at once: on server 2.9 such naks were seen going straight back to the stopped pull
              // request (registered until it expires), which only spent a delivery.
              yield* superviseConsumer(partition, arrived).pipe(Effect.forkScoped)
              return Mailbox.toStream(arrived).pipe(Stream.mapChunksEffect((chunk) => settleDeadLetters(chunk)))
            })
          )
        : Stream.fail(new BusError({ operation: "consumePartition", cause: `no partition ${partition}` }))

    /** Runs `consume()` into the mailbox, re-creating the consumer whenever it ends. */
    const superviseConsumer = (partition: number, arrived: Mailbox.Mailbox<JsMsg, BusError>) => {
      const durable = consumerName(partition, partitions)
      const once = Effect.gen(function* () {
        // A missing stream (deleted by hand, or a server that lost its storage) is re-created too.
        yield* ensureConsumer(jsm, options, partition).pipe(
          Effect.orElse(() => Effect.zipRight(ensureStreams(jsm, options), ensureConsumer(jsm, options, partition)))
        )
        const consumer = yield* tryNats("consume", () => js.consumers.get(names.events, durable))
        const messages = yield* Effect.acquireRelease(
          tryNats("consume", () =>
            consumer.consume({
              max_messages: batchSize,
              // End on a deleted consumer or stream, so that we re-create it.
              abort_on_missing_resource: true,
              callback: (m) => void arrived.unsafeOffer(m)
            })
          ),
          (messages) => Effect.promise(() => messages.close()).pipe(Effect.timeout("5 seconds"), Effect.ignore)
        )
        const ended = yield* Effect.promise(() => messages.closed())
        return yield* new BusError({ operation: `consume ${durable}`, cause: ended ?? "consume ended" })
      }).pipe(Effect.scoped)
      return once.pipe(
        Effect.tapError((error) =>
          Effect.logWarning("bus consumer ended; resuming").pipe(
            Effect.annotateLogs({ consumer: durable, error: error.message })
          )
        ),
        // Only a closed connection is final; anything else is retried.
        Effect.catchAll((error) => (nc.isClosed() ? Effect.fail(error) : Effect.void)),
        Effect.repeat(resumeRetry),
        Effect.catchAll((error) => arrived.fail(error))
      )
    }

    /** Deliveries past `maxDeliver` (and undecodable ones) go to the dead-letter stream, then are terminated. */
    const settleDeadLetters = (chunk: Chunk.Chunk<JsMsg>): Effect.Effect<Chunk.Chunk<Delivery>, BusError> =>
      Effect.gen(function* () {
        const live: Array<Delivery> = []
        for (const m of chunk) {
          const decoded = decode(m.data)
          if (decoded !== undefined && m.info.deliveryCount <= maxDeliver) {
            live.push(delivery(m, decoded.value))
            continue
          }
          // If the copy fails, the event stays pending and is dead-lettered on its next delivery.
          yield* deadLetter(m, decoded === undefined ? "not JSON" : `delivered ${m.info.deliveryCount - 1} times`).pipe(
            Effect.catchAll((error) =>
              Effect.logWarning("bus dead letter failed").pipe(
                Effect.annotateLogs({ subject: m.subject, error: error.message })
              )
            )
          )
        }
        return Chunk.unsafeFromArray(live)
      })

    const subscribe: BusService["subscribe"] = (subjectPrefix) =>
      Effect.gen(function* () {
        const messages = yield* Queue.unbounded<BusMessage>()
        yield* Effect.acquireRelease(
          Effect.sync(() =>
            wildcardsOf(subjectPrefix).map((wildcard) =>
              nc.subscribe(wildcard, {
                callback: (error, m) => {
                  if (error === null)
                    Queue.unsafeOffer(messages, { subject: m.subject, payload: decode(m.data)?.value })
                }
              })
            )
          ),
          (subs) => Effect.sync(() => subs.forEach((sub) => sub.unsubscribe()))
        )
        // The server knows of the subscription once the flush returns: publishes after this are seen.
        yield* Effect.promise(() => nc.flush())
        return { take: Queue.take(messages) } satisfies Subscription
      })

    /**
     * A copy on `<prefix>.dead.events.…` with the reason, deduplicated by the original's stream
     * sequence, then the original terminated (never delivered again).
     */
    const deadLetter = (m: JsMsg, reason: string): Effect.Effect<void, BusError> => {
      const h = headers()
      h.set("Candor-Original-Subject", m.subject)
      h.set("Candor-Deliveries", String(m.info.deliveryCount))
      h.set("Candor-Reason", reason.replace(/[\r\n]+/g, " ").slice(0, 1_024))
      return tryNats("deadLetter", () =>
        js.publish(deadLetterSubject(m.subject, prefix), m.data, {
          msgID: `${names.events}-${m.info.streamSequence}`,
          headers: h
        })
      ).pipe(
        Effect.zipRight(
          Effect.try({ try: () => m.term(), catch: (cause) => new BusError({ operation: "term", cause }) })
        )
      )
    }

    const delivery = (m: JsMsg, payload: unknown): Delivery => ({
      subject: m.subject,
      payload,
      deliveryCount: m.info.deliveryCount,
      ack: settleWith("ack", () => m.ack()),
      nak: (delayMs) => settleWith("nak", () => m.nak(delayMs)),
      working: settleWith("working", () => m.working()),
      deadLetter: (reason) => deadLetter(m, reason)
    })

    return { partitions, publish, consumePartition, subscribe }
  })

const settleWith = (operation: string, settle: () => void): Effect.Effect<void, BusError> =>
  Effect.try({ try: settle, catch: (cause) => new BusError({ operation, cause }) })
