/**
 * The event feed on NATS JetStream (split deployments): stream `<PREFIX>_FEED` on
 * `<prefix>.feed.<org_id|_>.<agent_id|_>.<type>` (Subjects.ts), limits retention, file storage,
 * max age 48 h, each message the `WebhookEnvelope` as JSON with `Nats-Msg-Id` = the envelope id.
 * In-cluster subscribers may read it directly (docs/stream.md).
 *
 * - `publish` is idempotent for as long as the stream keeps events: the KV bucket
 *   `<prefix>-feed-index` maps each id to its stream sequence (same max age), an id already there
 *   is not published again, and the duplicate window covers two publishers racing on one id (and
 *   spares the lookup for an envelope made within half the window: see `fresh`).
 * - `read` is an ordered consumer (no acks, recreated by the client on a gap) from a sequence:
 *   `After id` starts after the id's indexed sequence; an id not in the index (older than the
 *   stream, or published by a process that died before indexing it) reads from the oldest kept
 *   event, so nothing is missed (some may repeat). `Since` starts at the time (stream timestamps,
 *   i.e. publish time); `Now` after the stream's last sequence when the reader is created.
 *   A reader that falls `READER_BUFFER` events behind its client is ended with an error, and its
 *   client resumes with its last id.
 * - `consume(durable)` is the durable pull consumer `feed-<durable>`: explicit acks, shared by every
 *   process consuming under that name, resumed within seconds of a new leader after its server went,
 *   and re-created when missing (DurableConsume.ts).
 */
import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  type JsMsg,
  RetentionPolicy,
  StorageType
} from "@nats-io/jetstream"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { WebhookEnvelope } from "../../core/schema/WebhookEvents.js"
import { BusError } from "./BusError.js"
import {
  defaultFeedOptions,
  EventFeed,
  type FeedDelivery,
  type FeedOptions,
  type FeedPosition,
  isDurableName
} from "./EventFeed.js"
import { CONSUME_API_TIMEOUT_MS, consumeDurable, PULL_EXPIRES_MS, PULL_HEARTBEAT_MS } from "./DurableConsume.js"
import { atStart, ensureStream, nanos, openBucket, tryNats } from "./JetStreamSetup.js"
import { NatsConnection } from "./NatsConnection.js"
import { feedConsumerName, feedFilter, feedIndexBucket, feedStreamName, feedSubject } from "./Subjects.js"

/** Events a reader may hold for a slow client before it is ended (the client resumes by id). */
export const READER_BUFFER = 10_000

/** Decoded events kept for the other readers of the process. */
const RECENT_DECODED = 4_096

const encoder = new TextEncoder()
const decoder = new TextDecoder()
const decodeEnvelope = Schema.decodeUnknownOption(Schema.parseJson(WebhookEnvelope))

const publishRetry = Schedule.exponential("100 millis").pipe(Schedule.intersect(Schedule.recurs(5)))
/** An id just published elsewhere may not be indexed yet: looked up again this often before giving up. */
const lookupRetry = Schedule.spaced("100 millis").pipe(Schedule.intersect(Schedule.recurs(3)))

const settleWith = (operation: string, settle: () => void): Effect.Effect<void, BusError> =>
  Effect.try({ try: settle, catch: (cause) => new BusError({ operation, cause }) })

export const make = (
  options: Partial<FeedOptions> = {}
): Effect.Effect<EventFeed["Type"], BusError, NatsConnection | Scope.Scope> =>
  Effect.gen(function* () {
    const settings = { ...defaultFeedOptions, ...options }
    const { prefix } = settings
    const nc = yield* NatsConnection
    const js = jetstream(nc)
    const consuming = jetstream(nc, { timeout: CONSUME_API_TIMEOUT_MS })
    const jsm = yield* tryNats("jetstreamManager", () => jetstreamManager(nc))
    const stream = feedStreamName(prefix)
    const ensureFeed = ensureStream(jsm, {
      name: stream,
      subjects: [feedFilter(prefix)],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      max_age: nanos(settings.retentionMs),
      duplicate_window: nanos(settings.duplicateWindowMs),
      num_replicas: settings.replicas
    })
    yield* atStart(ensureFeed)
    const index = yield* atStart(
      openBucket(nc, feedIndexBucket(prefix), {
        history: 1,
        ttlMs: settings.retentionMs,
        replicas: settings.replicas
      })
    )

    const indexed = (id: string): Effect.Effect<Option.Option<number>, BusError> =>
      tryNats("feed index get", () => index.get(id)).pipe(
        Effect.map((entry) =>
          entry === null || entry.operation !== "PUT" ? Option.none() : Option.some(Number(entry.string()))
        )
      )

    /**
     * Whether any earlier publish of the envelope happened within the duplicate window: it was made
     * less than half the window ago (by its `created_at`), so JetStream drops a repeat by its msg id
     * and the index need not be asked. One request fewer per event on the relay's first attempts; an
     * older envelope (a retry after an outage), or one dated ahead of this clock, is looked up.
     */
    const fresh = (envelope: WebhookEnvelope): boolean => {
      const age = Date.now() - Date.parse(envelope.created_at)
      return age >= 0 && age < settings.duplicateWindowMs / 2
    }

    const publish: EventFeed["Type"]["publish"] = (envelope) =>
      Effect.gen(function* () {
        if (!fresh(envelope) && Option.isSome(yield* indexed(envelope.id))) return
        const ack = yield* tryNats("feed publish", () =>
          js.publish(feedSubject(prefix, envelope), encoder.encode(JSON.stringify(envelope)), { msgID: envelope.id })
        )
        // A duplicate's PubAck carries the original's sequence: indexing it again is harmless.
        yield* tryNats("feed index put", () => index.put(envelope.id, String(ack.seq)))
      }).pipe(
        Effect.tapError(() => Effect.ignore(ensureFeed)),
        Effect.retry(publishRetry)
      )

    /** The ordered consumer's start, and the stream time below which messages are skipped (`Since`). */
    const startOf = (from: FeedPosition) =>
      Effect.gen(function* () {
        switch (from._tag) {
          case "Now": {
            const info = yield* tryNats("feed info", () => jsm.streams.info(stream))
            return { opts: { opt_start_seq: info.state.last_seq + 1 }, notBeforeMs: 0 }
          }
          case "Since":
            return { opts: { opt_start_time: from.at.toISOString() }, notBeforeMs: from.at.getTime() }
          case "After": {
            const seq = yield* indexed(from.id).pipe(
              Effect.flatMap((found) =>
                Option.isSome(found) ? Effect.succeed(found) : Effect.fail("missing" as const)
              ),
              Effect.retry(lookupRetry),
              Effect.catchIf(
                (e): e is "missing" => e === "missing",
                () => Effect.succeed(Option.none<number>())
              )
            )
            return Option.match(seq, {
              onNone: () => ({ opts: { deliver_policy: DeliverPolicy.All }, notBeforeMs: 0 }),
              onSome: (s) => ({ opts: { opt_start_seq: s + 1 }, notBeforeMs: 0 })
            })
          }
        }
      })

    const read: EventFeed["Type"]["read"] = (from) =>
      Effect.gen(function* () {
        const { opts, notBeforeMs } = yield* startOf(from)
        const consumer = yield* tryNats("feed read", () => js.consumers.get(stream, opts))
        const arrived = yield* Mailbox.make<JsMsg, BusError>({ capacity: READER_BUFFER })
        const behind = new BusError({ operation: "feed read", cause: "reader fell behind its client" })
        const messages = yield* Effect.acquireRelease(
          tryNats("feed read", () =>
            consumer.consume({
              max_messages: 256,
              // Short, as for durable consumers: a reader whose server went is re-created in seconds.
              expires: PULL_EXPIRES_MS,
              idle_heartbeat: PULL_HEARTBEAT_MS,
              callback: (m) => {
                if (!arrived.unsafeOffer(m)) arrived.unsafeDone(Exit.fail(behind))
              }
            })
          ),
          (messages) =>
            Effect.promise(() => messages.close()).pipe(
              Effect.zipRight(Effect.promise(() => consumer.delete().catch(() => false))),
              Effect.timeout("5 seconds"),
              Effect.ignore
            )
        )
        yield* Effect.promise(() => messages.closed()).pipe(
          Effect.flatMap((ended) =>
            arrived.fail(new BusError({ operation: "feed read", cause: ended ?? "reader ended" }))
          ),
          Effect.forkScoped
        )
        // The ordered consumer may restart from its first position after a reset: never emit a sequence twice.
        let last = 0
        return Mailbox.toStream(arrived).pipe(
          Stream.filterMap((m) => {
            const seq = m.info.streamSequence
            if (seq <= last || m.info.timestampNanos / 1e6 < notBeforeMs) return Option.none()
            last = seq
            return decoded(seq, m.data)
          })
        )
      })

    /**
     * Recent events by stream sequence, decoded once for every reader of this process (they then
     * share the envelope object, and the API its encoded frame).
     */
    const recent = new Map<number, Option.Option<WebhookEnvelope>>()
    const decoded = (seq: number, data: Uint8Array): Option.Option<WebhookEnvelope> => {
      let envelope = recent.get(seq)
      if (envelope === undefined) {
        envelope = decodeEnvelope(decoder.decode(data))
        recent.set(seq, envelope)
        if (recent.size > RECENT_DECODED) recent.delete(recent.keys().next().value!)
      }
      return envelope
    }

    const ensureConsumer = (durable: string) =>
      tryNats(`feed consumer ${durable}`, () =>
        jsm.consumers.add(stream, {
          durable_name: feedConsumerName(durable),
          filter_subject: feedFilter(prefix),
          ack_policy: AckPolicy.Explicit,
          deliver_policy: DeliverPolicy.All,
          ack_wait: nanos(settings.ackWaitMs),
          max_ack_pending: settings.maxAckPending,
          max_deliver: -1
        })
      )

    const delivery = (m: JsMsg, envelope: WebhookEnvelope): FeedDelivery => ({
      envelope,
      deliveryCount: m.info.deliveryCount,
      ack: settleWith("ack", () => m.ack()),
      nak: (delayMs) => settleWith("nak", () => m.nak(delayMs))
    })

    const consume: EventFeed["Type"]["consume"] = (durable) =>
      isDurableName(durable)
        ? Stream.unwrapScoped(
            Effect.gen(function* () {
              const arrived = yield* Mailbox.make<JsMsg, BusError>()
              const get = tryNats("feed consume", () => consuming.consumers.get(stream, feedConsumerName(durable)))
              const repair = ensureConsumer(durable).pipe(
                Effect.orElse(() => Effect.zipRight(ensureFeed, ensureConsumer(durable)))
              )
              yield* consumeDurable({
                name: feedConsumerName(durable),
                nc,
                get,
                repair,
                maxMessages: 256,
                onMessage: (m) => void arrived.unsafeOffer(m)
              }).pipe(
                Effect.catchAll((error) => arrived.fail(error)),
                Effect.forkScoped
              )
              return Mailbox.toStream(arrived).pipe(
                Stream.mapEffect((m) =>
                  Option.match(decodeEnvelope(decoder.decode(m.data)), {
                    onSome: (envelope) => Effect.succeed(Option.some(delivery(m, envelope))),
                    // Not an envelope (published by hand?): no retry can deliver it.
                    onNone: () =>
                      Effect.logWarning("feed message is not an event envelope; terminated").pipe(
                        Effect.annotateLogs({ subject: m.subject, seq: m.info.streamSequence }),
                        Effect.zipRight(settleWith("term", () => m.term())),
                        Effect.as(Option.none<FeedDelivery>())
                      )
                  })
                ),
                Stream.filterMap((d) => d)
              )
            })
          )
        : Stream.fail(
            new BusError({ operation: "feed consume", cause: `bad durable name ${durable}`, permanent: true })
          )

    return EventFeed.of({ publish, read, consume })
  })

export const layer = (options: Partial<FeedOptions> = {}): Layer.Layer<EventFeed, BusError, NatsConnection> =>
  Layer.scoped(EventFeed, make(options))
