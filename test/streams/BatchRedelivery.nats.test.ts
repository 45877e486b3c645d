/**
 * A batch message (several events of one partition in one JetStream message) redelivered after some
 * of its events were committed: `commitDeliveries` drops those by checkpoint id and commits the rest,
 * each event once and in publish order, and the message is acked. On the real NATS server and the
 * real store (PGlite).
 */
import { jetstreamManager } from "@nats-io/jetstream"
import { expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { generateSigningKey } from "../../core/Signing.js"
import { Bus, type Delivery } from "../../adapters/bus/Bus.js"
import { NatsConnection } from "../../adapters/bus/NatsConnection.js"
import { eventSubject, streamNames } from "../../adapters/bus/Subjects.js"
import * as SqlStore from "../../adapters/store/SqlStore.js"
import { Store } from "../../adapters/store/Store.js"
import * as SecretKeys from "../../adapters/keys/SecretKeys.js"
import { defaultActorsOptions, makeAgentActors } from "../../streams/AgentActors.js"
import { commitDeliveries, type CommitOptions } from "../../streams/CommitDeliveries.js"
import { agentIn } from "../adapters/bus/BusConformance.js"
import { NatsTest, natsForPrefix, uniquePrefix, waitUntil } from "../adapters/bus/NatsSupport.js"
import { gatewayEvent } from "../support/Events.js"
import { describeIntegration } from "../support/Integration.js"
import { migratedPglite } from "../support/PgliteTemplate.js"

const P = 4

const Pglite = SqlStore.layer.pipe(Layer.provide(SecretKeys.layerEphemeral), Layer.provideMerge(migratedPglite))

describeIntegration("nats", "a redelivered batch message", () => {
  it.live(
    "commits an event already committed from it once, and the others after it, in order",
    () => {
      const prefix = uniquePrefix("redeliver")
      const options: CommitOptions = {
        key: generateSigningKey(),
        logOrigin: "candor.test",
        subjectPrefix: prefix,
        conflictRetries: 3,
        retryDelayMs: 100,
        keepAliveMs: 10_000
      }
      return Effect.gen(function* () {
        const bus = yield* Bus
        const store = yield* Store
        const actors = yield* makeAgentActors(defaultActorsOptions)
        const agentId = agentIn(1, P)
        const events = [0, 1, 2].map(() => gatewayEvent(agentId))
        // Published together: one message.
        yield* Effect.forEach(
          events,
          (event) => bus.publish(eventSubject(agentId, prefix, P), event, { msgId: event.checkpoint.checkpoint_id }),
          { concurrency: "unbounded", discard: true }
        )
        const jsm = yield* Effect.flatMap(NatsConnection, (nc) => Effect.promise(() => jetstreamManager(nc)))
        const stored = Effect.promise(() => jsm.streams.info(streamNames(prefix).events)).pipe(
          Effect.map((i) => i.state.messages)
        )
        expect(yield* stored).toBe(1)

        const outcomes: Array<{ committed: number; duplicates: number }> = []
        yield* bus.consumePartition(1).pipe(
          Stream.chunks,
          Stream.mapEffect((chunk) => {
            const deliveries: ReadonlyArray<Delivery> = Chunk.toReadonlyArray(chunk)
            // First delivery: only the first event is committed (a worker that stopped after it, say);
            // the others are handed back, which hands back the message.
            return deliveries[0]!.deliveryCount === 1
              ? Effect.zipLeft(
                  commitDeliveries(actors, deliveries.slice(0, 1), options),
                  Effect.forEach(deliveries.slice(1), (d) => d.nak(100), { discard: true })
                ).pipe(Effect.map((o) => void outcomes.push(o)))
              : Effect.map(commitDeliveries(actors, deliveries, options), (o) => void outcomes.push(o))
          }),
          Stream.take(2),
          Stream.runDrain,
          Effect.timeout("20 seconds")
        )
        expect(outcomes.map(({ committed, duplicates }) => [committed, duplicates])).toEqual([
          [1, 0],
          [2, 1]
        ])
        const page = yield* store.listCheckpoints({ agentId, limit: 10, offset: 0 })
        expect(page.total).toBe(3)
        expect((yield* store.loadLogState(agentId)).head.position).toBe(3)
        // In publish order along the chain (the page is newest first).
        expect(page.items.map((c) => c.checkpoint_id).reverse()).toEqual(events.map((e) => e.checkpoint.checkpoint_id))
        yield* waitUntil(
          "the message acked",
          Effect.map(stored, (n) => n === 0)
        )
      }).pipe(
        Effect.scoped,
        Effect.provide(
          Layer.mergeAll(
            Bus.layerJetStream({ prefix, partitions: P, publishBatchMs: 50, publishBatchEvents: 64 }).pipe(
              Layer.provideMerge(NatsTest)
            ),
            Pglite
          )
        ),
        Effect.provide(natsForPrefix(prefix))
      )
    },
    30_000
  )
})
