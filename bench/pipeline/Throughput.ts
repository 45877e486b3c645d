/**
 * Throughput rows: `settings.events` events for `settings.agents` agents, published as fast as the
 * bus takes them; the time from the first publish until the sum of the chain heads' positions says
 * all are committed (polled every 20 ms). Beside them, two same-run baselines: the bus alone
 * (publish, consume, ack, no store) and the worker alone (`commitDeliveries` on partition batches,
 * no bus), so ratios stay readable on a noisy machine.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { generateSigningKey } from "../../core/Signing.js"
import type { GatewayEvent } from "../../core/schema/Event.js"
import { Bus, type Delivery } from "../../adapters/bus/Bus.js"
import { NatsConnection } from "../../adapters/bus/NatsConnection.js"
import { eventSubject, partitionOf } from "../../adapters/bus/Subjects.js"
import * as PgliteClient from "../../adapters/store/PgliteClient.js"
import * as SqlStore from "../../adapters/store/SqlStore.js"
import * as StoreDatabase from "../../adapters/store/StoreDatabase.js"
import { defaultActorsOptions, makeAgentActors } from "../../streams/AgentActors.js"
import { commitDeliveries } from "../../streams/CommitDeliveries.js"
import { removeNatsResources } from "../../test/adapters/bus/NatsSupport.js"
import { throwawayDatabase } from "../../test/support/Postgres.js"
import { type Backend, deploy, natsServer, natsUrl } from "./Deployment.js"
import { postgresPids } from "./ProcessCpu.js"
import { agentIds, awaitCommitted, type CpuShare, cpuMeterOf, makeEvents, now, publishAll, warmUp } from "./Load.js"
import { type FeatureBreakdown, profiled } from "./Profiling.js"
import { progress } from "./Progress.js"
import type { Shape } from "./Shape.js"
import { bareSource } from "./Templates.js"
import { type Measurement, openWindow } from "./Window.js"
import { settings } from "./Settings.js"
import * as SecretKeys from "../../adapters/keys/SecretKeys.js"

export interface ThroughputRow {
  readonly name: string
  /** The end-to-end rows' shape (the baselines have none: they are bare by construction). */
  readonly shape?: Shape
  readonly events: number
  readonly seconds: number
  /** When the last publish was stored, from the first publish. */
  readonly publishSeconds?: number
  readonly cpu: CpuShare
  /** The end-to-end rows: the drain, the deferred work, the CPU by feature. */
  readonly measured?: Measurement & { readonly features: FeatureBreakdown | undefined }
}

/**
 * End to end. `known`: the agents have committed before (their actors are in memory); else they are
 * new to the worker (bare only: the realistic agents' answers are captured through the deployment).
 * Timed until all are committed; the CPU counts until the deferred work is drained too.
 */
export const endToEnd = (backend: Backend, known: boolean, shape: Shape) =>
  profiled(`throughput-${known ? "known" : "new"}`, shape, (dir) =>
    Effect.gen(function* () {
      const worker = backend === "postgres" ? settings.pgWorker : "inline"
      const d = yield* deploy({
        backend,
        worker,
        partitions: settings.partitions,
        shape,
        agents: { label: "tp", count: settings.agents },
        profileDir: dir
      })
      progress(`throughput row, ${shape}: warm-up`)
      const before = yield* warmUp(d, known)
      const events = makeEvents(d.source, settings.events)
      progress(`throughput row, ${shape}: ${events.length} events`)
      const close = yield* openWindow(d)
      const start = now()
      const publishing = yield* Effect.fork(publishAll(d, events))
      const done = yield* awaitCommitted(d, before + events.length)
      const published = yield* publishing.await.pipe(Effect.flatten)
      const measured = yield* close(events.length, done)
      return {
        name: `end to end, ${backend}, ${known ? "known" : "new"} agents (worker ${worker === "process" ? "process" : "in the bench process"})`,
        shape,
        events: events.length,
        seconds: (done - start) / 1000,
        publishSeconds: (published - start) / 1000,
        cpu: measured.cpu,
        window: measured.window,
        checkpoints: events.length,
        measurement: measured
      }
    })
  ).pipe(
    Effect.map(({ features, measurement, ...row }): ThroughputRow => ({
      name: row.name,
      shape: row.shape,
      events: row.events,
      seconds: row.seconds,
      publishSeconds: row.publishSeconds,
      cpu: row.cpu,
      measured: { ...measurement, features }
    }))
  )

/** The bus alone: publish, consume every partition, ack; no store. */
export const busAlone = Effect.scoped(
  Effect.gen(function* () {
    const prefix = `benchbus${Math.random().toString(16).slice(2, 10)}`
    const url = natsUrl()
    yield* Effect.addFinalizer(() =>
      removeNatsResources(prefix).pipe(
        Effect.provide(NatsConnection.layer(url, { name: "candor-bench-cleanup" })),
        Effect.ignore
      )
    )
    const busOf = (name: string) =>
      Effect.map(
        Layer.build(
          Bus.layerJetStream({ prefix, partitions: settings.partitions }).pipe(
            Layer.provide(NatsConnection.layer(url, { name }))
          )
        ),
        (context) => Context.get(context, Bus)
      )
    const publisher = yield* busOf("candor-bench")
    const consumer = yield* busOf("candor-bench-consumer")
    let acked = 0
    for (let p = 0; p < settings.partitions; p++) {
      yield* consumer.consumePartition(p).pipe(
        Stream.runForEach((delivery) =>
          Effect.zipRight(
            delivery.ack,
            Effect.sync(() => void acked++)
          )
        ),
        Effect.forkScoped
      )
    }
    const events = makeEvents(bareSource(agentIds("bus", settings.agents)), settings.events)
    const cpu = yield* cpuMeterOf({ bench: Effect.succeed([process.pid]), nats: natsServer })
    const start = now()
    const publishing = yield* Effect.fork(
      Effect.forEach(
        events,
        (event) =>
          publisher.publish(eventSubject(event.agent_id, prefix, settings.partitions), event, {
            msgId: event.checkpoint.checkpoint_id
          }),
        { concurrency: settings.concurrency, discard: true }
      ).pipe(Effect.zipRight(Effect.sync(now)))
    )
    while (acked < events.length) yield* Effect.sleep("10 millis")
    const done = now()
    const published = yield* publishing.await.pipe(Effect.flatten)
    return {
      name: "baseline: bus alone (JetStream publish + consume + ack, no store)",
      events: events.length,
      seconds: (done - start) / 1000,
      publishSeconds: (published - start) / 1000,
      cpu: yield* cpu(events.length)
    } satisfies ThroughputRow
  })
)

/**
 * The worker alone, in this process: decode, attest and commit with `commitDeliveries`, every
 * partition's batches (of `settings.batch`) at once as the partition consumers would hand them
 * over, no bus. Agents known, as in the end-to-end row it is compared with.
 */
export const workerAlone = (backend: Backend) =>
  Effect.scoped(
    Effect.gen(function* () {
      const storeLayer =
        backend === "postgres"
          ? Layer.unwrapScoped(
              Effect.map(throwawayDatabase, (url) =>
                StoreDatabase.layer({ databaseUrl: Option.some(url), dataDir: "unused" }).pipe(
                  Layer.provide(SecretKeys.layerEphemeral)
                )
              )
            )
          : SqlStore.layer.pipe(
              Layer.provide(SecretKeys.layerEphemeral),
              Layer.provideMerge(StoreDatabase.migrated(PgliteClient.layer()))
            )
      const context = yield* Layer.build(storeLayer)
      const run = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, context)
      const actors = yield* run(makeAgentActors(defaultActorsOptions))
      const options = {
        key: generateSigningKey(),
        logOrigin: "candor.bench",
        subjectPrefix: "bench",
        conflictRetries: 3,
        retryDelayMs: 1_000,
        keepAliveMs: 10_000
      }
      const deliveryOf = (event: GatewayEvent): Delivery => ({
        subject: eventSubject(event.agent_id, "bench", settings.partitions),
        // As the bus hands it over: parsed from JSON.
        payload: JSON.parse(JSON.stringify(event)),
        deliveryCount: 1,
        ack: Effect.void,
        nak: () => Effect.void,
        working: Effect.void,
        deadLetter: () => Effect.void
      })
      const commitAll = (events: ReadonlyArray<GatewayEvent>) => {
        const byPartition = new Map<number, Array<Delivery>>()
        for (const event of events) {
          const partition = partitionOf(event.agent_id, settings.partitions)
          const deliveries = byPartition.get(partition) ?? []
          deliveries.push(deliveryOf(event))
          byPartition.set(partition, deliveries)
        }
        return Effect.forEach(
          byPartition.values(),
          (deliveries) =>
            Effect.forEach(
              Chunk.chunksOf(Chunk.unsafeFromArray(deliveries), settings.batch),
              (batch) =>
                run(commitDeliveries(actors, Chunk.toReadonlyArray(batch), options)).pipe(
                  Effect.filterOrDieMessage(
                    (outcome) => outcome.committed === batch.length,
                    "a batch was not committed"
                  )
                ),
              { discard: true }
            ),
          { concurrency: "unbounded", discard: true }
        )
      }
      const agents = agentIds("wo", settings.agents)
      yield* commitAll([
        ...makeEvents(bareSource(agentIds("warm", 100)), settings.warmup),
        ...makeEvents(bareSource(agents), agents.length)
      ])
      const events = makeEvents(bareSource(agents), settings.events)
      const cpu = yield* cpuMeterOf({
        bench: Effect.succeed([process.pid]),
        ...(backend === "postgres" ? { postgres: run(Effect.flatMap(SqlClient.SqlClient, postgresPids)) } : {})
      })
      const start = now()
      yield* commitAll(events)
      const seconds = (now() - start) / 1000
      return {
        name: `baseline: worker alone, ${backend}, known agents (commitDeliveries on partition batches of ${settings.batch}, no bus)`,
        events: events.length,
        seconds,
        cpu: yield* cpu(events.length)
      } satisfies ThroughputRow
    })
  )
