/**
 * Reputation recomputation in the workers, off the commit path (docs/reputation-storage.md):
 *
 * - a commit marks the agents it extended dirty (`mark`: a set insertion, the commit never waits);
 * - a fiber drains the dirty set every `drainInterval` (1 s), recomputing each agent once however
 *   many commits marked it in between, but an agent at most once per `minInterval` (30 s) while
 *   commits keep coming: a busy agent marked by every commit is recomputed every 30 s rather than
 *   every second, and within a second or two once the commits pause (a recomputation
 *   is some eight statements, more than the commit of its checkpoints: at 5 s, a fleet of 200
 *   agents committing twice a second each spent more of the database on scores than on commits),
 *   while an agent idle for 30 s is scored within a second of its next commit; at most
 *   `maxPerDrain` (50) agents a drain, the longest marked first, four at a time: a budget of some
 *   tenth of a core (worker and database)
 *   whatever the fleet; with more busy agents than that, each waits its turn
 *   (docs/reputation-storage.md). When no commit came since the last drain, the commits do not need
 *   the core: up to `maxPerIdleDrain` (250) a drain. Also the agents it trusts when its base score moved
 *   (services/ReputationRecompute.ts `recomputeWithTrust`), and the teams of an agent whose grade
 *   changed (services/TeamReputation.ts `markMemberChanged`);
 * - a sweep every `sweepInterval` (10 min, and once at start) recomputes the agents whose tally
 *   lags their chain head (a mark lost with a stopped worker) or whose score is older than
 *   `staleAfter` (1 h): compliance decays with time, so a silent agent's score still moves.
 *
 * Each worker recomputes the agents of the partitions it owns (all of them on the embedded default);
 * during a lease handover two owners may recompute one agent, which the tally's row lock serialises.
 * A recomputation that fails leaves the agent dirty for the next drain.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import { ReputationRepo } from "../adapters/store/ReputationRepo.js"
import type { MemberScores } from "../adapters/store/MemberScores.js"
import type { TeamRepo } from "../adapters/store/TeamRepo.js"
import type { TeamReputationRepo } from "../adapters/store/TeamReputationRepo.js"
import { type RecomputationNeeds, recomputeWithTrust } from "../services/ReputationRecompute.js"
import { markMemberChanged } from "../services/TeamReputation.js"

export interface ReputationWorkerOptions {
  readonly drainInterval: Duration.DurationInput
  /**
   * The least time between two recomputations of one agent by the drain while commits keep marking
   * agents (none when absent); a drain with no commit since the one before, and the sweep, ignore it.
   */
  readonly minInterval?: Duration.DurationInput
  /**
   * The most agents one drain (or sweep) recomputes (no bound when absent); the others stay marked,
   * in the order they were marked, for the next drains. Bounds the database's work whatever the
   * number of busy agents: with 10,000 agents each marked every few seconds, recomputing all of
   * them (some eight statements each) would cost more than committing their checkpoints.
   */
  readonly maxPerDrain?: number
  /**
   * The most agents a drain recomputes when no commit marked any agent since the drain before (the
   * commits are idle, so the budget is not taken from them): a burst of new agents, or a worker
   * that just started, is scored at this pace rather than `maxPerDrain`'s (`maxPerDrain` when absent).
   */
  readonly maxPerIdleDrain?: number
  /** Agents recomputed at once within a drain, each in its own transaction (1 when absent). */
  readonly concurrency?: number
  readonly sweepInterval: Duration.DurationInput
  /** Scores older than this are recomputed by the sweep. */
  readonly staleAfter: Duration.DurationInput
  /** The most agents one sweep picks (oldest scores first); the next sweep takes the rest. */
  readonly sweepLimit: number
}

export const defaultReputationWorkerOptions: ReputationWorkerOptions = {
  drainInterval: "1 second",
  minInterval: "30 seconds",
  maxPerDrain: 50,
  maxPerIdleDrain: 250,
  concurrency: 4,
  sweepInterval: "10 minutes",
  staleAfter: "1 hour",
  sweepLimit: 10_000
}

export interface ReputationWorker {
  /** Marks agents for the next drain; never blocks. */
  readonly mark: (agentIds: Iterable<string>) => void
  /**
   * Recomputes every agent marked so far, but, when a commit marked agents since the drain before,
   * those recomputed less than `minInterval` ago, which stay marked; returns how many were recomputed.
   */
  readonly drain: Effect.Effect<number>
  /** Marks the lagging and stale agents this worker owns, then drains. */
  readonly sweep: Effect.Effect<number>
}

type Requirements = RecomputationNeeds | TeamRepo | TeamReputationRepo | MemberScores

/** The worker's recomputation fibers, stopped with the scope. `owns` says whether an agent is this worker's. */
export const makeReputationWorker = (
  options: ReputationWorkerOptions,
  owns: (agentId: string) => Effect.Effect<boolean>
): Effect.Effect<ReputationWorker, never, Requirements | Scope.Scope> =>
  Effect.gen(function* () {
    const context = yield* Effect.context<Requirements>()
    const repo = yield* ReputationRepo
    const dirty = new Set<string>()
    const minIntervalMs =
      options.minInterval === undefined ? 0 : Duration.toMillis(Duration.decode(options.minInterval))
    const maxPerDrain = options.maxPerDrain ?? Infinity
    const maxPerIdleDrain = options.maxPerIdleDrain ?? maxPerDrain
    /** Whether a commit marked agents since the last drain began: the commits are busy, the budget is `maxPerDrain`. */
    let markedSinceDrain = false
    const concurrency = options.concurrency ?? 1
    /** When the drain last recomputed each agent (Clock ms); entries older than `minIntervalMs` are let go. */
    const recomputedAt = new Map<string, number>()
    // A member's grade change recomputes its teams (each coalesced to once an hour; never fails).
    const teamsOfMemberChanged = (agentId: string) =>
      markMemberChanged(agentId).pipe(
        Effect.provide(context),
        Effect.catchAllCause((cause) =>
          Effect.logWarning("teams of a member whose grade changed were not recomputed").pipe(
            Effect.annotateLogs({ agent_id: agentId, cause: String(cause) })
          )
        )
      )

    /**
     * Recomputes the marked agents, the longest marked first, at most `maxPerDrain`: every one
     * (`all`), else those not recomputed within `minIntervalMs`. When no commit marked any agent
     * since the drain before, the interval holds nobody back either: it spares the database while
     * commits keep coming, and once they pause a score waits for nothing (a burst's scores are
     * current within seconds of its last commit, not 30 s).
     */
    const drainMarked = (all: boolean) =>
      Effect.gen(function* () {
        const busy = markedSinceDrain
        const budget = busy ? maxPerDrain : maxPerIdleDrain
        markedSinceDrain = false
        if (dirty.size === 0) return 0
        const now = yield* Clock.currentTimeMillis
        for (const [agentId, at] of recomputedAt) if (now - at >= minIntervalMs) recomputedAt.delete(agentId)
        const agents: Array<string> = []
        for (const agentId of dirty) {
          if (agents.length >= budget) break
          if (all || !busy || !recomputedAt.has(agentId)) agents.push(agentId)
        }
        for (const agentId of agents) dirty.delete(agentId)
        if (minIntervalMs > 0) for (const agentId of agents) recomputedAt.set(agentId, now)
        let failed = 0
        yield* Effect.forEach(
          agents,
          (agentId) =>
            recomputeWithTrust(agentId).pipe(
              Effect.flatMap((done) =>
                done.events.includes("reputation.grade_changed") ? teamsOfMemberChanged(agentId) : Effect.void
              ),
              Effect.catchAll(() => {
                failed++
                return Effect.sync(() => {
                  dirty.add(agentId)
                  recomputedAt.delete(agentId)
                })
              })
            ),
          { concurrency, discard: true }
        )
        if (failed > 0)
          yield* Effect.logWarning("reputation recomputation failed; retried at the next drain").pipe(
            Effect.annotateLogs({ failed, agents: agents.length })
          )
        return agents.length - failed
      }).pipe(Effect.provide(context))

    const drain = drainMarked(false)

    const sweep = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const staleBefore = new Date(now - Duration.toMillis(Duration.decode(options.staleAfter))).toISOString()
      const agents = yield* repo.lagging(staleBefore, options.sweepLimit)
      for (const agentId of agents) if (yield* owns(agentId)) dirty.add(agentId)
      return yield* drainMarked(true)
    }).pipe(
      Effect.catchAll((error) =>
        Effect.as(Effect.logWarning("reputation sweep failed").pipe(Effect.annotateLogs({ error: error._tag })), 0)
      )
    )

    // A drain never fails (failures stay marked); a sweep that fails is logged and tried at the next one.
    yield* drain.pipe(Effect.repeat(Schedule.spaced(options.drainInterval)), Effect.forkScoped)
    yield* sweep.pipe(Effect.repeat(Schedule.spaced(options.sweepInterval)), Effect.forkScoped)

    return {
      mark: (agentIds) => {
        for (const agentId of agentIds) {
          dirty.add(agentId)
          markedSinceDrain = true
        }
      },
      drain,
      sweep
    }
  })
