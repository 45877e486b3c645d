/**
 * The knobs both bus layers share, so the in-process bus behaves like JetStream in tests.
 */
import { DEFAULT_PREFIX, PARTITIONS } from "./Subjects.js"

export interface BusOptions {
  /** CANDOR_NATS_PREFIX: the first token of every subject, and the stem of stream names. */
  readonly prefix: string
  /** P: events are spread over partitions 0 … P-1. Fixed for the life of a deployment. */
  readonly partitions: number
  /** How long a delivery may stay unsettled before it is delivered again. */
  readonly ackWaitMs: number
  /** Deliveries of one message before it goes to the dead-letter subject. */
  readonly maxDeliver: number
  /**
   * Unsettled deliveries per partition; the consumer waits when it reaches this. It is what a worker
   * that falls behind holds in memory: the client pulls ahead as fast as messages are handed on, so
   * a worker owning all 64 partitions keeps up to 64 × this many events (raw and decoded, some
   * 13 KB each in bench:pipeline's realistic shape: 50,000 held made 650 MB of heap). Twice
   * `batchSize`: a partition still has a batch in hand while it commits the one before.
   */
  readonly maxAckPending: number
  /** The largest batch a consumer is handed at once (JetStream: messages per pull). */
  readonly batchSize: number
  /**
   * CANDOR_NATS_REPLICAS: copies of each stream (JetStream; 1, 3 or 5). Consumers take their
   * stream's count. Streams created with another count are updated to this one at start.
   */
  readonly replicas: number
  /** How long a `msgId` is remembered for deduplication. */
  readonly duplicateWindowMs: number
  /**
   * JetStream: an event waits at most this long in its partition's buffer for others to share its
   * message (EventBatch.ts); a batch already in flight for the partition makes it wait for that one.
   */
  readonly publishBatchMs: number
  /**
   * JetStream: a partition's buffer is sent at once when it holds this many events … 1 (the default)
   * turns batching off: every event is published at once as its own message, as before batches.
   * Off by default because with batches the latency row of bench:pipeline regressed at 2,000
   * events/s (p50 0.7–2.3 s against 20–40 ms) for a reason not yet found (docs/benchmarks.md, "Pipeline").
   */
  readonly publishBatchEvents: number
  /** … or this many bytes of JSON (well under NATS's 1 MB message limit). */
  readonly publishBatchBytes: number
}

export const defaultBusOptions: BusOptions = {
  prefix: DEFAULT_PREFIX,
  partitions: PARTITIONS,
  ackWaitMs: 30_000,
  maxDeliver: 5,
  maxAckPending: 512,
  batchSize: 256,
  replicas: 1,
  duplicateWindowMs: 120_000,
  publishBatchMs: 2,
  publishBatchEvents: 1,
  publishBatchBytes: 256 * 1024
}

export const busOptions = (options: Partial<BusOptions> = {}): BusOptions => ({ ...defaultBusOptions, ...options })
