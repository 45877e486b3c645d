/**
 * The periodic team reputation refresh, in the worker role (the embedded default's backend thread
 * included): every `interval`, at most `batch` active teams, most overdue first, are recomputed
 * automatically: those whose coalesced recomputation has waited its hour out, and those whose
 * inputs were last compared more than 24 hours ago. Each goes through the same computation as the
 * API (services/TeamReputation.ts): unchanged inputs cost nothing. Several workers may run passes at
 * once: a computation re-checks the inputs hash under the organization's row lock, so a team is
 * never computed twice for the same inputs.
 */
import * as Clock from "effect/Clock"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as TeamReputationRepo from "../adapters/store/TeamReputationRepo.js"
import { AUTOMATIC_WINDOW_MS, recomputeQuietly, STALE_AFTER_MS } from "../services/TeamReputation.js"

export interface RefreshOptions {
  readonly interval: Duration.DurationInput
  /** Teams looked at per pass. */
  readonly batch: number
}

export const defaultRefreshOptions: RefreshOptions = { interval: "5 minutes", batch: 50 }

/** One pass: the teams due, each recomputed (failures are logged, never stop the pass); returns them. */
export const refreshPass = (batch: number) =>
  Effect.gen(function* () {
    const repo = yield* TeamReputationRepo.TeamReputationRepo
    const now = yield* Clock.currentTimeMillis
    const due = yield* repo.dueTeams(
      new Date(now - AUTOMATIC_WINDOW_MS).toISOString(),
      new Date(now - STALE_AFTER_MS).toISOString(),
      batch
    )
    for (const teamId of due) {
      const outcome = yield* recomputeQuietly(teamId)
      // A refused or failed team is looked at again at its next due time, not on every pass.
      if (outcome === "refused" || outcome === "failed") {
        yield* repo.touch(teamId, new Date(now).toISOString())
        yield* repo.clearPending(teamId)
      }
    }
    return due
  })

/** Runs passes until the scope closes (the first at once). */
export const runRefresh = (options: Partial<RefreshOptions> = {}) => {
  const settings = { ...defaultRefreshOptions, ...options }
  return refreshPass(settings.batch).pipe(
    // A failed pass (the store unreachable, a defect) is logged; the next one runs at its time.
    Effect.catchAllCause((cause) =>
      Effect.logWarning("team reputation refresh failed").pipe(Effect.annotateLogs({ cause: String(cause) }))
    ),
    Effect.repeat(Schedule.spaced(settings.interval)),
    Effect.forkScoped,
    Effect.asVoid
  )
}

/** The refresh on the process's SqlClient, store and repositories (the worker role). */
export const layer = (options: Partial<RefreshOptions> = {}) => Layer.scopedDiscard(runRefresh(options))
