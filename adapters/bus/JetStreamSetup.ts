/**
 * The bus's JetStream topology, created idempotently at start (and again whenever a consumer finds
 * it missing): three file-backed streams, one durable pull consumer per event partition, and the
 * durable consumer of the dead letters' notices that the workers share (`dead-letters`).
 *
 * The events stream keeps work-queue retention: an acked event is removed, so a consumer that is
 * deleted and re-created (deliver all) resumes at the first unacked event instead of replaying the
 * partition. Decisions and dead letters keep limits retention, for replay by security teams.
 * Consumers never stop redelivering on their own (max_deliver -1): the bus counts deliveries and
 * moves an event to the dead-letter stream itself, which the server (2.9) cannot do.
 *
 * Every stream and KV bucket is kept in `replicas` copies (CANDOR_NATS_REPLICAS: 1, or 3 or 5 on a
 * NATS cluster); consumers take their stream's count. One made with another count (a deployment
 * moving onto a cluster) is updated to it where it is found: NATS moves a clustered stream between
 * replica counts in place, and a single server refuses more than 1, which fails the start with the
 * server's reason rather than running with fewer copies than configured.
 */
import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  type JetStreamManager,
  jetstreamManager,
  JetStreamApiCodes,
  JetStreamApiError,
  RetentionPolicy,
  type StreamConfig,
  StorageType
} from "@nats-io/jetstream"
import { type KV, Kvm } from "@nats-io/kv"
import type { NatsConnection } from "@nats-io/transport-node"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import { BusError } from "./BusError.js"
import type { BusOptions } from "./BusOptions.js"
import { consumerName, DEAD_LETTER_CONSUMER, partitionFilter, streamNames, streamSubjects } from "./Subjects.js"

const STREAM_NAME_IN_USE = 10058
const CONSUMER_NOT_FOUND = 10014

export const nanos = (ms: number): number => ms * 1_000_000

export const tryNats = <A>(operation: string, run: () => Promise<A>): Effect.Effect<A, BusError> =>
  Effect.tryPromise({ try: run, catch: (cause) => new BusError({ operation, cause }) })

/** JetStream "temporarily unavailable" (an asset without a leader) and "no suitable peers" (servers still joining). */
const CLUSTER_NOT_AVAILABLE = 10008
const NO_SUITABLE_PEERS = 10005

/** Worth trying again: no answer (a timeout, no responders, no connection), or a cluster between leaders. */
const transient = (error: BusError): boolean =>
  !(error.cause instanceof JetStreamApiError) ||
  error.cause.code === CLUSTER_NOT_AVAILABLE ||
  error.cause.code === NO_SUITABLE_PEERS

/**
 * The setup a process does at start (streams, consumers, buckets), retried for up to 30 s while it
 * fails for want of an answer: on a NATS cluster a stream or bucket just made, or moved to another
 * replica count, has no leader for a moment, and processes starting together race to make them.
 * A refusal (a single server asked for 3 replicas, say) fails the start at once, with its reason.
 */
export const atStart = <A>(setup: Effect.Effect<A, BusError>): Effect.Effect<A, BusError> =>
  setup.pipe(
    Effect.tapError((error) =>
      transient(error)
        ? Effect.logWarning("NATS setup not answered yet; retrying").pipe(Effect.annotateLogs({ error: error.message }))
        : Effect.void
    ),
    Effect.retry({ schedule: startRetry, while: transient })
  )

const startRetry = Schedule.exponential("200 millis").pipe(
  Schedule.union(Schedule.spaced("2 seconds")),
  Schedule.upTo("30 seconds")
)

/** A compare-and-set write refused: the key (or stream) was written since the revision given. */
export const isWrongLastSequence = (error: BusError): boolean =>
  error.cause instanceof JetStreamApiError &&
  (error.cause.code === JetStreamApiCodes.StreamWrongLastSequence ||
    error.cause.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)

export const ensureStream = (
  jsm: JetStreamManager,
  config: Pick<StreamConfig, "name" | "subjects" | "retention" | "storage" | "duplicate_window" | "num_replicas"> &
    Partial<Pick<StreamConfig, "max_age">>
) =>
  tryNats(`ensureStream ${config.name}`, async () => {
    try {
      await jsm.streams.add(config)
    } catch (error) {
      if (!(error instanceof JetStreamApiError && error.code === STREAM_NAME_IN_USE)) throw error
      // Exists with other settings (a new duplicate window, another replica count): bring it in line.
      await jsm.streams.update(config.name, config)
    }
  })

export const ensureStreams = (jsm: JetStreamManager, options: BusOptions): Effect.Effect<void, BusError> => {
  const names = streamNames(options.prefix)
  const subjects = streamSubjects(options.prefix)
  const common = {
    storage: StorageType.File,
    duplicate_window: nanos(options.duplicateWindowMs),
    num_replicas: options.replicas
  }
  return Effect.forEach(
    [
      { ...common, name: names.events, subjects: [...subjects.events], retention: RetentionPolicy.Workqueue },
      { ...common, name: names.decisions, subjects: [...subjects.decisions], retention: RetentionPolicy.Limits },
      { ...common, name: names.dead, subjects: [...subjects.dead], retention: RetentionPolicy.Limits }
    ],
    (config) => ensureStream(jsm, config),
    { discard: true }
  )
}

export interface BucketOptions {
  /** Values kept per key. */
  readonly history: number
  /** Keys nobody writes for this long are removed (the bucket's max_age); unset: kept. */
  readonly ttlMs?: number
  /** Copies of the bucket's stream (CANDOR_NATS_REPLICAS). */
  readonly replicas: number
  /** How long its requests wait for an answer (default: the client's, 5 s). */
  readonly timeoutMs?: number
}

/**
 * Opens a KV bucket, creating it with `replicas` copies, or updating the replica count of one made
 * with another (the client's `create` only binds to an existing bucket, whatever its settings).
 */
export const openBucket = (nc: NatsConnection, name: string, options: BucketOptions): Effect.Effect<KV, BusError> =>
  tryNats(`open bucket ${name}`, async () => {
    const kv = await new Kvm(
      options.timeoutMs === undefined ? nc : jetstream(nc, { timeout: options.timeoutMs })
    ).create(name, {
      history: options.history,
      replicas: options.replicas,
      ...(options.ttlMs !== undefined && { ttl: options.ttlMs })
    })
    const status = await kv.status()
    if (status.replicas !== options.replicas) {
      const jsm = await jetstreamManager(nc)
      await jsm.streams.update(status.streamInfo.config.name, { num_replicas: options.replicas })
    }
    return kv
  })

/**
 * The keys of `bucket` under `prefix` (`worker.`, say) that hold a value now, by plain requests: the
 * stream's subjects, then each one's last entry (a deleted key keeps its delete marker). Not
 * `kv.keys()`: it reads through a push consumer and ends on a delivery that says nothing is pending,
 * or after 5 s without one. A key rewritten between that consumer's creation and its first delivery
 * (another worker's heartbeat, every 500 ms; history 1 drops the old value) leaves the server's count
 * one too high: every delivery then says one is pending, and the rewrites leave no 5 s gap. A worker
 * started beside another (under load, where that window is long) waited there, silently, for a
 * minute or more.
 */
export const liveKeys = (
  nc: NatsConnection,
  kv: KV,
  bucket: string,
  prefix: string
): Effect.Effect<ReadonlyArray<string>, BusError> =>
  tryNats(`list keys ${bucket}`, async () => {
    const jsm = await jetstreamManager(nc)
    const subjectOf = `$KV.${bucket}.`
    const info = await jsm.streams.info(`KV_${bucket}`, { subjects_filter: `${subjectOf}${prefix}>` })
    const keys = Object.keys(info.state.subjects ?? {}).map((subject) => subject.slice(subjectOf.length))
    const entries = await Promise.all(keys.map((key) => kv.get(key)))
    return keys.filter((_, i) => entries[i]?.operation === "PUT")
  })

export const ensureConsumer = (
  jsm: JetStreamManager,
  options: BusOptions,
  partition: number
): Effect.Effect<void, BusError> => {
  const stream = streamNames(options.prefix).events
  const durable = consumerName(partition, options.partitions)
  const editable = { ack_wait: nanos(options.ackWaitMs), max_ack_pending: options.maxAckPending, max_deliver: -1 }
  return tryNats(`ensureConsumer ${durable}`, async () => {
    const info = await jsm.consumers.add(stream, {
      ...editable,
      durable_name: durable,
      filter_subject: partitionFilter(options.prefix, partition),
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All
    })
    // Racing a rewind elsewhere (delete, then add), the answer can lack the config: read it again.
    const config = info.config ?? (await jsm.consumers.info(stream, durable)).config
    if (config.ack_wait !== editable.ack_wait || config.max_ack_pending !== editable.max_ack_pending) {
      await jsm.consumers.update(stream, durable, editable)
    }
  }).pipe(Effect.retry({ schedule: raceRetry, while: refused }))
}

/**
 * The workers' shared consumer of the dead-letter stream: each dead letter once to one of them, from
 * the stream's start (dead letters copied before the consumer existed are recorded too).
 */
export const ensureDeadLetterConsumer = (jsm: JetStreamManager, options: BusOptions): Effect.Effect<void, BusError> =>
  tryNats(`ensureConsumer ${DEAD_LETTER_CONSUMER}`, () =>
    jsm.consumers.add(streamNames(options.prefix).dead, {
      durable_name: DEAD_LETTER_CONSUMER,
      filter_subject: streamSubjects(options.prefix).dead[0]!,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: nanos(options.ackWaitMs),
      max_ack_pending: options.maxAckPending,
      max_deliver: -1
    })
  ).pipe(Effect.asVoid)

/**
 * A consumer deleted and re-created by another process meanwhile (a rewind): try again, briefly.
 * Only what the server refused: a request that got no answer (an election) is the caller's to retry.
 */
const raceRetry = Schedule.spaced("50 millis").pipe(Schedule.intersect(Schedule.recurs(3)))
/** The server answered, and refused (not for want of a leader). */
export const refused = (error: BusError): boolean => !transient(error)

/**
 * Rewinds a partition's durable consumer to its first unacked event, before a new owner consumes it:
 * deleted, then created again (deliver all). The events stream is a work queue, so what was acked is
 * gone and "all" starts at the first event not acked. The events its last owner had in hand (a worker
 * SIGKILLed, stalled or stopping mid-batch) are thus delivered again at once and in stream order,
 * ahead of newer events of the same agents, instead of after the ack wait (30 s), behind them, out of
 * each agent's response order. What was in fact committed comes back too: the store's checkpoint-id
 * dedupe acks it without committing it twice. (A `by_start_sequence` consumer at the ack floor + 1
 * would do the same, but would no longer match the config `ensureConsumer` creates and checks.)
 *
 * A zombie owner still pulling from the deleted consumer loses it: its pull ends, and its acks (sent
 * only after a commit) are harmless on the new one.
 */
export const rewindConsumer = (
  jsm: JetStreamManager,
  options: BusOptions,
  partition: number
): Effect.Effect<void, BusError> => {
  const stream = streamNames(options.prefix).events
  const durable = consumerName(partition, options.partitions)
  return tryNats(`rewindConsumer ${durable}`, async () => {
    try {
      await jsm.consumers.delete(stream, durable)
    } catch (error) {
      if (!(error instanceof JetStreamApiError && error.code === CONSUMER_NOT_FOUND)) throw error
    }
  }).pipe(
    // "directory not empty": the server was still writing the consumer's state (an ack, another
    // process's add) as it removed it; a moment later the delete goes through.
    Effect.retry({ schedule: raceRetry, while: refused }),
    Effect.zipRight(ensureConsumer(jsm, options, partition))
  )
}
