/**
 * A durable pull consumer's messages for as long as the connection lives: the client's `consume()`,
 * tuned to resume quickly after a leader election, and started again whenever it ends. Shared by
 * the partition consumers, the dead letters' and the feed's (BusJetStream.ts, EventFeedJetStream.ts).
 *
 * On a NATS cluster the server that holds a consumer's pull requests is its leader. When that server
 * dies, the requests die with it, and until another leader is elected (4–9 s: nats-server's Raft
 * election timeout) pulls go unanswered, neither refused nor served. The client notices after two
 * missed idle heartbeats; it then reads the consumer's info until it answers (a leader again) and
 * pulls again, on the same inbox, so what a live leader sends meanwhile still arrives. Between
 * attempts it waits about the pull's expiry (0.5–1.5 times it). With the client's defaults (30 s
 * expiry, 15 s heartbeat) that is half a minute before it even notices; here pulls expire after
 * 1 s and ask for an idle heartbeat every 500 ms, and consumption's requests give up after 1 s
 * (`CONSUME_API_TIMEOUT_MS`): the client notices within ~1.5 s and resumes within ~2.5 s of the
 * new leader. The cost is an expired pull renewed every second per idle consumer.
 *
 * The client's own recovery is kept, rather than closing a silent pull and opening another: a new
 * pull has a new inbox, and a pull thought dead but alive (a leader slow to answer under load) would
 * lose what it then sends to the old one until the ack wait (30 s) brings it back, behind newer
 * messages. Closed only when the client ends it (its consumer or stream deleted: read again, made
 * again if missing), or as a last resort when it has shown no sign of life (a message, a heartbeat,
 * a pull's expiry) for `STUCK_AFTER_MS`, far beyond an election.
 *
 * What a dead leader had sent and we never got, and acks sent while there was no leader, stay
 * unacked and come back after the ack wait: nothing is lost, and the store drops what it already
 * committed. Such an event reaches its agent's chain after newer ones of the same agent.
 */
import {
  type Consumer,
  type ConsumerMessages,
  type ConsumerNotification,
  JetStreamApiCodes,
  JetStreamApiError,
  type JsMsg
} from "@nats-io/jetstream"
import type { NatsConnection } from "@nats-io/transport-node"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { BusError } from "./BusError.js"
import { tryNats } from "./JetStreamSetup.js"

/** How long a pull request waits on the server before the client renews it (the client's minimum). */
export const PULL_EXPIRES_MS = 1_000
/** The server's idle heartbeat on a waiting pull request (the client's minimum). */
export const PULL_HEARTBEAT_MS = 500

/**
 * API requests of consumption (a consumer's info, making one again): answered in milliseconds when
 * the cluster has its leaders, so a request lost in an election is given up after 1 s, not the
 * client's 5 s, and tried again.
 */
export const CONSUME_API_TIMEOUT_MS = 1_000

/** No sign of life for this long: the client's iterator is taken for stuck and replaced. */
const STUCK_AFTER_MS = 30_000

/**
 * Failing this long to read a consumer, it is made again even though the server does not say it
 * is missing (on 2.9 a consumer was seen that the server could no longer open). Past any election.
 */
const REPAIR_AFTER_MS = 30_000

const backoffMs = (failures: number): number => Math.min(1_000, 100 * 2 ** failures)

/** The consumer (or its stream) does not exist: make it. */
export const isMissing = (error: BusError): boolean =>
  error.cause instanceof JetStreamApiError &&
  (error.cause.code === JetStreamApiCodes.ConsumerNotFound || error.cause.code === JetStreamApiCodes.StreamNotFound)

export interface DurableConsumeOptions {
  /** Names the consumer in logs. */
  readonly name: string
  readonly nc: NatsConnection
  /** Reads the consumer (an API request). */
  readonly get: Effect.Effect<Consumer, BusError>
  /** Makes the consumer again, and its stream if need be. */
  readonly repair: Effect.Effect<void, BusError>
  readonly maxMessages: number
  /** Each message as it arrives (plain code, on the client's callback). */
  readonly onMessage: (m: JsMsg) => void
}

/** Runs until its fiber is interrupted; fails only once the connection is closed for good. */
export const consumeDurable = (options: DurableConsumeOptions): Effect.Effect<never, BusError> =>
  Effect.gen(function* () {
    const { get, name, nc, repair } = options
    /** Consecutive failures to start consuming, and since when. */
    let failures = 0
    let failingSince = 0
    for (;;) {
      const started = yield* Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const consumer = yield* get.pipe(
          Effect.catchIf(
            (error) => isMissing(error) || (failures > 0 && now - failingSince >= REPAIR_AFTER_MS),
            () => Effect.zipRight(repair, get)
          )
        )
        return yield* start(options, consumer)
      }).pipe(Effect.either)
      if (started._tag === "Left") {
        if (nc.isClosed()) return yield* started.left
        if (failures === 0) failingSince = yield* Clock.currentTimeMillis
        yield* (failures === 0 ? Effect.logWarning : Effect.logDebug)("bus consumer not started; retrying").pipe(
          Effect.annotateLogs({ consumer: name, error: started.left.message, attempts: failures + 1 })
        )
        yield* Effect.sleep(backoffMs(failures++))
        continue
      }
      failures = 0
      const ended = yield* started.right
      if (nc.isClosed()) return yield* ended
      yield* Effect.logWarning("bus consumer ended; resuming").pipe(
        Effect.annotateLogs({ consumer: name, error: ended.message })
      )
      yield* Effect.sleep(backoffMs(0))
    }
  })

/** When the consumer last showed life: a message, or the server's heartbeat or answer to a pull. */
interface Signs {
  last: number
}

/**
 * Starts one `consume()`; the effect it returns runs it until the client ends it (or it is stuck),
 * and succeeds with why.
 */
const start = (options: DurableConsumeOptions, consumer: Consumer): Effect.Effect<Effect.Effect<BusError>, BusError> =>
  Effect.map(
    tryNats(`consume ${options.name}`, async () => {
      const signs: Signs = { last: Date.now() }
      const messages: ConsumerMessages = await consumer.consume({
        max_messages: options.maxMessages,
        expires: PULL_EXPIRES_MS,
        idle_heartbeat: PULL_HEARTBEAT_MS,
        // End on a deleted consumer or stream, so that it is read (and made) again.
        abort_on_missing_resource: true,
        callback: (m) => {
          signs.last = Date.now()
          options.onMessage(m)
        }
      })
      // Listening before any answer to the first pull can arrive (answers come from the socket).
      return { messages, statuses: messages.status(), signs }
    }),
    ({ messages, signs, statuses }) =>
      run(options.name, messages, statuses, signs).pipe(
        Effect.ensuring(Effect.promise(() => messages.close()).pipe(Effect.timeout("5 seconds"), Effect.ignore))
      )
  )

/** How often a running consumer is looked at (a recovery to log, a stuck iterator). */
const CHECK_EVERY_MS = 1_000

const run = (
  name: string,
  messages: ConsumerMessages,
  statuses: AsyncIterable<ConsumerNotification>,
  signs: Signs
): Effect.Effect<BusError> =>
  Effect.gen(function* () {
    /** When the consumer last showed life before the client found it silent (undefined: it is not). */
    let silentSince: number | undefined
    // Ends with the messages (closing them stops their status listeners).
    yield* Stream.fromAsyncIterable(statuses, (cause) => new BusError({ operation: `consume ${name}`, cause })).pipe(
      Stream.runForEach((status) =>
        Effect.gen(function* () {
          if (status.type === "heartbeat" || status.type === "discard") signs.last = Date.now()
          // Every other one at debug level, but for the renewals: a pull renewed, one expired (408).
          else if (status.type !== "next" && !(status.type === "debug" && status.code === 408))
            yield* Effect.logDebug("bus consumer status").pipe(
              Effect.annotateLogs({ consumer: name, status: JSON.stringify(status) })
            )
          if (status.type === "heartbeats_missed" && silentSince === undefined) {
            silentSince = signs.last
            yield* Effect.logWarning("bus consumer silent (its server gone?); the client pulls again").pipe(
              Effect.annotateLogs({ consumer: name, silentMs: Date.now() - silentSince })
            )
          }
        })
      ),
      Effect.ignore,
      Effect.forkScoped
    )
    const closed = Effect.map(
      Effect.promise(() => messages.closed()),
      (cause) => new BusError({ operation: `consume ${name}`, cause: cause ?? "consume ended" })
    )
    const watched = Effect.gen(function* () {
      for (;;) {
        yield* Effect.sleep(CHECK_EVERY_MS)
        // Date.now(), as the client's callbacks use.
        const now = Date.now()
        if (silentSince !== undefined && signs.last > silentSince) {
          yield* Effect.logInfo("bus consumer resumed").pipe(
            Effect.annotateLogs({ consumer: name, silentMs: signs.last - silentSince })
          )
          silentSince = undefined
        }
        if (now - signs.last > STUCK_AFTER_MS)
          return new BusError({ operation: `consume ${name}`, cause: `no sign of life for ${now - signs.last} ms` })
      }
    })
    return yield* Effect.raceFirst(closed, watched)
  }).pipe(Effect.scoped)
