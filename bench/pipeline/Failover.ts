/**
 * The failover row: two worker processes (`candor serve --role worker`, test/support/WorkerProcess.ts)
 * on PostgreSQL and JetStream share the partitions; the bench publishes a steady BENCH_FAILOVER_RATE
 * (1,000) events/s over BENCH_FAILOVER_AGENTS (200) agents for BENCH_FAILOVER_SECONDS (20), and
 * SIGKILLs one worker BENCH_FAILOVER_KILL_AT (5) s in. Reported:
 *
 * - in flight at the kill: deliveries the dead worker held unacked (what the order is about);
 * - leases taken: until the survivor holds every lease (bucket polled every 50 ms);
 * - committing again: until every partition of the dead worker with load has committed an event
 *   published after the kill (its slowest partition);
 * - commit lag p50/p99/max over the events published from 5 s before the kill to 10 s after it
 *   (publish call to the first 10 ms poll of `chain_heads` past the event: an upper bound), and the
 *   lag p99 of the steady state before the kill alone: the events published from 1 s after the
 *   load's start to 1 s before the kill (the first second is the workers' warm-up; an event of the
 *   last second that the killed worker had not committed yet waits for the failover, whose own
 *   figures are the row's others);
 * - lost (published, never committed within 60 s of the end), duplicated (stored more than once:
 *   the checkpoint id is the table's key, so this checks the key, not luck), and out of order
 *   (agents whose chain is not their publish order; each agent's publishes are chained one after the
 *   other, so publish order is stream order).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import { jetstreamManager } from "@nats-io/jetstream"
import { Kvm } from "@nats-io/kv"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import type { GatewayEvent } from "../../core/schema/Event.js"
import { Bus } from "../../adapters/bus/Bus.js"
import { NatsConnection } from "../../adapters/bus/NatsConnection.js"
import { consumerName, eventSubject, leaseBucket, partitionOf, streamNames } from "../../adapters/bus/Subjects.js"
import { throwawayDatabase } from "../../test/support/Postgres.js"
import { benchPrefix, natsUrl, startWorkerProcess } from "./CandorProcess.js"
import { agentIds } from "./Deployment.js"
import { now } from "./Load.js"
import { realisticEvents, setUpRealistic, sharedSettings, storeEnv } from "./Realistic.js"
import type { Shape } from "./Shape.js"
import { positive, settings } from "./Settings.js"
import { bareSource, type EventSource } from "./Templates.js"

export const failoverSettings = {
  rate: positive("BENCH_FAILOVER_RATE", 1_000),
  agents: positive("BENCH_FAILOVER_AGENTS", 200),
  seconds: positive("BENCH_FAILOVER_SECONDS", 20),
  killAt: positive("BENCH_FAILOVER_KILL_AT", 5)
} as const

export interface FailoverResult {
  readonly shape: Shape
  readonly rate: number
  readonly agents: number
  readonly partitions: number
  readonly published: number
  readonly inFlight: number
  /** Seconds from the kill. */
  readonly leasesTaken: number
  readonly committingAgain: number
  readonly p50: number
  readonly p99: number
  readonly max: number
  /** The lag p99 of the events published before the kill (from 1 s in to 1 s before it), ms. */
  readonly p99BeforeKill: number
  readonly lost: number
  readonly duplicated: number
  readonly outOfOrder: number
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN

export const failover = (shape: Shape) =>
  Effect.scoped(
    Effect.gen(function* () {
      const { agents: agentCount, killAt, rate, seconds } = failoverSettings
      const partitions = settings.partitions
      const prefix = yield* benchPrefix("benchfo")
      const url = natsUrl()
      const databaseUrl = Redacted.value(yield* throwawayDatabase)
      // One signing key and one secret key for both: they sign and seal the same chains.
      const shared = sharedSettings(databaseUrl, url, prefix, partitions)
      // One after the other: the first migrates the database.
      yield* startWorkerProcess({ ...storeEnv(shared), CANDOR_WORKER_ID: "fo-a" }, undefined)
      const b = yield* startWorkerProcess({ ...storeEnv(shared), CANDOR_WORKER_ID: "fo-b" }, undefined)
      const context = yield* Layer.build(
        Layer.mergeAll(
          Bus.layerJetStream({ prefix, partitions }).pipe(
            Layer.provideMerge(NatsConnection.layer(url, { name: "candor-bench" }))
          ),
          PgClient.layer({ url: Redacted.make(databaseUrl), applicationName: "candor-bench" })
        )
      )
      const bus = Context.get(context, Bus)
      const nc = Context.get(context, NatsConnection)
      const sql = Context.get(context, SqlClient.SqlClient)
      // The realistic shape: the API, the organizations and their claimed agents, the events their gateway publishes.
      let source: EventSource = bareSource(agentIds("fo", agentCount))
      if (shape === "realistic") {
        const parts = yield* setUpRealistic(shared, agentCount, undefined)
        source = (yield* realisticEvents(shared, nc, parts)).source
      }
      const agents = source.agents

      const leaseHolders = Effect.promise(async () => {
        const holders = new Map<number, string>()
        const kv = await new Kvm(nc).open(leaseBucket(prefix))
        for await (const key of await kv.keys("lease.>")) {
          const entry = await kv.get(key)
          if (entry?.operation === "PUT") holders.set(Number(key.slice("lease.".length)), entry.string())
        }
        return holders
      })
      const heads = (ids: ReadonlyArray<string>) =>
        sql<{ agent_id: string; position: unknown }>`
        select agent_id, position from chain_heads
        where agent_id in (select jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb))`
      const waitFor = <E>(what: string, condition: Effect.Effect<boolean, E>, timeoutMs: number) =>
        condition.pipe(
          Effect.filterOrFail(
            (ok) => ok,
            () => new Error(`timed out waiting for ${what}`)
          ),
          Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo(`${timeoutMs} millis`)))
        )

      // Both workers hold a share, and every load agent has its first checkpoint (the warm-up).
      yield* waitFor(
        "both workers holding leases",
        Effect.map(leaseHolders, (h) => h.size === partitions && new Set(h.values()).size === 2),
        30_000
      )
      const publish = (event: GatewayEvent) =>
        bus
          .publish(eventSubject(event.agent_id, prefix, partitions), event, { msgId: event.checkpoint.checkpoint_id })
          .pipe(Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo("10 seconds"))))
      // The warm-up: one event per agent (the realistic agents' captured answers are committed too).
      yield* Effect.forEach(agents, (_, i) => publish(source.event(i)), { concurrency: 64, discard: true })
      const warmedTo = new Map<string, number>()
      yield* waitFor(
        "the warm-up committed",
        Effect.map(heads(agents), (rows) => {
          for (const row of rows) warmedTo.set(row.agent_id, Number(row.position))
          return rows.length === agents.length && (shape === "bare" || rows.every((row) => Number(row.position) >= 4))
        }),
        60_000
      )
      const holders = yield* leaseHolders
      const victim = [...holders].filter(([, w]) => w === "fo-b").map(([p]) => p)
      const loaded = new Set(agents.map((agent) => partitionOf(agent, partitions)).filter((p) => victim.includes(p)))

      // Per agent: publish times and ids in order; how many seen committed.
      const publishedAt = new Map(agents.map((agent) => [agent, [] as Array<number>]))
      const publishedIds = new Map(agents.map((agent) => [agent, [] as Array<string>]))
      const seen = new Map(agents.map((agent) => [agent, 0]))
      const outstanding = new Set<string>()
      const lags: Array<readonly [number, number]> = []
      const againAt = new Map<number, number>()
      let killedAt = Infinity
      let stop = false
      const poll = Effect.gen(function* () {
        while (!stop) {
          const rows = outstanding.size === 0 ? [] : yield* heads([...outstanding])
          const at = now()
          for (const { agent_id, position } of rows) {
            const times = publishedAt.get(agent_id)!
            let i = seen.get(agent_id)!
            // Positions up to the warm-up's are before the run.
            for (; i < Number(position) - warmedTo.get(agent_id)!; i++) {
              lags.push([times[i]!, at - times[i]!])
              const p = partitionOf(agent_id, partitions)
              if (times[i]! > killedAt && loaded.has(p) && !againAt.has(p)) againAt.set(p, at - killedAt)
            }
            seen.set(agent_id, i)
            if (i === times.length) outstanding.delete(agent_id)
          }
          yield* Effect.sleep("10 millis")
        }
      })
      const poller = yield* Effect.fork(poll)

      // The load: each agent's publishes chained (publish order = stream order), agents in parallel.
      const inFlight = yield* FiberSet.make<void, unknown>()
      const tails = new Map<string, Deferred.Deferred<void>>()
      const total = Math.round(rate * seconds)
      const start = now()
      let sent = 0
      let inFlightAtKill = 0
      let leasesTaken = NaN
      while (sent < total) {
        const due = Math.min(total, Math.floor(((now() - start) / 1000) * rate))
        for (; sent < due; sent++) {
          const event = source.event(sent)
          const prev = tails.get(event.agent_id)
          const done = yield* Deferred.make<void>()
          tails.set(event.agent_id, done)
          publishedAt.get(event.agent_id)!.push(now())
          publishedIds.get(event.agent_id)!.push(event.checkpoint.checkpoint_id)
          outstanding.add(event.agent_id)
          yield* FiberSet.run(
            inFlight,
            (prev === undefined ? Effect.void : Deferred.await(prev)).pipe(
              Effect.zipRight(publish(event)),
              Effect.ensuring(Deferred.succeed(done, undefined))
            )
          )
        }
        if (killedAt === Infinity && now() - start >= killAt * 1_000) {
          yield* b.kill
          killedAt = now()
          inFlightAtKill = yield* Effect.promise(async () => {
            const jsm = await jetstreamManager(nc)
            const infos = await Promise.all(
              victim.map((p) => jsm.consumers.info(streamNames(prefix).events, consumerName(p, partitions)))
            )
            return infos.reduce((sum, info) => sum + info.num_ack_pending, 0)
          })
          yield* waitFor(
            "the survivor holding every lease",
            Effect.map(leaseHolders, (h) => [...h.values()].filter((w) => w === "fo-a").length === partitions),
            60_000
          ).pipe(
            Effect.tap(() => Effect.sync(() => void (leasesTaken = (now() - killedAt) / 1000))),
            Effect.ignore,
            Effect.forkScoped
          )
        }
        yield* Effect.sleep("5 millis")
      }
      yield* FiberSet.awaitEmpty(inFlight)
      const deadline = now() + 60_000
      while (lags.length < sent && now() < deadline) yield* Effect.sleep("20 millis")
      stop = true
      yield* poller.await

      // The record: each agent's chain, in position order, against its publish order.
      const rows = yield* sql<{ agent_id: string; checkpoint_id: string }>`
      select agent_id, checkpoint_id from checkpoints
      where agent_id in (select jsonb_array_elements_text(${JSON.stringify(agents)}::jsonb))
      order by agent_id, position`
      const chains = new Map<string, Array<string>>()
      for (const row of rows) chains.set(row.agent_id, [...(chains.get(row.agent_id) ?? []), row.checkpoint_id])
      let lost = 0
      let duplicated = 0
      let outOfOrder = 0
      for (const agent of agents) {
        const ids = publishedIds.get(agent)!
        const run = new Set(ids)
        const chain = (chains.get(agent) ?? []).filter((id) => run.has(id))
        duplicated += chain.length - new Set(chain).size
        lost += ids.filter((id) => !chain.includes(id)).length
        if (chain.join() !== ids.filter((id) => chain.includes(id)).join()) outOfOrder++
      }
      const window = lags
        .filter(([at]) => at >= killedAt - 5_000 && at <= killedAt + 10_000)
        .map(([, lag]) => lag)
        .sort((x, y) => x - y)
      const beforeKill = lags
        .filter(([at]) => at >= start + 1_000 && at < killedAt - 1_000)
        .map(([, lag]) => lag)
        .sort((x, y) => x - y)
      return {
        shape,
        rate,
        agents: agentCount,
        partitions,
        published: sent,
        inFlight: inFlightAtKill,
        leasesTaken,
        committingAgain: againAt.size === loaded.size ? Math.max(...againAt.values()) / 1000 : NaN,
        p50: percentile(window, 0.5),
        p99: percentile(window, 0.99),
        max: window[window.length - 1] ?? NaN,
        p99BeforeKill: percentile(beforeKill, 0.99),
        lost,
        duplicated,
        outOfOrder
      } satisfies FailoverResult
    })
  )

const fmt = (n: number, digits = 0) =>
  n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits })

/** The row's table: title, header and one line per shape (bench/Pipeline.ts prints it). */
export const failoverTable = (results: ReadonlyArray<FailoverResult>) => {
  const r = results[0]!
  return [
    `Failover: 2 worker processes on PostgreSQL + JetStream, ${fmt(r.rate)} events/s over ${fmt(r.agents)} agents, ` +
      `${r.partitions} partitions, one SIGKILLed ${failoverSettings.killAt} s in (seconds from the kill; lag in ms over ` +
      `the events published from 5 s before the kill to 10 s after)`,
    [
      "shape",
      "published",
      "in flight at kill",
      "leases taken s",
      "committing again s",
      "lag p50",
      "lag p99",
      "lag max",
      "lag p99 before the kill",
      "lost",
      "duplicated",
      "out of order",
      "target"
    ],
    results.map((r) => [
      r.shape,
      fmt(r.published),
      fmt(r.inFlight),
      fmt(r.leasesTaken, 2),
      fmt(r.committingAgain, 2),
      fmt(r.p50, 1),
      fmt(r.p99, 1),
      fmt(r.max, 1),
      fmt(r.p99BeforeKill, 1),
      fmt(r.lost),
      fmt(r.duplicated),
      fmt(r.outOfOrder),
      `again < 5 s, p99 < 6 s, p99 before the kill < 1 s, none lost/duplicated/out of order: ${
        r.committingAgain < 5 && r.p99 < 6_000 && r.p99BeforeKill < 1_000 && r.lost + r.duplicated + r.outOfOrder === 0
          ? "met"
          : "NOT met"
      }`
    ])
  ] as const
}
