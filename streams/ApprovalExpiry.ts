/**
 * Human approval's expiry sweep, in the worker role (the embedded default's backend thread
 * included): every `interval`, pending approvals past `expires_at` become `expired` and their
 * waiters are told (services/Approvals.ts, `sweep`). A held call ends at its own `expires_at`
 * anyway; the sweep settles the approvals whose waiter is gone (a gateway restarted), so the queue
 * never shows a call nobody holds. Several workers may sweep at once: each row is settled once.
 */
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Approvals from "../services/Approvals.js"

export const DEFAULT_SWEEP_INTERVAL: Duration.DurationInput = "15 seconds"

/** Sweeps until the scope closes (the first at once); a failed sweep is logged, the next runs at its time. */
export const runExpiry = (interval: Duration.DurationInput = DEFAULT_SWEEP_INTERVAL) =>
  Effect.flatMap(Approvals.Approvals, (approvals) =>
    approvals.sweep.pipe(
      Effect.catchAllCause((cause) =>
        Effect.logWarning("approval expiry sweep failed").pipe(Effect.annotateLogs({ cause: String(cause) }))
      ),
      Effect.repeat(Schedule.spaced(interval)),
      Effect.forkScoped,
      Effect.asVoid
    )
  )

/** The sweep on the process's store, approval repository and signal (the worker role). */
export const layer = (interval?: Duration.DurationInput) =>
  Layer.scopedDiscard(runExpiry(interval)).pipe(Layer.provide(Approvals.layer))
