/**
 * The verification tests' world: the real API over HTTP (test/api/Support.ts), with the real
 * pipeline behind it on the same database (in-process bus, agent actors signing with the harness's
 * key, registered in the key ring as a worker does) and the proof-job relay on an in-process prover.
 * Records are made the way production makes them: events in, attested by the actors.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import { Bus } from "../../adapters/bus/Bus.js"
import { DEFAULT_PREFIX, eventSubject } from "../../adapters/bus/Subjects.js"
import { registerActiveKey } from "../../adapters/keys/SigningKeys.js"
import { Store } from "../../adapters/store/Store.js"
import type { Concern } from "../../core/schema/Concern.js"
import * as Prover from "../../prover/Prover.js"
import { PartitionOwnership } from "../../adapters/bus/PartitionOwnership.js"
import type { RelayOptions } from "../../streams/OutboxRelay.js"
import { runWorkers } from "../../streams/PartitionWorkers.js"
import * as ProverWorkers from "../../streams/ProverWorkers.js"
import { type HarnessOptions, layer as apiHarness } from "../api/Support.js"
import { gatewayEvent, violation } from "../support/Events.js"
import { awaitCommitted } from "../streams/PipelineChecks.js"

export const LOG_ORIGIN = "candor.verify.test"
const PARTITIONS = 4

export const originOf = (agentId: string) => `${LOG_ORIGIN}/agents/${agentId}`

export interface WorldOptions {
  /** Run the proof-job relay (default true), on this prover (default: in process). */
  readonly prover?: Layer.Layer<Prover.Prover> | false
  /** The proof-job relay's settings (default: polls every 50 ms). */
  readonly relay?: Partial<Omit<RelayOptions, "kind">>
  /** The API harness's options (default: its own, on PGlite). */
  readonly harness?: HarnessOptions
}

/** The API harness, plus the workers and (unless disabled) the prover relay on its store and key. */
export const world = (options: WorldOptions = {}) => {
  const workers = Layer.scopedDiscard(
    Effect.zipRight(registerActiveKey, runWorkers({ logOrigin: LOG_ORIGIN, subjectPrefix: DEFAULT_PREFIX }))
  )
  const prover =
    options.prover === false
      ? Layer.empty
      : ProverWorkers.layer({ pollInterval: "50 millis", ...options.relay }).pipe(
          Layer.provide(options.prover ?? Prover.layerInProcess())
        )
  return Layer.mergeAll(workers, prover).pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        Bus.layerMemoryWith({ partitions: PARTITIONS, ackWaitMs: 2_000 }),
        PartitionOwnership.layerAll(PARTITIONS)
      )
    ),
    Layer.provideMerge(apiHarness(options.harness))
  )
}

/** A concern the rule makes a boundary violation. */
export { violation }

export const review: Concern = {
  category: "undeclared_intent",
  severity: "medium",
  description: "plans an undeclared side task",
  evidence: "while I'm at it",
  relevant_conscience_value: null
}

/**
 * Publishes events for the agent (one per concern list) and waits until they are committed;
 * `beforePublish` sees their checkpoint ids first. Returns the ids, in chain order.
 */
export const commitEvents = (
  agentId: string,
  concerns: ReadonlyArray<ReadonlyArray<Concern>>,
  beforePublish: (ids: ReadonlyArray<string>) => void = () => {}
) =>
  Effect.gen(function* () {
    const bus = yield* Bus
    const store = yield* Store
    const before = (yield* store.listCheckpoints({ agentId, limit: 1, offset: 0 })).total
    const events = concerns.map((list) => gatewayEvent(agentId, { concerns: list }))
    beforePublish(events.map((event) => event.checkpoint.checkpoint_id))
    // One at a time: the partition keeps their order, so chain positions follow the list.
    for (const event of events) yield* bus.publish(eventSubject(agentId, DEFAULT_PREFIX, PARTITIONS), event)
    yield* awaitCommitted([agentId], before + events.length)
    return events.map((event) => event.checkpoint.checkpoint_id)
  })

/** Polls `check` until it holds, for at most `timeoutMs`. */
export const eventually = <A, E, R>(effect: Effect.Effect<A, E, R>, check: (a: A) => boolean, timeoutMs = 20_000) =>
  effect.pipe(
    Effect.filterOrFail(check, (a) => new Error(`condition not met: ${JSON.stringify(a)?.slice(0, 500)}`)),
    Effect.retry(Schedule.spaced("25 millis").pipe(Schedule.upTo(`${timeoutMs} millis`)))
  )
