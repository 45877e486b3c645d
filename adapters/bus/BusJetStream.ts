/**
 * The bus on NATS JetStream (server 2.9: no subject transforms, so the publisher names the partition).
 *
 * Events can be published in micro-batches per partition (off by default: `publishBatchEvents` 1) (EventBatch.ts is the wire format): a publish
 * joins its partition's buffer, which is sent as one message when it holds `publishBatchEvents`
 * events or `publishBatchBytes`, else within `publishBatchMs`; one batch per partition is in flight at
 * a time (the next waits for its PubAck), so a partition's events are stored in publish order and,
 * under load, batches grow by themselves. Every caller's publish resolves on its batch's PubAck.
 * Publishing retries transient failures; every message carries a Nats-Msg-Id (a batch's own, or for
 * an event sent alone the caller's msgId, else a fresh one) so a retry of a publish that was in fact
 * stored is dropped by the server. An event republished by its caller (the gateway after an outage)
 * may be stored twice when it travels in a batch: the store drops it by its checkpoint id.
 *
 * A partition consumer runs the client's `consume()` into a mailbox: the stream's chunks are what
 * has arrived, a batch message unpacked into one delivery per event (settled together, see
 * `batchDeliveries`). A pull whose server went (a new leader elected, on a cluster) is made again
 * within seconds of the new leader, and whenever `consume()` ends (consumer deleted, stream missing)
 * the consumer is read again, made again if missing, for as long as the connection lives
 * (DurableConsume.ts).
 *
 * Every copy to the dead-letter stream carries, besides the original subject, deliveries and reason,
 * an id of its own (`Candor-Dead-Letter-Id`) and its time (`Candor-Dead-At`); `consumeDeadLetters`
 * reads those headers (never the body) from the shared durable consumer `dead-letters`.
 */
import { headers } from "@nats-io/transport-node"
import { jetstream, jetstreamManager, type JsMsg } from "@nats-io/jetstream"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Mailbox from "effect/Mailbox"
import * as Queue from "effect/Queue"
import * as Runtime from "effect/Runtime"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import type { BusMessage, BusService, DeadLetterNotice, Delivery, Subscription } from "./BusContract.js"
import { BusError } from "./BusError.js"
import type { BusOptions } from "./BusOptions.js"
import { CONSUME_API_TIMEOUT_MS, consumeDurable, isMissing } from "./DurableConsume.js"
import { BATCH_HEADER, BATCH_VERSION, batchBody, type BatchedEvent, batchEvents, batchPart } from "./EventBatch.js"
import {
  atStart,
  ensureConsumer,
  ensureDeadLetterConsumer,
  ensureStreams,
  refused,
  rewindConsumer,
  tryNats
} from "./JetStreamSetup.js"
import { NatsConnection } from "./NatsConnection.js"
import { TRACEPARENT } from "../tracing/TraceParent.js"
import {
  consumerName,
  DEAD_LETTER_CONSUMER,
  deadLetterSubject,
  matchesPrefix,
  partitionFilter,
  partitionOfSubject,
  streamNames,
  streamOf,
  wildcardsOf
} from "./Subjects.js"

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

/** One event of a batch, as it would have been published alone. */
const encodeEvent = (event: BatchedEvent): Uint8Array => encoder.encode(JSON.stringify(event.payload) ?? "null")

const isNoStream = (error: BusError): boolean =>
  error.cause instanceof Error && error.cause.name === "JetStreamNotEnabled"

/**
 * A PubAck lost to a reconnect, or refused while the stream elects a leader on a cluster, is retried
 * (the msgId makes the retry harmless): after 100 ms, then seven more times, 200 ms to 500 ms apart
 * (about 3 s in all). No more than 500 ms apart, so a publish goes through within that of the
 * stream's new leader; the caller retries beyond (the gateway holds its events until the bus is back).
 */
const FIRST_RETRY = "100 millis"
const publishRetry = Schedule.exponential("200 millis").pipe(
  Schedule.union(Schedule.spaced("500 millis")),
  Schedule.intersect(Schedule.recurs(7))
)

/** A missing stream is looked for at most this often, however many publishes fail. */
const STREAM_CHECK_EVERY_MS = 1_000

/** `working` of a batch's deliveries, called for each of them at once, reaches the server once per this. */
const WORKING_EVERY_MS = 100

/** An event waiting in its partition's buffer for its batch to be sent. */
interface Pending {
  readonly subject: string
  readonly json: string
  readonly msgId: string | undefined
  readonly traceparent: string | undefined
  readonly done: (result: Effect.Effect<void, BusError>) => void
}

/** A lone message's headers: its `traceparent` when it has one (batch entries carry theirs in the body). */
const traceHeaders = (traceparent: string | undefined): ReturnType<typeof headers> | undefined => {
  if (traceparent === undefined) return undefined
  const h = headers()
  h.set(TRACEPARENT, traceparent)
  return h
}

interface PartitionBuffer {
  pending: Array<Pending>
  bytes: number
  /** A batch of this partition is waiting for its PubAck: the next one waits for it (order). */
  sending: boolean
}

export const make = (options: BusOptions): Effect.Effect<BusService, BusError, NatsConnection | Scope.Scope> =>
  Effect.gen(function* () {
    const { batchSize, maxDeliver, partitions, prefix } = options
    const nc = yield* NatsConnection
    const js = jetstream(nc)
    const jsm = yield* tryNats("jetstreamManager", () => jetstreamManager(nc))
    // Consumption's own requests (a consumer read, made or rewound) give up sooner than publishes.
    const consuming = jetstream(nc, { timeout: CONSUME_API_TIMEOUT_MS })
    const consumingJsm = yield* tryNats("jetstreamManager", () =>
      jetstreamManager(nc, { timeout: CONSUME_API_TIMEOUT_MS })
    )
    const names = streamNames(prefix)
    yield* atStart(ensureStreams(jsm, options))
    yield* Effect.forEach(
      Array.from({ length: partitions }, (_, p) => p),
      (p) =>
        atStart(ensureConsumer(jsm, options, p)).pipe(
          // A consumer the server refuses to open (2.9, when this add raced another worker's rewind:
          // "meta.inf: no such file") is its owner's to repair when it consumes (`repair` below);
          // failing here stopped a second worker from starting at all.
          Effect.catchIf(refused, (error) =>
            Effect.logWarning("bus consumer not ensured at start; its owner repairs it").pipe(
              Effect.annotateLogs({ partition: p, error: error.message })
            )
          )
        ),
      { concurrency: 8, discard: true }
    )

    // Side work (a stream looked for, batches sent) runs on fibers of its own, outside any caller's.
    const runtime = yield* Effect.runtime<never>()

    /**
     * No stream answered a publish: it was deleted (or the server lost its storage), or, on a cluster,
     * it has no leader for a few seconds, which looks the same. Put it back only if it is missing;
     * looked for in the background, at most once a second, so a burst of failing publishes (every
     * publish of every gateway during an election) is not a burst of requests to create streams.
     */
    let streamCheckedAt = 0
    const restoreStreams = (): void => {
      const now = Date.now()
      if (now - streamCheckedAt < STREAM_CHECK_EVERY_MS) return
      streamCheckedAt = now
      Runtime.runFork(runtime)(
        Effect.forEach(Object.values(names), (name) => tryNats("stream info", () => jsm.streams.info(name)), {
          discard: true
        }).pipe(
          Effect.catchIf(isMissing, () => ensureStreams(jsm, options)),
          Effect.ignore
        )
      )
    }

    /** One message, awaiting its PubAck, with the retries of a transient failure. */
    const send = (subject: string, data: Uint8Array, msgID: string, h?: ReturnType<typeof headers>) => {
      const attempt = tryNats("publish", () => js.publish(subject, data, { msgID, ...(h && { headers: h }) })).pipe(
        Effect.tapError((error) => Effect.sync(() => (isNoStream(error) ? restoreStreams() : undefined)))
      )
      return Effect.catchAll(attempt, () =>
        Effect.zipRight(Effect.sleep(FIRST_RETRY), Effect.retry(attempt, publishRetry))
      )
    }

    // Batches are sent on fibers of their own (`runtime`): a caller interrupted while it waits does
    // not take its batch, or the other callers' events in it, with it.
    const buffers: Array<PartitionBuffer> = Array.from({ length: partitions }, () => ({
      pending: [],
      bytes: 0,
      sending: false
    }))
    let timer: ReturnType<typeof setTimeout> | undefined
    let sending = 0
    let drained: (() => void) | undefined

    /** Sends the oldest events of a partition's buffer as one message (a batch of one as a plain event). */
    const sendBatch = (buffer: PartitionBuffer): void => {
      let count = 0
      let bytes = 0
      while (
        count < buffer.pending.length &&
        (count === 0 || (count < options.publishBatchEvents && bytes < options.publishBatchBytes))
      ) {
        bytes += buffer.pending[count]!.json.length
        count++
      }
      const batch = buffer.pending.splice(0, count)
      buffer.bytes -= bytes
      buffer.sending = true
      sending++
      const first = batch[0]!
      let message: Effect.Effect<unknown, BusError>
      if (batch.length === 1) {
        message = send(
          first.subject,
          encoder.encode(first.json),
          first.msgId ?? randomUUID(),
          traceHeaders(first.traceparent)
        )
      } else {
        const h = headers()
        h.set(BATCH_HEADER, BATCH_VERSION)
        const body = batchBody(batch.map((p) => batchPart(p.subject, p.json, p.traceparent)))
        message = send(first.subject, encoder.encode(body), randomUUID(), h)
      }
      Runtime.runFork(runtime)(message).addObserver((exit) => {
        const result = Exit.isSuccess(exit)
          ? Effect.void
          : Effect.fail(
              Exit.isFailure(exit) && exit.cause._tag === "Fail"
                ? exit.cause.error
                : new BusError({ operation: "publish", cause: "interrupted" })
            )
        for (const p of batch) p.done(result)
        buffer.sending = false
        sending--
        // What arrived meanwhile has waited for this PubAck already: sent at once.
        if (buffer.pending.length > 0) sendBatch(buffer)
        else if (sending === 0) drained?.()
      })
    }

    const flushAll = (): void => {
      timer = undefined
      for (const buffer of buffers) if (buffer.pending.length > 0 && !buffer.sending) sendBatch(buffer)
    }

    yield* Effect.addFinalizer(() =>
      Effect.async<void>((resume) => {
        // What is still buffered at shutdown is sent, and waited for (a few seconds at most).
        if (timer !== undefined) clearTimeout(timer)
        flushAll()
        if (sending === 0) return resume(Effect.void)
        drained = () => resume(Effect.void)
      }).pipe(Effect.timeout("5 seconds"), Effect.ignore)
    )

    const publishEvent = (
      buffer: PartitionBuffer,
      subject: string,
      json: string,
      msgId: string | undefined,
      traceparent: string | undefined
    ) =>
      Effect.async<void, BusError>((resume) => {
        buffer.pending.push({ subject, json, msgId, traceparent, done: resume })
        buffer.bytes += json.length
        if (buffer.sending) return
        if (buffer.pending.length >= options.publishBatchEvents || buffer.bytes >= options.publishBatchBytes)
          sendBatch(buffer)
        else timer ??= setTimeout(flushAll, options.publishBatchMs)
      })

    // Every response of every gateway goes through here, so the happy path is kept plain: no
    // generator, and the retry schedule is only set up once an attempt has failed.
    const publish: BusService["publish"] = (subject, payload, publishOptions) => {
      const partition = partitionOfSubject(subject, prefix)
      if (streamOf(subject, prefix) === undefined || (partition !== undefined && partition >= partitions)) {
        return Effect.fail(
          new BusError({ operation: "publish", cause: `no stream stores subject ${subject}`, permanent: true })
        )
      }
      let json: string
      try {
        json = JSON.stringify(payload) ?? "null"
      } catch (cause) {
        return Effect.fail(new BusError({ operation: "publish", cause, permanent: true }))
      }
      // Events are batched; decisions (few, and read one by one by security tooling) go alone.
      if (partition !== undefined && options.publishBatchEvents > 1)
        return publishEvent(buffers[partition]!, subject, json, publishOptions?.msgId, publishOptions?.traceparent)
      return Effect.asVoid(
        send(
          subject,
          encoder.encode(json),
          publishOptions?.msgId ?? randomUUID(),
          traceHeaders(publishOptions?.traceparent)
        )
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

    /** Runs `consume()` into the mailbox, started again whenever it ends (DurableConsume.ts). */
    const superviseConsumer = (partition: number, arrived: Mailbox.Mailbox<JsMsg, BusError>) => {
      const durable = consumerName(partition, partitions)
      const get = tryNats("consume", () => consuming.consumers.get(names.events, durable))
      // A missing consumer or stream (deleted by hand, a server that lost its storage, a rewind) is
      // made again. Escalated only on a refusal: a request unanswered (an election) is retried as is.
      const repair = ensureConsumer(consumingJsm, options, partition).pipe(
        Effect.catchIf(isMissing, () =>
          Effect.zipRight(ensureStreams(jsm, options), ensureConsumer(consumingJsm, options, partition))
        ),
        // A consumer the server can no longer open (seen on 2.9 when a delete raced another process's
        // add: "meta.inf: no such file", on every attempt after) is deleted and made again; this
        // process owns the partition, and a work queue loses nothing with its consumer.
        Effect.catchIf(refused, () => rewindConsumer(consumingJsm, options, partition))
      )
      return consumeDurable({
        name: durable,
        nc,
        get,
        repair,
        maxMessages: batchSize,
        onMessage: (m) => void arrived.unsafeOffer(m)
      }).pipe(Effect.catchAll((error) => arrived.fail(error)))
    }

    /**
     * Messages past `maxDeliver` (and undecodable ones) go to the dead-letter stream, then are
     * terminated; the others become deliveries, a batch one per event.
     */
    const settleDeadLetters = (chunk: Chunk.Chunk<JsMsg>): Effect.Effect<Chunk.Chunk<Delivery>, BusError> =>
      Effect.gen(function* () {
        const live: Array<Delivery> = []
        for (const m of chunk) {
          const decoded = decode(m.data)
          const batched = m.headers?.get(BATCH_HEADER) === BATCH_VERSION
          const events = batched && decoded !== undefined ? batchEvents(decoded.value) : undefined
          const readable = decoded !== undefined && (!batched || events !== undefined)
          if (readable && m.info.deliveryCount <= maxDeliver) {
            if (events === undefined) live.push(delivery(m, decoded.value))
            else for (const d of batchDeliveries(m, events)) live.push(d)
            continue
          }
          // This delivery is the bus's own: the consumers had the ones before it.
          const given = m.info.deliveryCount - 1
          const reason = readable ? `delivered ${given} times` : batched ? "not a batch" : "not JSON"
          // If the copy fails, the message stays pending and is dead-lettered on its next delivery.
          yield* (
            events === undefined
              ? copyToDead(m.subject, m.data, `${names.events}-${m.info.streamSequence}`, given, reason)
              : Effect.forEach(
                  events,
                  (event, i) => copyToDead(event.subject, encodeEvent(event), batchedId(m, i), given, reason),
                  { discard: true }
                )
          ).pipe(
            Effect.zipRight(terminate(m)),
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
        // A batch's subject is its first event's: below a partition, listen to all of it and let
        // each event's own subject decide.
        const partition = partitionOfSubject(subjectPrefix, prefix)
        const wildcards = partition === undefined ? wildcardsOf(subjectPrefix) : [partitionFilter(prefix, partition)]
        yield* Effect.acquireRelease(
          Effect.sync(() =>
            wildcards.map((wildcard) =>
              nc.subscribe(wildcard, {
                callback: (error, m) => {
                  if (error !== null) return
                  const payload = decode(m.data)?.value
                  const events = m.headers?.get(BATCH_HEADER) === BATCH_VERSION ? batchEvents(payload) : undefined
                  if (events === undefined) {
                    if (matchesPrefix(m.subject, subjectPrefix))
                      Queue.unsafeOffer(messages, { subject: m.subject, payload })
                  } else
                    for (const event of events)
                      if (matchesPrefix(event.subject, subjectPrefix))
                        Queue.unsafeOffer(messages, { subject: event.subject, payload: event.payload })
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
     * A copy of an event on `<prefix>.dead.events.…` with the reason, deduplicated by the original's
     * stream sequence (and, in a batch, its index), so that copying again after a failure is harmless.
     */
    const copyToDead = (
      subject: string,
      data: Uint8Array,
      msgID: string,
      /** Deliveries of the event to its consumers. */
      deliveries: number,
      reason: string
    ): Effect.Effect<void, BusError> => {
      const h = headers()
      h.set("Candor-Original-Subject", subject)
      h.set("Candor-Deliveries", String(deliveries))
      h.set("Candor-Reason", reason.replace(/[\r\n]+/g, " ").slice(0, 1_024))
      // A copy sent again after a failure is dropped by its msgID, so the first copy's id is the one kept.
      h.set("Candor-Dead-Letter-Id", randomUUID())
      h.set("Candor-Dead-At", new Date().toISOString())
      return Effect.asVoid(
        tryNats("deadLetter", () => js.publish(deadLetterSubject(subject, prefix), data, { msgID, headers: h }))
      )
    }

    /** Never delivered again. */
    const terminate = (m: JsMsg) => settleWith("term", () => m.term())

    const delivery = (m: JsMsg, payload: unknown): Delivery => ({
      subject: m.subject,
      payload,
      deliveryCount: m.info.deliveryCount,
      traceparent: m.headers?.get(TRACEPARENT) || undefined,
      ack: settleWith("ack", () => m.ack()),
      nak: (delayMs) => settleWith("nak", () => m.nak(delayMs)),
      working: settleWith("working", () => m.working()),
      deadLetter: (reason) =>
        Effect.zipRight(
          copyToDead(m.subject, m.data, `${names.events}-${m.info.streamSequence}`, m.info.deliveryCount, reason),
          terminate(m)
        )
    })

    /**
     * The events of a batch message, settled together: the message is acked once every one of them
     * is acked (or dead-lettered); a nak of any hands the whole message back, and on its redelivery
     * the store drops the events already committed. A dead letter copies that one event.
     */
    const batchDeliveries = (m: JsMsg, events: ReadonlyArray<BatchedEvent>): Array<Delivery> => {
      let unsettled = events.length
      let handedBack = false
      let lastWorking = 0
      const deliveryCount = m.info.deliveryCount
      return events.map((event, i) => {
        let settled = false
        const settleOne = () => {
          if (settled) return
          settled = true
          if (--unsettled === 0 && !handedBack) m.ack()
        }
        return {
          subject: event.subject,
          payload: event.payload,
          deliveryCount,
          traceparent: typeof event.traceparent === "string" ? event.traceparent : undefined,
          ack: settleWith("ack", settleOne),
          nak: (delayMs) =>
            settleWith("nak", () => {
              settled = true
              if (handedBack) return
              handedBack = true
              m.nak(delayMs)
            }),
          // Called for every delivery of a held batch at once: one in-progress ack for them all.
          working: settleWith("working", () => {
            const now = Date.now()
            if (handedBack || unsettled === 0 || now - lastWorking < WORKING_EVERY_MS) return
            lastWorking = now
            m.working()
          }),
          deadLetter: (reason) =>
            Effect.zipRight(
              copyToDead(event.subject, encodeEvent(event), batchedId(m, i), deliveryCount, reason),
              settleWith("deadLetter", settleOne)
            )
        }
      })
    }

    const batchedId = (m: JsMsg, index: number) => `${names.events}-${m.info.streamSequence}-${index}`

    /** A dead letter's notice, from the headers of its copy: the body (the event) is never read. */
    const notice = (m: JsMsg): DeadLetterNotice => {
      const header = (name: string) => m.headers?.get(name) || undefined
      const deliveries = Number(header("Candor-Deliveries"))
      return {
        id: header("Candor-Dead-Letter-Id") ?? `${names.dead}-${m.info.streamSequence}`,
        subject: header("Candor-Original-Subject") ?? `${prefix}.${m.subject.slice(`${prefix}.dead.`.length)}`,
        reason: header("Candor-Reason") ?? "unknown",
        deliveries: Number.isSafeInteger(deliveries) && deliveries >= 0 ? deliveries : 0,
        at: header("Candor-Dead-At") ?? new Date(Math.floor(Number(m.info.timestampNanos) / 1e6)).toISOString(),
        ack: settleWith("ack", () => m.ack()),
        nak: (delayMs) => settleWith("nak", () => m.nak(delayMs))
      }
    }

    const consumeDeadLetters: BusService["consumeDeadLetters"] = Stream.unwrapScoped(
      Effect.gen(function* () {
        const arrived = yield* Mailbox.make<JsMsg, BusError>()
        const get = tryNats("consume dead letters", () => consuming.consumers.get(names.dead, DEAD_LETTER_CONSUMER))
        const repair = ensureDeadLetterConsumer(jsm, options).pipe(
          Effect.orElse(() => Effect.zipRight(ensureStreams(jsm, options), ensureDeadLetterConsumer(jsm, options)))
        )
        yield* consumeDurable({
          name: DEAD_LETTER_CONSUMER,
          nc,
          get,
          repair,
          maxMessages: batchSize,
          onMessage: (m) => void arrived.unsafeOffer(m)
        }).pipe(
          Effect.catchAll((error) => arrived.fail(error)),
          Effect.forkScoped
        )
        return Stream.map(Mailbox.toStream(arrived), notice)
      })
    )

    return { partitions, publish, consumePartition, consumeDeadLetters, subscribe }
  })

const settleWith = (operation: string, settle: () => void): Effect.Effect<void, BusError> =>
  Effect.try({ try: settle, catch: (cause) => new BusError({ operation, cause }) })
