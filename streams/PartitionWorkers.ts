/**
 * The worker role: one consumer per owned partition, each committing its batches through the
 * agents' actors, plus the outbox relays. Partitions are started and stopped as ownership changes
 * (a lease gained or lost); a consumer that fails is logged and restarted, never left dead.
 *
 * Catalogue events: the event relay publishes `event` outbox items to the feed, and the webhook
 * fan-out consumes the feed under the durable name `webhooks` (shared by every worker), turning each
 * event into its deliveries; a failed fan-out is nak'd and comes back after a backoff.
 *
 * Dead letters: every event the bus gives up on is recorded, counted and announced as
 * `pipeline.dead_lettered` (streams/DeadLetters.ts), by whichever worker takes its notice.
 *
 * Reputation: each commit marks the agents it extended, and their scores are recomputed off the
 * commit path by the partition's owner (streams/ReputationWorker.ts).
 */
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberMap from "effect/FiberMap"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { AgentState } from "../adapters/bus/AgentState.js"
import { Bus } from "../adapters/bus/Bus.js"
import { EventFeed, type FeedDelivery } from "../adapters/bus/EventFeed.js"
import { DEFAULT_PREFIX, partitionOf } from "../adapters/bus/Subjects.js"
import { Store } from "../adapters/store/Store.js"
import { SigningKeys } from "../adapters/keys/SigningKeys.js"
import { make as makeWebhookSender, WebhookSender } from "../adapters/webhooks/WebhookSender.js"
import { defaultActorsOptions, makeAgentActors } from "./AgentActors.js"
import { defaultGroupCommitOptions, type GroupCommitOptions } from "./GroupCommit.js"
import { commitDeliveries } from "./CommitDeliveries.js"
import { runDeadLetterRecorder } from "./DeadLetters.js"
import { applyDecision, DECISION_OUTBOX } from "./Decisions.js"
import { EVENT_OUTBOX } from "../adapters/store/EventOutbox.js"
import { publishEvent } from "./Events.js"
import {
  exponentialBackoff,
  makeSignal,
  relayDefaults,
  type RelayOptions,
  runRelay,
  tracedHandler
} from "./OutboxRelay.js"
import { CheckpointTraces } from "./CheckpointTraces.js"
import { tracingOption } from "../adapters/tracing/Tracing.js"
import { fanOutEvent, fanOutEvents } from "./WebhookFanOut.js"
import { PartitionOwnership } from "../adapters/bus/PartitionOwnership.js"
import { WEBHOOK_OUTBOX } from "../adapters/store/WebhookDeliveryOutbox.js"
import { deliverWebhook } from "./WebhookDelivery.js"
import {
  defaultReputationWorkerOptions,
  makeReputationWorker,
  type ReputationWorkerOptions
} from "./ReputationWorker.js"

export interface WorkerOptions {
  readonly logOrigin: string
  readonly subjectPrefix: string
  readonly conflictRetries: number
  readonly retryDelayMs: number
  /** How often a batch held through a store outage is kept alive on the bus (its ack wait is 30 s). */
  readonly keepAliveMs: number
  /** The webhook relay: batch, lease, backoff (1 s, 4 s, 16 s, …) and attempts before an item is kept as dead. */
  readonly webhookRelay: Omit<RelayOptions, "kind">
  /** How often checkpoints past their card's `audit_commitment.retention_days` are deleted. */
  readonly retentionInterval: Duration.DurationInput
  /** The durable consumer of the feed the webhook fan-out runs under (one name for every worker). */
  readonly fanOutConsumer: string
  /** Delay before a failed fan-out is delivered again, by delivery count (1 s, 4 s, 16 s, … capped at 5 min). */
  readonly fanOutBackoffMs: (deliveries: number) => number
  /** How the partitions' batches are committed together (streams/GroupCommit.ts). */
  readonly groupCommit: GroupCommitOptions
  /** When reputations are recomputed (streams/ReputationWorker.ts). */
  readonly reputation: ReputationWorkerOptions
}

export const defaultWorkerOptions: WorkerOptions = {
  logOrigin: "candor.local",
  subjectPrefix: DEFAULT_PREFIX,
  conflictRetries: 3,
  retryDelayMs: 1_000,
  keepAliveMs: 10_000,
  webhookRelay: relayDefaults,
  retentionInterval: "1 hour",
  fanOutConsumer: "webhooks",
  groupCommit: defaultGroupCommitOptions,
  fanOutBackoffMs: exponentialBackoff,
  reputation: defaultReputationWorkerOptions
}

/**
 * For this long after a partition's consumer starts, its batches look up which of their events are
 * stored already, first deliveries too: the consumer starts rewound (adapters/bus/BusJetStream.ts),
 * so what the partition's last owner had in hand comes back first, and a worker that died between
 * its commit and its acks leaves committed events among them. Found by the lookup (one indexed query
 * per batch), they are dropped as duplicates; missed, the commit would meet their taken ids as a
 * conflict and rebuild every actor of the batch before it tried again: the slowest partitions of a
 * failover (bench:pipeline failover). Past the window, only redeliveries are looked up.
 */
const LOOK_UP_AFTER_START_MS = 10_000

/** The most deliveries one `commitDeliveries` attests and commits. */
const MAX_COMMIT_DELIVERIES = 512
/** Feed events fanned out to webhooks in one transaction at most. */
const FAN_OUT_BATCH = 128

const slices = <A>(items: ReadonlyArray<A>, size: number): Array<ReadonlyArray<A>> => {
  if (items.length <= size) return [items]
  const out: Array<ReadonlyArray<A>> = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}

/**
 * Runs until its scope closes. Webhooks go out through the `WebhookSender` in the context when there
 * is one (tests), else through the default undici sender.
 */
export const runWorkers = (options: Partial<WorkerOptions> = {}) =>
  Effect.gen(function* () {
    const settings = { ...defaultWorkerOptions, ...options }
    const bus = yield* Bus
    const ownership = yield* PartitionOwnership
    const { active: key } = yield* SigningKeys
    // Subscribed before the first batch: a settings change (card, conscience values, mode) drops the agent's cached context.
    const changes = yield* (yield* AgentState).subscribeChanges
    const actors = yield* makeAgentActors({ ...defaultActorsOptions, commit: settings.groupCommit }, changes)
    const sender = Option.getOrElse(yield* Effect.serviceOption(WebhookSender), () => makeWebhookSender())
    // One signal per relay: a commit that wrote items of its kind wakes it.
    const wakeDecisions = yield* makeSignal
    const wakeWebhooks = yield* makeSignal
    const wakeEvents = yield* makeSignal
    // Read once: without it, no batch or relay builds a span.
    const recorder = yield* tracingOption
    const tracing = recorder === undefined ? undefined : { recorder, checkpoints: new CheckpointTraces() }
    const commitOptions = { ...settings, key, tracing }
    const lookingUpOptions = { ...commitOptions, lookUpStored: true }
    // The agents of the partitions this worker owns now: the sweep recomputes only those.
    const owns = (agentId: string) =>
      Effect.map(ownership.owned.get, (owned) => owned.has(partitionOf(agentId, bus.partitions)))
    const reputation = yield* makeReputationWorker(settings.reputation, owns)

    const consume = (partition: number) =>
      Effect.flatMap(Clock.currentTimeMillis, (startedAt) =>
        bus.consumePartition(partition).pipe(
          Stream.chunks,
          // A backlog arrives as one chunk of many batch messages: committed a slice at a time, so that
          // attesting one never holds the event loop (leases, other partitions) for long.
          Stream.mapConcat((chunk) => slices(Chunk.toReadonlyArray(chunk), MAX_COMMIT_DELIVERIES)),
          Stream.mapEffect((batch) =>
            Effect.flatMap(Clock.currentTimeMillis, (now) =>
              commitDeliveries(
                actors,
                batch,
                now - startedAt < LOOK_UP_AFTER_START_MS ? lookingUpOptions : commitOptions
              )
            ).pipe(
              Effect.tap(({ agentIds }) => Effect.sync(() => reputation.mark(agentIds))),
              Effect.tap(({ outboxKinds }) =>
                Effect.all(
                  [
                    outboxKinds.has(DECISION_OUTBOX) ? Queue.offer(wakeDecisions, undefined) : Effect.void,
                    outboxKinds.has(WEBHOOK_OUTBOX) ? Queue.offer(wakeWebhooks, undefined) : Effect.void,
                    outboxKinds.has(EVENT_OUTBOX) ? Queue.offer(wakeEvents, undefined) : Effect.void
                  ],
                  { discard: true }
                )
              )
            )
          ),
          Stream.runDrain
        )
      ).pipe(
        Effect.catchAllCause((cause) =>
          Effect.logError("partition consumer stopped; restarting").pipe(
            Effect.annotateLogs({ partition, cause: cause._tag })
          )
        ),
        Effect.repeat(Schedule.spaced("1 second")),
        Effect.annotateLogs({ partition })
      )

    const running = yield* FiberMap.make<number>()
    yield* ownership.owned.changes.pipe(
      Stream.runForEach((owned) =>
        Effect.gen(function* () {
          const stale = Array.from(running, ([partition]) => partition).filter((partition) => !owned.has(partition))
          for (const partition of stale) yield* FiberMap.remove(running, partition)
          for (const partition of owned)
            yield* FiberMap.run(running, partition, consume(partition), { onlyIfMissing: true })
        })
      ),
      Effect.forkScoped
    )

    // Decisions: publish to the alert/containment subjects; containment into the stored settings and to the gateways.
    yield* runRelay(
      { ...relayDefaults, kind: DECISION_OUTBOX } satisfies RelayOptions,
      tracedHandler(tracing, DECISION_OUTBOX, applyDecision),
      wakeDecisions
    ).pipe(Effect.forkScoped)
    // Webhooks: signed POSTs to the registered endpoints.
    yield* runRelay(
      { ...settings.webhookRelay, kind: WEBHOOK_OUTBOX } satisfies RelayOptions,
      tracedHandler(tracing, WEBHOOK_OUTBOX, (item) =>
        Effect.provideService(deliverWebhook(item), WebhookSender, sender)
      ),
      wakeWebhooks
    ).pipe(Effect.forkScoped)

    // Dead letters: recorded with their event, counted, logged (never their payload).
    yield* runDeadLetterRecorder({
      subjectPrefix: settings.subjectPrefix,
      retryDelayMs: settings.retryDelayMs,
      wakeEvents
    }).pipe(Effect.forkScoped)

    // Catalogue events: from the outbox to the feed.
    yield* runRelay(
      { ...relayDefaults, kind: EVENT_OUTBOX } satisfies RelayOptions,
      tracedHandler(tracing, EVENT_OUTBOX, publishEvent),
      wakeEvents
    ).pipe(Effect.forkScoped)
    // The webhook fan-out: each feed event becomes its webhook deliveries; acked once they are stored.
    // What arrives together is fanned out in one transaction; a batch that fails is fanned out event
    // by event, so one event the database refuses delays only itself.
    const feed = yield* EventFeed
    const fanOutAlone = (delivery: FeedDelivery) =>
      fanOutEvent(delivery.envelope).pipe(
        Effect.zipRight(delivery.ack),
        Effect.catchAll((error) =>
          Effect.logWarning("webhook fan-out failed; retrying").pipe(
            Effect.annotateLogs({ event: delivery.envelope.id, deliveries: delivery.deliveryCount, error: error._tag }),
            Effect.zipRight(Effect.ignore(delivery.nak(settings.fanOutBackoffMs(delivery.deliveryCount))))
          )
        )
      )
    const fanOut = (batch: Chunk.Chunk<FeedDelivery>) =>
      fanOutEvents(Chunk.toReadonlyArray(Chunk.map(batch, (delivery) => delivery.envelope))).pipe(
        Effect.zipRight(Effect.forEach(batch, (delivery) => Effect.ignore(delivery.ack), { discard: true })),
        Effect.catchAll(() => Effect.forEach(batch, fanOutAlone, { concurrency: 8, discard: true }))
      )
    yield* feed.consume(settings.fanOutConsumer).pipe(
      Stream.groupedWithin(FAN_OUT_BATCH, "5 millis"),
      Stream.mapEffect(fanOut, { concurrency: 4, unordered: true }),
      Stream.runDrain,
      Effect.catchAllCause((cause) =>
        Effect.logError("webhook fan-out stopped; restarting").pipe(Effect.annotateLogs({ cause: cause._tag }))
      ),
      Effect.repeat(Schedule.spaced("1 second")),
      Effect.forkScoped
    )

    // Retention: idempotent, so every worker may run it; the logs (chain, Merkle nodes, tree heads) stay.
    const store = yield* Store
    yield* Effect.flatMap(Clock.currentTimeMillis, (now) => store.purgeExpired(new Date(now))).pipe(
      Effect.tap((deleted) =>
        deleted > 0 ? Effect.log("retention: expired rows deleted").pipe(Effect.annotateLogs({ deleted })) : Effect.void
      ),
      Effect.catchAll((error) =>
        Effect.logWarning("retention run failed").pipe(Effect.annotateLogs({ error: error._tag }))
      ),
      Effect.repeat(Schedule.spaced(settings.retentionInterval)),
      Effect.forkScoped
    )
  })
