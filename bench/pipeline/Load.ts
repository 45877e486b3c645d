/**
 * What every row does to a deployment: make events, publish them (as fast as the bus takes them,
 * or at a fixed rate), wait until they are committed, and count the CPU each process spent.
 */
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import type { GatewayEvent } from "../../core/schema/Event.js"
import { eventSubject } from "../../adapters/bus/Subjects.js"
import { awaitDrained } from "./Backlogs.js"
import { pollIntervalMs } from "./Polling.js"
import { agentIds, type Deployment } from "./Deployment.js"
import { startMeter } from "./ProcessCpu.js"
import { settings } from "./Settings.js"
import { bareSource, type EventSource } from "./Templates.js"

export { agentIds } from "./Deployment.js"

export const now = () => performance.now()

/** `count` events of `source` (round-robin over its agents, so each agent's are spread over the run). */
export const makeEvents = (source: EventSource, count: number): ReadonlyArray<GatewayEvent> =>
  Array.from({ length: count }, (_, i) => source.event(i))

/** As the gateway publishes: to the agent's partition, the checkpoint id as the bus's msgId. */
export const publishEvent = (d: Deployment) => (event: GatewayEvent) =>
  d.bus.publish(eventSubject(event.agent_id, d.prefix, d.partitions), event, { msgId: event.checkpoint.checkpoint_id })

/** Publishes them all, `settings.concurrency` in flight; resolves with the time the last was stored. */
export const publishAll = (d: Deployment, events: ReadonlyArray<GatewayEvent>) =>
  Effect.forEach(events, publishEvent(d), { concurrency: settings.concurrency, discard: true }).pipe(
    Effect.zipRight(Effect.sync(now))
  )

/**
 * Polls `committed` (at `pollIntervalMs` of the time waited) until it reaches `target`, and returns
 * when; fails after `timeoutMs` without progress.
 */
export const awaitCommitted = (d: Deployment, target: number, timeoutMs = 60_000) =>
  Effect.gen(function* () {
    let last = -1
    const since = now()
    let progressAt = since
    for (;;) {
      const n = yield* d.committed
      if (n >= target) return now()
      if (n !== last) [last, progressAt] = [n, now()]
      if (now() - progressAt > timeoutMs) return yield* Effect.fail(new Error(`stalled at ${n} of ${target} committed`))
      yield* Effect.sleep(pollIntervalMs(now() - since))
    }
  })

/**
 * Before a row is timed: `settings.warmup` events (JIT, pools, leases) and, in the bare shape, one
 * event for each of the row's agents when `known` (so the row measures agents the worker knows, as
 * in a steady state; the realistic shape's agents are known from their captured answers). Waits
 * until everything published so far is committed and the deferred work drained (reputation, outbox,
 * webhook fan-out), and returns the committed count the row starts from.
 */
export const warmUp = (d: Deployment, known: boolean) =>
  Effect.gen(function* () {
    const events =
      d.shape === "realistic"
        ? makeEvents(d.source, settings.warmup)
        : [
            ...makeEvents(bareSource(agentIds("warm", 100)), settings.warmup),
            ...(known ? d.source.agents.map((_, i) => d.source.event(i)) : [])
          ]
    yield* publishAll(d, events)
    yield* awaitCommitted(d, d.published + events.length)
    yield* awaitDrained(d.backlog, { outbox: 0, proofJobs: 0, fanOut: 0, reputation: 0 })
    return yield* d.committed
  })

/**
 * Publishes `rate` events/s for `seconds`, from `nextEvent`, each publish forked (the bus pipelines
 * them); `published(event, at)` is called just before each publish. Resolves once every publish is acked.
 */
export const publishAtRate = (
  d: Deployment,
  rate: number,
  seconds: number,
  nextEvent: (i: number) => GatewayEvent,
  published: (event: GatewayEvent, at: number) => void = () => {}
) =>
  Effect.scoped(
    Effect.gen(function* () {
      const inFlight = yield* FiberSet.make<void, unknown>()
      const publish = publishEvent(d)
      const start = now()
      const total = Math.round(rate * seconds)
      let sent = 0
      while (sent < total) {
        const due = Math.min(total, Math.floor(((now() - start) / 1000) * rate))
        for (; sent < due; sent++) {
          const event = nextEvent(sent)
          published(event, now())
          yield* FiberSet.run(inFlight, publish(event))
        }
        yield* Effect.sleep("5 millis")
      }
      yield* FiberSet.awaitEmpty(inFlight)
      return { sent, seconds: (now() - start) / 1000 }
    })
  )

/** CPU µs per checkpoint, by process (the deployment's `processes`: worker(s), bench, postgres, nats, api, peers). */
export type CpuShare = Readonly<Record<string, number>>

/**
 * Starts counting CPU; the returned effect gives each process's µs per checkpoint since. The
 * servers are narrowed to this run's (bench/pipeline/ProcessCpu.ts).
 */
export const cpuMeterOf = (processes: Readonly<Record<string, Effect.Effect<ReadonlyArray<number>, unknown>>>) =>
  Effect.map(
    startMeter(processes),
    (stop) => (checkpoints: number) =>
      Effect.map(stop, (used): CpuShare =>
        Object.fromEntries(Object.entries(used).map(([name, ms]) => [name, ((ms as number) * 1000) / checkpoints]))
      )
  )

export const cpuMeter = (d: Deployment) => cpuMeterOf(d.processes)
