/**
 * The worker role: one consumer per owned partition, each committing its batches through the
 * agents' actors, plus the outbox relays. Partitions are started and stopped as ownership changes
 * (a lease gained or lost); a consumer that fails is logged and restarted, never left dead.
 */
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as FiberMap from "effect/FiberMap"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { Bus, type Delivery } from "../adapters/bus/Bus.js"
import { deadLetterSubject } from "../adapters/bus/subjects.js"
import { AgentState } from "../adapters/gateway/AgentState.js"
import { SigningKeys } from "../adapters/keys/SigningKeys.js"
import { defaultActorsOptions, makeAgentActors } from "./AgentActors.js"
import { commitDeliveries } from "./commitDeliveries.js"
import { DECISION_OUTBOX, type DecisionPayload } from "./decisions.js"
import { makeSignal, relayDefaults, type RelayOptions, runRelay } from "./OutboxRelay.js"
import { PartitionOwnership } from "./PartitionOwnership.js"

export interface WorkerOptions {
  readonly logOrigin: string
  readonly subjectPrefix: string
  readonly conflictRetries: number
  readonly retryDelayMs: number
}

export const defaultWorkerOptions: WorkerOptions = {
  logOrigin: "candor.local",
  subjectPrefix: "candor",
  conflictRetries: 3,
  retryDelayMs: 1_000
}

/** Runs until its scope closes. */
export const runWorkers = (options: Partial<WorkerOptions> = {}) =>
  Effect.gen(function*() {
    const settings = { ...defaultWorkerOptions, ...options }
    const bus = yield* Bus
    const ownership = yield* PartitionOwnership
    const { active: key } = yield* SigningKeys
    const agentState = yield* AgentState
    const actors = yield* makeAgentActors(defaultActorsOptions)
    const wake = yield* makeSignal
    const commitOptions = { ...settings, key }

    const deadLetter = (delivery: Delivery, reason: string) =>
      bus.publish(deadLetterSubject(delivery.subject, settings.subjectPrefix), {
        subject: delivery.subject,
        payload: delivery.payload,
        reason
      })

    const consume = (partition: number) =>
      bus.consumePartition(partition).pipe(
        Stream.chunks,
        Stream.mapEffect((batch) =>
          commitDeliveries(actors, Chunk.toReadonlyArray(batch), commitOptions, deadLetter).pipe(
            Effect.tap((outcome) => (outcome.committed > 0 ? Queue.offer(wake, undefined) : Effect.void))
          )
        ),
        Stream.runDrain,
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
        Effect.gen(function*() {
          const stale = Array.from(running, ([partition]) => partition).filter((partition) => !owned.has(partition))
          for (const partition of stale) yield* FiberMap.remove(running, partition)
          for (const partition of owned) yield* FiberMap.run(running, partition, consume(partition), { onlyIfMissing: true })
        })
      ),
      Effect.forkScoped
    )

    // Decisions: publish to the alert/containment subjects, and hand containment to the gateways.
    yield* runRelay(
      { ...relayDefaults, kind: DECISION_OUTBOX } satisfies RelayOptions,
      (item) =>
        Effect.gen(function*() {
          const payload = item.payload as DecisionPayload
          if (payload.agent_state !== undefined) {
            yield* agentState.update(payload.agent_state.agent_id, { containment: payload.agent_state.containment })
          }
          yield* bus.publish(payload.subject, payload.message, { msgId: item.id })
        }),
      wake
    ).pipe(Effect.forkScoped)
  })
