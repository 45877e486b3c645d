/**
 * The bus's JetStream topology, created idempotently at start (and again whenever a consumer finds
 * it missing): three file-backed streams and one durable pull consumer per event partition.
 *
 * The events stream keeps work-queue retention: an acked event is removed, so a consumer that is
 * deleted and re-created (deliver all) resumes at the first unacked event instead of replaying the
 * partition. Decisions and dead letters keep limits retention, for replay by security teams.
 * Consumers never stop redelivering on their own (max_deliver -1): the bus counts deliveries and
 * moves an event to the dead-letter stream itself, which the server (2.9) cannot do.
 */
import {
  AckPolicy,
  DeliverPolicy,
  type JetStreamManager,
  JetStreamApiError,
  RetentionPolicy,
  type StreamConfig,
  StorageType
} from "@nats-io/jetstream"
import * as Effect from "effect/Effect"
import { BusError } from "./BusError.js"
import type { BusOptions } from "./BusOptions.js"
import { consumerName, partitionFilter, streamNames, streamSubjects } from "./Subjects.js"

const STREAM_NAME_IN_USE = 10058

export const nanos = (ms: number): number => ms * 1_000_000

export const tryNats = <A>(operation: string, run: () => Promise<A>): Effect.Effect<A, BusError> =>
  Effect.tryPromise({ try: run, catch: (cause) => new BusError({ operation, cause }) })

export const ensureStream = (
  jsm: JetStreamManager,
  config: Pick<StreamConfig, "name" | "subjects" | "retention" | "storage" | "duplicate_window"> &
    Partial<Pick<StreamConfig, "max_age">>
) =>
  tryNats(`ensureStream ${config.name}`, async () => {
    try {
      await jsm.streams.add(config)
    } catch (error) {
      if (!(error instanceof JetStreamApiError && error.code === STREAM_NAME_IN_USE)) throw error
      // Exists with other settings (a new duplicate window, say): bring it in line.
      await jsm.streams.update(config.name, config)
    }
  })

export const ensureStreams = (jsm: JetStreamManager, options: BusOptions): Effect.Effect<void, BusError> => {
  const names = streamNames(options.prefix)
  const subjects = streamSubjects(options.prefix)
  const common = { storage: StorageType.File, duplicate_window: nanos(options.duplicateWindowMs) }
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
    if (info.config.ack_wait !== editable.ack_wait || info.config.max_ack_pending !== editable.max_ack_pending) {
      await jsm.consumers.update(stream, durable, editable)
    }
  })
}
