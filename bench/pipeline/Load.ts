/**
 * What every row does to a deployment: make events, publish them (as fast as the bus takes them,
 * or at a fixed rate), wait until they are committed, and count the CPU each process spent.
 */
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import type { GatewayEvent } from "../../core/schema/Event.js"
import { eventSubject } from "../../adapters/bus/Subjects.js"
import { gatewayEvent } from "../../test/support/Events.js"
import { type Deployment, serverCpuMs } from "./Deployment.js"
import { settings } from "./Settings.js"

export const now = () => performance.now()

export const agentIds = (label: string, count: number) => Array.from({ length: count }, (_, i) => `agt-${label}-${i}`)

/** Round-robin over the agents, so every agent's events are spread over the whole run. */
export const makeEvents = (agents: ReadonlyArray<string>, count: number): ReadonlyArray<GatewayEvent> =>
  Array.from({ length: count }, (_, i) => gatewayEvent(agents[i % agents.length]!))

/** As the gateway publishes: to the agent's partition, the checkpoint id as the bus's msgId. */
export const publishEvent = (d: Deployment) => (event: GatewayEvent) =>
  d.bus.publish(eventSubject(event.agent_id, d.prefix, d.partitions), event, { msgId: event.checkpoint.checkpoint_id })

/** Publishes them all, `settings.concurrency` in flight; resolves with the time the last was stored. */
export const publishAll = (d: Deployment, events: ReadonlyArray<GatewayEvent>) =>
  Effect.forEach(events, publishEvent(d), { concurrency: settings.concurrency, discard: true }).pipe(
    Effect.zipRight(Effect.sync(now))
  )

/** Polls `committed` until it reaches `target`, and returns when; fails after `timeoutMs` without progress. */
export const awaitCommitted = (d: Deployment, target: number, intervalMs = 20, timeoutMs = 60_000) =>
  Effect.gen(function* () {
    let last = -1
    let progressAt = now()
    for (;;) {
      const n = yield* d.committed
      if (n >= target) return now()
      if (n !== last) [last, progressAt] = [n, now()]
      if (now() - progressAt > timeoutMs) return yield* Effect.fail(new Error(`stalled at ${n} of ${target} committed`))
      yield* Effect.sleep(`${intervalMs} millis`)
    }
  })

/**
 * Before a row is timed: `settings.warmup` events on other agents (JIT, pools, leases), then one
 * event for each of `agents`, so the row measures agents the worker knows, as in a steady state.
 * Returns the committed count the row starts from.
 */
export const warmUp = (d: Deployment, agents: ReadonlyArray<string> = []) =>
  Effect.gen(function* () {
    const events = [...makeEvents(agentIds("warm", 100), settings.warmup), ...makeEvents(agents, agents.length)]
    yield* publishAll(d, events)
    yield* awaitCommitted(d, events.length)
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

/** CPU µs per checkpoint, by process: the worker (a child process only), this bench, the two servers. */
export interface CpuShare {
  readonly worker: number | undefined
  readonly bench: number
  readonly postgres: number
  readonly nats: number
}

const selfCpuMs = () => {
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1000
}

/**
 * Starts counting CPU; the returned effect gives each process's µs per event since. The servers'
 * figures include whatever else runs on them meanwhile (this is a shared machine).
 */
export const cpuMeter = (d: Deployment | undefined) =>
  Effect.gen(function* () {
    const at = {
      worker: d === undefined ? 0 : yield* d.cpuMs,
      bench: selfCpuMs(),
      postgres: serverCpuMs("postgres"),
      nats: serverCpuMs("nats-server")
    }
    return (events: number) =>
      Effect.gen(function* () {
        const per = (ms: number) => (ms * 1000) / events
        return {
          worker: d?.worker === "process" ? per((yield* d.cpuMs) - at.worker) : undefined,
          bench: per(selfCpuMs() - at.bench),
          postgres: per(serverCpuMs("postgres") - at.postgres),
          nats: per(serverCpuMs("nats-server") - at.nats)
        } satisfies CpuShare
      })
  })
