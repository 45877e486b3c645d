/**
 * A row's measured window: from the first publish or call until every checkpoint is committed and
 * the work they deferred is drained back to where it started (bench/pipeline/Backlogs.ts), so that
 * work counts. What it gives: the CPU of each process per checkpoint (/proc), the window on the
 * monotonic clock (to cut the CPU profiles with), how long the drain took after the last commit, and
 * in the realistic shape what the deferred work delivered per checkpoint (webhooks received, live
 * stream events, proof jobs queued).
 */
import * as Effect from "effect/Effect"
import { awaitDrained, type Backlog } from "./Backlogs.js"
import type { Peers } from "./Children.js"
import { type CpuShare, cpuMeterOf } from "./Load.js"
import { monotonicUs, type Window } from "./Profile.js"

export interface Measurable {
  readonly processes: Readonly<Record<string, Effect.Effect<ReadonlyArray<number>, unknown>>>
  readonly backlog: Effect.Effect<Backlog, unknown>
  readonly peers: Peers | undefined
}

/** Per checkpoint, what the deferred work delivered or queued. */
export interface Deferred {
  readonly webhooks: number | undefined
  readonly stream: number | undefined
  readonly proofJobs: number
}

export interface Measurement {
  readonly checkpoints: number
  readonly cpu: CpuShare
  /** From the last commit until the backlogs were back where they started. */
  readonly drainSeconds: number
  /** From the last commit until each backlog was last seen above its start (0: never after it). */
  readonly drainedBy: { readonly outbox: number; readonly fanOut: number; readonly reputation: number }
  readonly window: Window
  readonly deferred: Deferred
}

/**
 * Opens the window now; the returned effect closes it once `checkpoints` are committed (at
 * `committedAt`, a `performance.now()` reading), after the drain.
 */
export const openWindow = (m: Measurable) =>
  Effect.gen(function* () {
    const backlog = yield* m.backlog
    const peersAt = m.peers === undefined ? undefined : yield* m.peers.counts
    const cpu = yield* cpuMeterOf(m.processes)
    const fromUs = monotonicUs()
    return (checkpoints: number, committedAt: number) =>
      Effect.gen(function* () {
        const drain = yield* awaitDrained(m.backlog, backlog)
        const share = yield* cpu(checkpoints)
        const toUs = monotonicUs()
        const after = yield* m.backlog
        const peersEnd = m.peers === undefined ? undefined : yield* m.peers.counts
        const per = (n: number) => n / Math.max(1, checkpoints)
        return {
          checkpoints,
          cpu: share,
          drainSeconds: Math.max(0, drain.at - committedAt) / 1000,
          drainedBy: {
            outbox: Math.max(0, drain.lastAbove.outbox - committedAt) / 1000,
            fanOut: Math.max(0, drain.lastAbove.fanOut - committedAt) / 1000,
            reputation: Math.max(0, drain.lastAbove.reputation - committedAt) / 1000
          },
          window: { fromUs, toUs },
          deferred: {
            webhooks: peersEnd === undefined ? undefined : per(peersEnd.webhooks - peersAt!.webhooks),
            stream: peersEnd === undefined ? undefined : per(peersEnd.stream - peersAt!.stream),
            proofJobs: per(after.proofJobs - backlog.proofJobs)
          }
        } satisfies Measurement
      })
  })
