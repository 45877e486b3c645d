/**
 * What the integration tests share: a deployment of their own (a throwaway PostgreSQL database, a
 * unique NATS prefix, one signing key for all its workers), the test side's view of it (the store
 * on that database and a publishing bus), and the checks run once the load is over: every event
 * committed exactly once into records that verify, and nothing left on the stream.
 */
import { jetstreamManager } from "@nats-io/jetstream"
import { Kvm } from "@nats-io/kv"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import { expect } from "vitest"
import { formatSecretKey, generateSecretKey, type SecretKey } from "../../core/SecretBox.js"
import { formatSigningKey, generateSigningKey, type SigningKey } from "../../core/Signing.js"
import type { GatewayEvent } from "../../core/schema/Event.js"
import { Bus } from "../../adapters/bus/Bus.js"
import { NatsConnection } from "../../adapters/bus/NatsConnection.js"
import { consumerName, eventSubject, leaseBucket, streamNames } from "../../adapters/bus/Subjects.js"
import * as SqlStore from "../../adapters/store/SqlStore.js"
import { Store } from "../../adapters/store/Store.js"
import { removeNatsResources, testNatsUrl, uniquePrefix } from "../adapters/bus/NatsSupport.js"
import { committedCount, verifyAgentRecord } from "../streams/PipelineChecks.js"
import { gatewayEvent } from "../support/Events.js"
import { throwawayDatabase } from "../support/Postgres.js"
import type { WorkerProcess, WorkerProcessOptions } from "../support/WorkerProcess.js"
import * as SecretKeys from "../../adapters/keys/SecretKeys.js"

export const PARTITIONS = 8
/** The workers' CANDOR_LOG_ORIGIN (unset: the default). */
export const LOG_ORIGIN = "candor.local"

export interface Deployment {
  readonly databaseUrl: string
  readonly natsUrl: string
  readonly prefix: string
  /** CANDOR_NATS_REPLICAS of its workers and of the test's own bus. */
  readonly replicas: number
  readonly key: SigningKey
  /** The key-encryption key every worker and the observer share. */
  readonly secretKey: SecretKey
  /** The environment of one more worker of this deployment. */
  readonly worker: (workerId: string) => WorkerProcessOptions
}

/**
 * A fresh database and NATS prefix, both removed when the scope closes (after the workers it
 * outlives). `natsUrl` may list several servers (a cluster), `replicas` is their CANDOR_NATS_REPLICAS.
 */
export const deployment = (
  label: string,
  natsUrl: string = testNatsUrl(),
  replicas = 1
): Effect.Effect<Deployment, unknown, Scope.Scope> =>
  Effect.gen(function* () {
    const databaseUrl = Redacted.value(yield* throwawayDatabase)
    const prefix = uniquePrefix(label)
    yield* Effect.addFinalizer(() =>
      removeNatsResources(prefix).pipe(
        Effect.provide(NatsConnection.layer(natsUrl, { name: "candor-test-cleanup" })),
        Effect.timeout("10 seconds"),
        Effect.ignore
      )
    )
    const key = generateSigningKey()
    const signingKey = formatSigningKey(key)
    const secretKey = generateSecretKey()
    return {
      databaseUrl,
      natsUrl,
      prefix,
      replicas,
      key,
      secretKey,
      worker: (workerId) => ({
        workerId,
        databaseUrl,
        natsUrl,
        prefix,
        partitions: PARTITIONS,
        signingKey,
        secretKey: formatSecretKey(secretKey),
        replicas
      })
    }
  })

/**
 * The test's side: the store on the deployment's database (migrated by the workers, so build it once
 * one is up), and a bus on its NATS with the workers' options, to publish with.
 */
export const observer = (d: Deployment): Layer.Layer<Store | Bus | NatsConnection | SqlClient.SqlClient, unknown> =>
  Layer.mergeAll(
    SqlStore.layer.pipe(
      Layer.provide(SecretKeys.layerFromKeys([d.secretKey])),
      Layer.provideMerge(PgClient.layer({ url: Redacted.make(d.databaseUrl), applicationName: "candor-test" }))
    ),
    // The workers' replica count: a bus that re-creates a stream must not scale it back.
    Bus.layerJetStream({ prefix: d.prefix, partitions: PARTITIONS, replicas: d.replicas }).pipe(
      Layer.provideMerge(NatsConnection.layer(d.natsUrl, { name: "candor-test", reconnectWaitMs: 100 }))
    )
  )

/** `count` events spread round-robin over `agents` agents named after `label`. */
export const makeEvents = (label: string, agents: number, count: number): ReadonlyArray<GatewayEvent> => {
  const ids = Array.from({ length: agents }, (_, i) => `agt-${label}-${i}`)
  return Array.from({ length: count }, (_, i) => gatewayEvent(ids[i % agents]!))
}

export const agentsOf = (events: ReadonlyArray<GatewayEvent>): ReadonlyArray<string> => [
  ...new Set(events.map((e) => e.agent_id))
]

/**
 * Publishes every event, as a gateway would, with the checkpoint id as the message id. A publish
 * that fails (NATS down) is tried again until `timeoutMs`: the msgId and the store's dedupe make a
 * retry of a publish that was in fact stored harmless.
 */
export const publishAll = (prefix: string, events: ReadonlyArray<GatewayEvent>, timeoutMs = 45_000) =>
  Effect.flatMap(Bus, (bus) =>
    Effect.forEach(
      events,
      (event) =>
        bus
          .publish(eventSubject(event.agent_id, prefix, PARTITIONS), event, { msgId: event.checkpoint.checkpoint_id })
          .pipe(Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.upTo(`${timeoutMs} millis`)))),
      { concurrency: 8, discard: true }
    )
  )

/** What a steady load has published so far. */
export interface Load {
  /** Each agent's checkpoint ids, in publish order (acknowledged publishes only). */
  readonly published: Map<string, Array<string>>
  /** Every event whose publish was acknowledged, in order. */
  readonly events: Array<GatewayEvent>
  /** The agent whose event is being published now: stored perhaps, not acknowledged yet. */
  inFlight: string | undefined
  /** Set to stop the load after the publish in flight. */
  done: boolean
}

export const newLoad = (agents: ReadonlyArray<string>): Load => ({
  published: new Map(agents.map((a) => [a, []])),
  events: [],
  inFlight: undefined,
  done: false
})

/**
 * Publishes round-robin over `agents` at `rate` events/s, one after the other (so each agent's
 * publish order is its stream order), until `load.done`. A failed publish is retried for
 * `retryMs` (the msgId makes a retry of a stored one harmless).
 */
export const steadyLoad = (prefix: string, agents: ReadonlyArray<string>, rate: number, load: Load, retryMs = 10_000) =>
  Effect.gen(function* () {
    const bus = yield* Bus
    const start = Date.now()
    for (let i = 0; !load.done; i++) {
      // Pacing the load generator, not waiting for a condition.
      const wait = start + (i * 1_000) / rate - Date.now()
      if (wait > 0) yield* Effect.sleep(`${wait} millis`)
      const event = gatewayEvent(agents[i % agents.length]!)
      load.inFlight = event.agent_id
      yield* bus
        .publish(eventSubject(event.agent_id, prefix, PARTITIONS), event, { msgId: event.checkpoint.checkpoint_id })
        .pipe(Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo(`${retryMs} millis`))))
      load.published.get(event.agent_id)!.push(event.checkpoint.checkpoint_id)
      load.events.push(event)
      load.inFlight = undefined
    }
  })

/** The agent's checkpoint ids in chain order. */
export const chainOf = (agentId: string) =>
  Effect.gen(function* () {
    const store = yield* Store
    const page = yield* store.listCheckpoints({ agentId, limit: 10_000, offset: 0 })
    const certificates = yield* Effect.forEach(page.items, (c) => store.getCertificate(c.checkpoint_id), {
      concurrency: 8
    })
    return certificates
      .map((c) => c!)
      .sort((a, b) => a.chain.position - b.chain.position)
      .map((c) => c.subject.checkpoint_id)
  })

/** Committed checkpoints of each of these agents (absent: none), in one query. */
export const committedByAgent = (agentIds: ReadonlyArray<string>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ readonly agent_id: string; readonly n: number }>`
      select agent_id, count(*)::int as n from checkpoints where agent_id in ${sql.in(agentIds)} group by agent_id`.pipe(
      Effect.map((rows) => new Map(rows.map((r) => [r.agent_id, r.n])))
    )
  )

/**
 * Partition → worker id, as the lease bucket says now (empty before any worker made the bucket).
 * Fails when the bucket does not answer (on a cluster, while it elects a leader).
 */
export const leaseHolders = (prefix: string): Effect.Effect<ReadonlyMap<number, string>, unknown, NatsConnection> =>
  Effect.flatMap(NatsConnection, (nc) =>
    Effect.tryPromise(async () => {
      const holders = new Map<number, string>()
      const kv = await new Kvm(nc).open(leaseBucket(prefix)).catch(() => undefined)
      if (kv === undefined) return holders
      for await (const key of await kv.keys("lease.>")) {
        const entry = await kv.get(key)
        if (entry?.operation === "PUT") holders.set(Number(key.slice("lease.".length)), entry.string())
      }
      return holders
    })
  )

/** How many partitions each worker holds. */
export const sharesOf = (holders: ReadonlyMap<number, string>): ReadonlyMap<string, number> => {
  const shares = new Map<string, number>()
  for (const worker of holders.values()) shares.set(worker, (shares.get(worker) ?? 0) + 1)
  return shares
}

/** Waits (30 s at most) until w1 and w2 hold 4 of the 8 partitions each, no partition held twice. */
export const awaitEvenSplit = (prefix: string) =>
  eventually(
    "a 4/4 split",
    Effect.map(leaseHolders(prefix), (holders) => {
      const shares = sharesOf(holders)
      return holders.size === PARTITIONS && shares.get("w1") === 4 && shares.get("w2") === 4
    }),
    30_000
  )

/** Polls `condition` every 50 ms until it holds; fails naming `what` after `timeoutMs`. */
export const eventually = <E, R>(what: string, condition: Effect.Effect<boolean, E, R>, timeoutMs: number) =>
  condition.pipe(
    Effect.filterOrFail(
      (ok) => ok,
      () => new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    ),
    Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo(`${timeoutMs} millis`))),
    Effect.asVoid
  )

/**
 * A read of the test's own from NATS, asked again while it goes unanswered (on a cluster, a stream
 * electing a leader) for up to 30 s.
 */
export const natsRead = <A>(read: () => Promise<A>): Effect.Effect<A> =>
  Effect.tryPromise(read).pipe(
    Effect.retry(Schedule.spaced("200 millis").pipe(Schedule.upTo("30 seconds"))),
    Effect.orDie
  )

/** Events on the dead-letter stream: given up on, so never committed. */
export const deadLettered = (prefix: string): Effect.Effect<number, never, NatsConnection> =>
  Effect.flatMap(NatsConnection, (nc) =>
    natsRead(async () => (await (await jetstreamManager(nc)).streams.info(streamNames(prefix).dead)).state.messages)
  )

/**
 * Waits until all `events` are committed. A dead letter fails at once: an event given up on is never
 * committed, so waiting longer cannot help.
 */
export const awaitAll = (prefix: string, events: ReadonlyArray<GatewayEvent>, timeoutMs: number) =>
  Effect.gen(function* () {
    const committed = yield* committedCount(agentsOf(events))
    const dead = yield* deadLettered(prefix)
    if (dead > 0)
      return yield* Effect.die(new Error(`${dead} events dead-lettered (${committed} of ${events.length} committed)`))
    if (committed < events.length) return yield* Effect.fail(new Error(`${committed} of ${events.length} committed`))
  }).pipe(
    Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo(`${timeoutMs} millis`))),
    Effect.mapError((error) => new Error(`timed out after ${timeoutMs} ms: ${error.message}`))
  )

/**
 * Exactly once: each agent's stored checkpoints are exactly the ones published for it (none missing,
 * none twice), its chain and Merkle log verify, and its signed tree head covers all of them.
 */
export const expectExactlyOnce = (events: ReadonlyArray<GatewayEvent>, key: SigningKey) =>
  Effect.gen(function* () {
    const store = yield* Store
    const published = new Map<string, Array<string>>()
    for (const event of events) {
      const ids = published.get(event.agent_id) ?? []
      ids.push(event.checkpoint.checkpoint_id)
      published.set(event.agent_id, ids)
    }
    yield* Effect.forEach(
      published,
      ([agentId, ids]) =>
        Effect.gen(function* () {
          const page = yield* store.listCheckpoints({ agentId, limit: ids.length + 10, offset: 0 })
          expect(page.total).toBe(ids.length)
          expect(page.items.map((c) => c.checkpoint_id).sort()).toEqual([...ids].sort())
          expect(yield* verifyAgentRecord(agentId, key, LOG_ORIGIN)).toBe(ids.length)
        }),
      { concurrency: 4, discard: true }
    )
  })

/** Per partition: events not yet delivered, and delivered but not acked. */
export const backlog = (
  prefix: string
): Effect.Effect<ReadonlyArray<{ readonly pending: number; readonly unacked: number }>, never, NatsConnection> =>
  Effect.flatMap(NatsConnection, (nc) =>
    natsRead(async () => {
      const jsm = await jetstreamManager(nc)
      return Promise.all(
        Array.from({ length: PARTITIONS }, async (_, p) => {
          const info = await jsm.consumers.info(streamNames(prefix).events, consumerName(p, PARTITIONS))
          return { pending: info.num_pending, unacked: info.num_ack_pending }
        })
      )
    })
  )

/** Deliveries handed out and not yet acked, over all partitions. */
export const ackPending = (prefix: string): Effect.Effect<number, never, NatsConnection> =>
  Effect.map(backlog(prefix), (partitions) => partitions.reduce((sum, p) => sum + p.unacked, 0))

/** Every event acked (none pending or awaiting an ack on any partition) and none dead-lettered. */
export const awaitDrained = (prefix: string, timeoutMs = 15_000) =>
  Effect.gen(function* () {
    const partitions = yield* backlog(prefix)
    if (partitions.some((p) => p.pending > 0 || p.unacked > 0)) {
      return yield* Effect.fail(new Error(`not drained: ${JSON.stringify(partitions)}`))
    }
  }).pipe(
    Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo(`${timeoutMs} millis`))),
    Effect.mapError((error) => new Error(`timed out after ${timeoutMs} ms: ${error.message}`)),
    Effect.zipRight(Effect.map(deadLettered(prefix), (dead) => expect(dead).toBe(0)))
  )

/** On failure, the tail of each worker's log (JSON lines, no secrets) to see what it was doing. */
export const withWorkerLogs =
  (workers: () => ReadonlyArray<WorkerProcess>) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    effect.pipe(
      Effect.tapErrorCause(() =>
        Effect.sync(() => {
          for (const worker of workers()) {
            console.error(`--- worker ${worker.workerId} (last lines) ---\n${worker.output().slice(-40).join("\n")}`)
          }
        })
      )
    )
