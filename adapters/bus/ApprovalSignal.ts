/**
 * How the side holding a tool call learns that its approval was settled (docs/approvals.md): the
 * decider (the API, or the expiry) `publish`es the final status, the holder `wait`s for it. The
 * decision is made in the API process while the call waits in the gateway's, so on a split
 * deployment this is a NATS KV bucket (ApprovalSignalKv.ts, key = approval id); in one process,
 * `layerMemory`. The store stays the record: a waiter that misses a signal (a restart, a watch lost)
 * reads the store again at a bounded interval (services/Approvals.ts, `awaitDecision`).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import type { ApprovalStatus } from "../../core/schema/Approval.js"

export type FinalStatus = Exclude<ApprovalStatus, "pending">

export class ApprovalSignal extends Context.Tag("candor/adapters/bus/ApprovalSignal")<
  ApprovalSignal,
  {
    /** Tells every waiter of the approval its final status. Best effort: never fails the decision. */
    readonly publish: (approvalId: string, status: FinalStatus) => Effect.Effect<void>
    /**
     * The final status once one is published (one published before the wait began too, where the
     * implementation keeps it: the KV does); never completes otherwise. Interrupt it to stop.
     */
    readonly wait: (approvalId: string) => Effect.Effect<FinalStatus>
  }
>() {
  /** In one process: a hub of settled approvals, and the last few hundred remembered for late waiters. */
  static readonly layerMemory: Layer.Layer<ApprovalSignal> = Layer.effect(
    ApprovalSignal,
    Effect.gen(function* () {
      const hub = yield* PubSub.unbounded<{ readonly id: string; readonly status: FinalStatus }>()
      const recent = new Map<string, FinalStatus>()
      return {
        publish: (id, status) =>
          Effect.sync(() => {
            recent.set(id, status)
            // Bounded: a waiter that comes later than this reads the store.
            if (recent.size > RECENT) recent.delete(recent.keys().next().value!)
          }).pipe(Effect.zipRight(PubSub.publish(hub, { id, status })), Effect.asVoid),
        wait: (id) =>
          Effect.scoped(
            Effect.gen(function* () {
              const queue = yield* PubSub.subscribe(hub)
              const known = recent.get(id)
              if (known !== undefined) return known
              for (;;) {
                const next = yield* Queue.take(queue)
                if (next.id === id) return next.status
              }
            })
          )
      }
    })
  )
}

const RECENT = 512
