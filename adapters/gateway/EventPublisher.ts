/**
 * The gateway's publishing of response events to the bus, in the background: the response is never
 * held up by it. Its enforcement records (a 403, a nudge injected: `GatewayEnforcement`) go the same
 * way, on the agent's subject, with the same guarantees: held through an outage, never dropped.
 *
 * - Normally each event is published on its own fiber, without waiting for the JetStream
 *   acknowledgement of the ones before it: waiting a round trip per event would cap a gateway at a few
 *   thousand events per second. They start in analysis order, so one agent's events reach the
 *   stream in order.
 * - When a publish fails (NATS down or failing over), the event is held: it joins a queue that one
 *   fiber drains in order, retrying its head until the bus stores it (50 ms doubling to every 5 s),
 *   and while anything is held, new events join the queue behind it, so each agent's events keep
 *   their response order. Memory stays bounded: once UNSETTLED events (`capacity`) are in flight
 *   or held, `publish` waits and `saturated()` is true, and the gateway refuses new requests with
 *   503 before the provider (adapters/gateway/Recording.ts): an outage of any length loses no
 *   event, and no exchange is answered that could not be recorded.
 * - A publish the bus refuses for what it is (a subject no stream stores) is logged, not retried.
 * - At shutdown, held and in-flight events are waited for up to SHUTDOWN_WAIT, then given up (logged).
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import { Bus, type BusError } from "../bus/Bus.js"
import { eventSubject } from "../bus/Subjects.js"
import { encodeGatewayEvent, type GatewayMessage } from "../../core/schema/Event.js"

/** Events not yet stored, in flight or held: ~1.5–5 KB each, so at most some 40 MB through an outage. */
export const UNSETTLED = 8_192
const retrySchedule = Schedule.exponential("50 millis").pipe(Schedule.union(Schedule.spaced("5 seconds")))
const SHUTDOWN_WAIT = "15 seconds"
/** Agents whose event subject is remembered. */
const SUBJECTS_KEPT = 10_000

const transient = (error: BusError): boolean => error.permanent !== true

export interface EventPublisher {
  /**
   * Returns once the event is on its way (waits only while `capacity` events are not yet stored).
   * `traceparent`: the publishing span's context, carried beside the event (never in it).
   */
  readonly publish: (agentId: string, event: GatewayMessage, traceparent?: string) => Effect.Effect<void>
  /**
   * Whether `capacity` events are unsettled (in flight, held, or waiting to be): the bus is down past
   * the buffer. The gateway then refuses new requests (503) rather than answer what it cannot record.
   */
  readonly saturated: () => boolean
}

export const makeEventPublisher = (
  subjectPrefix: string,
  options: { readonly capacity?: number } = {}
): Effect.Effect<EventPublisher, never, Bus | Scope.Scope> =>
  Effect.gen(function* () {
    const bus = yield* Bus
    const capacity = options.capacity ?? UNSETTLED
    const permits = yield* Effect.makeSemaphore(capacity)
    /** Events published and not yet settled (stored, refused, or given up), those waiting for a permit included. */
    let pending = 0
    const unsettled = {
      take: (n: number) => permits.take(n),
      release: (n: number) =>
        Effect.suspend(() => {
          pending -= n
          return permits.release(n)
        }),
      withPermits: permits.withPermits
    }
    const scope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
    const held: Array<{
      readonly agentId: string
      readonly event: GatewayMessage
      readonly traceparent: string | undefined
    }> = []
    let draining = false

    // Added after `scope` was forked, so it runs before that scope closes the publishing fibers.
    yield* Effect.addFinalizer(() =>
      unsettled
        .withPermits(capacity)(Effect.void)
        .pipe(
          Effect.timeout(SHUTDOWN_WAIT),
          Effect.catchAll(() =>
            Effect.logError("gateway events not published at shutdown").pipe(Effect.annotateLogs({ held: held.length }))
          )
        )
    )

    /**
     * Each agent's subject, remembered: it hashes the agent id for its partition, once per agent
     * rather than once per event. Bounded: emptied when full (only recomputed).
     */
    const subjects = new Map<string, string>()
    const subjectOf = (agentId: string): string => {
      let subject = subjects.get(agentId)
      if (subject === undefined) {
        if (subjects.size >= SUBJECTS_KEPT) subjects.clear()
        subjects.set(agentId, (subject = eventSubject(agentId, subjectPrefix, bus.partitions)))
      }
      return subject
    }

    // The bus deduplicates a republish on the checkpoint id, or the record id; the workers do too.
    const publishOnce = (agentId: string, event: GatewayMessage, traceparent: string | undefined) =>
      event.type === "gateway.response"
        ? bus.publish(
            subjectOf(agentId),
            encodeGatewayEvent(event),
            traceparent === undefined
              ? { msgId: event.checkpoint.checkpoint_id }
              : { msgId: event.checkpoint.checkpoint_id, traceparent }
          )
        : bus.publish(subjectOf(agentId), event, { msgId: event.record.record_id })

    const refused = (agentId: string, error: BusError) =>
      Effect.logError("gateway event not published").pipe(
        Effect.annotateLogs({ agent_id: agentId, error: error.message })
      )

    /**
     * Retries the oldest held event until the bus stores it (the bus is back), then starts the others
     * held by then as normal publishes, in order; again while events are held (held meanwhile, or held
     * again because the bus failed again: then the oldest is retried with backoff, never in a spin).
     * The last check and the hand-over to normal publishing run without a yield in between, so no
     * new event overtakes a held one.
     */
    const drain = Effect.gen(function* () {
      for (;;) {
        const oldest = held.shift()
        if (oldest === undefined) break
        const stored = yield* Effect.either(
          Effect.retry(publishOnce(oldest.agentId, oldest.event, oldest.traceparent), {
            schedule: retrySchedule,
            while: transient
          })
        )
        if (Either.isLeft(stored)) yield* refused(oldest.agentId, stored.left)
        yield* unsettled.release(1)
        yield* Effect.forEach(
          held.splice(0),
          (h) => Effect.forkIn(publishAlone(h.agentId, h.event, h.traceparent), scope),
          { discard: true }
        )
        // Let them send before anything held meanwhile is tried.
        yield* Effect.yieldNow()
      }
      draining = false
      yield* Effect.logInfo("bus available again: held gateway events published")
    })

    /** Joins the queue (keeping its permit), starting the drain if it is not running. */
    const hold = (agentId: string, event: GatewayMessage, traceparent: string | undefined, error?: BusError) =>
      Effect.suspend(() => {
        held.push({ agentId, event, traceparent })
        if (draining) return Effect.void
        draining = true
        return Effect.logWarning("bus unavailable: gateway events held until it is back").pipe(
          Effect.annotateLogs({ error: error?.message ?? "" }),
          Effect.zipRight(Effect.forkIn(drain, scope)),
          Effect.asVoid
        )
      })

    const publishAlone = (
      agentId: string,
      event: GatewayMessage,
      traceparent: string | undefined
    ): Effect.Effect<void> =>
      publishOnce(agentId, event, traceparent).pipe(
        // Interrupted at shutdown: the permit goes back (the wait for it has given up by then).
        Effect.onInterrupt(() => unsettled.release(1)),
        Effect.matchEffect({
          onSuccess: () => unsettled.release(1),
          onFailure: (error) =>
            transient(error)
              ? hold(agentId, event, traceparent, error)
              : Effect.zipRight(refused(agentId, error), unsettled.release(1))
        })
      )

    return {
      publish: (agentId, event, traceparent) =>
        Effect.suspend(() => {
          pending++
          return Effect.zipRight(
            unsettled.take(1).pipe(Effect.onInterrupt(() => Effect.sync(() => void pending--))),
            Effect.suspend(() =>
              draining
                ? hold(agentId, event, traceparent)
                : Effect.asVoid(Effect.forkIn(publishAlone(agentId, event, traceparent), scope))
            )
          )
        }),
      saturated: () => pending >= capacity
    }
  })
