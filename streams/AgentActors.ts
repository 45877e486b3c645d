/**
 * The agents' actors: each agent's state (chain head, Merkle frontier, card, settings and
 * organization), and each agent's AIP window per session, created from the store on first use and
 * evicted when idle or when the map is full.
 *
 * Why not a fiber and a queue per agent: an agent's events all arrive on one partition, and each
 * partition is one sequential consumer, so the partition fiber already is every one of its agents'
 * mailbox, in order. Keeping the per-agent state in a map (rather than behind a fiber each) lets the
 * partition attest a whole batch of many agents at once, and the group commit (GroupCommit.ts) store
 * the batches of all partitions in one transaction, which is what makes thousands of checkpoints per
 * second possible on one PostgreSQL.
 */
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Chunk from "effect/Chunk"
import { violationStreakOf } from "../core/Containment.js"
import { isToolResultCheckpoint, isToolResultTrace } from "../core/ToolResultScope.js"
import { chronological, replayAapDrift } from "../core/DriftAap.js"
import { type AipDriftState, DEFAULT_AIP_DRIFT_CONFIG, replayAipDrift } from "../core/DriftAip.js"
import { resolveConscience } from "../core/ConscienceResolution.js"
import { Store, type StoreError } from "../adapters/store/Store.js"
import { agentContext, CONTEXT_TTL_MS } from "./AgentContext.js"
import type { AgentActorState } from "./AttestEvent.js"
import { defaultGroupCommitOptions, type GroupCommitOptions, makeGroupCommit } from "./GroupCommit.js"

export interface AgentActorsOptions {
  /** Actors kept at most; the least recently used go first. */
  readonly capacity: number
  /** An actor unused this long is evicted. */
  readonly idleMs: number
  /** Traces an actor replays to rebuild its AAP drift state. */
  readonly replayTraces: number
  /** Actors (and sessions) rebuilt from the store at once when a batch brings several new ones. */
  readonly loadConcurrency: number
  /** The group commit every partition's batches go through. */
  readonly commit: GroupCommitOptions
}

export const defaultActorsOptions: AgentActorsOptions = {
  capacity: 50_000,
  idleMs: 10 * 60_000,
  replayTraces: 50,
  loadConcurrency: 4,
  commit: defaultGroupCommitOptions
}

/**
 * How long an agent's context is used before it is read again: `CONTEXT_TTL_MS`, less up to half of
 * it, by a fraction fixed per agent (a hash of its id). Actors created together (a worker starting,
 * a burst of new agents) would otherwise all refresh in the same batch every five minutes, and the
 * partitions would stall on thousands of reads at once; spread, they refresh a few at a time.
 */
const contextTtl = (agentId: string): number => {
  let hash = 0x811c9dc5
  for (let i = 0; i < agentId.length; i++) hash = Math.imul(hash ^ agentId.charCodeAt(i), 0x01000193)
  return CONTEXT_TTL_MS - ((hash >>> 0) % (CONTEXT_TTL_MS / 2))
}

/**
 * The key of one agent's AIP window in one session. A session id is the caller's to choose
 * (`x-candor-session`): keyed by it alone, two agents naming the same session moved each other's
 * windows and streaks and named each other's checkpoints in their alerts (issue 24). Ids hold no
 * whitespace (`Identifier`), so the space keeps every pair apart.
 */
export const sessionKey = (agentId: string, sessionId: string): string => `${agentId} ${sessionId}`

/** Checkpoints replayed to rebuild a session's AIP window (the window, and a streak that may outlast it). */
const SESSION_REPLAY = Math.max(DEFAULT_AIP_DRIFT_CONFIG.maxWindowSize, DEFAULT_AIP_DRIFT_CONFIG.sustainedChecks) * 2

interface Entry<A> {
  state: A
  lastUsed: number
}

/** A map whose insertion order is use order: every access re-inserts, so the first key is the least recently used. */
class UseOrderedMap<A> {
  readonly entries = new Map<string, Entry<A>>()
  get(key: string, now: number): Entry<A> | undefined {
    const entry = this.entries.get(key)
    if (entry === undefined) return undefined
    this.entries.delete(key)
    this.entries.set(key, entry)
    entry.lastUsed = now
    return entry
  }
  set(key: string, state: A, now: number): void {
    this.entries.delete(key)
    this.entries.set(key, { state, lastUsed: now })
  }
  evict(now: number, options: AgentActorsOptions): void {
    for (const [key, entry] of this.entries) {
      if (this.entries.size <= options.capacity && now - entry.lastUsed < options.idleMs) break
      this.entries.delete(key)
    }
  }
}

/**
 * `changes`: the ids of agents whose settings changed (`AgentState.subscribeChanges`); their cached
 * context is read again before the next event of theirs is attested. Without it, only the TTL refreshes.
 */
export const makeAgentActors = (options: AgentActorsOptions = defaultActorsOptions, changes?: Queue.Dequeue<string>) =>
  Effect.gen(function* () {
    const store = yield* Store
    // Rebuilding actors is bounded across all partitions, first come first served: a burst of new
    // agents (a worker starting, a rebalance) neither floods the connection pool nor queues hundreds
    // of fibers on one connection (PGlite), where every release would wake them all.
    const loadPermits = yield* Queue.bounded<void>(options.loadConcurrency)
    yield* Queue.offerAll(
      loadPermits,
      Array.from({ length: options.loadConcurrency }, () => undefined)
    )
    const limited = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
      Effect.acquireUseRelease(
        Queue.take(loadPermits),
        () => effect,
        () => Queue.offer(loadPermits, undefined)
      )
    const agents = new UseOrderedMap<AgentActorState>()
    const sessions = new UseOrderedMap<AipDriftState>()
    /** Agents in memory whose settings changed since their context was read. */
    const stale = new Set<string>()
    /** Takes the pending changes (never waits): an update made before a batch was taken is seen by it. */
    const takeChanges: Effect.Effect<void> =
      changes === undefined
        ? Effect.void
        : Effect.map(Queue.takeAll(changes), (ids) =>
            Chunk.forEach(ids, (agentId) => {
              if (agents.entries.has(agentId)) stale.add(agentId)
            })
          )
    const current = (agentId: string, state: AgentActorState, now: number): boolean =>
      !stale.has(agentId) && now - state.context.loadedAt < contextTtl(agentId)

    const loadContext = (agentId: string, now: number) =>
      Effect.map(store.agentContextInputs(agentId), ({ agentValues, card, orgLayer, settings }) => {
        const conscience = resolveConscience({ org: orgLayer, agentValues })
        return agentContext(
          card?.card,
          conscience,
          {
            autoContainThreshold: settings.auto_containment_threshold ?? undefined,
            contained: settings.containment !== null,
            orgId: conscience.orgId
          },
          now
        )
      })

    /** Rebuilt from the store: the log, the card context, the AAP baseline and the violation streak. */
    const load = (agentId: string, now: number) =>
      Effect.gen(function* () {
        const [log, context] = yield* Effect.all([store.loadLogState(agentId), loadContext(agentId, now)], {
          concurrency: "unbounded"
        })
        // An empty log means nothing of this agent was ever committed (retention keeps chain heads):
        // no traces or checkpoints to replay, which spares a new agent two queries.
        const [traces, checkpoints] =
          log.head.position === 0
            ? [[], []]
            : yield* Effect.all(
                [
                  store.recentTraces(agentId, options.replayTraces),
                  Effect.map(
                    store.listCheckpoints({ agentId, limit: options.replayTraces, offset: 0 }),
                    (page) => page.items
                  )
                ],
                { concurrency: "unbounded" }
              )
        const streak = violationStreakOf(chronological(checkpoints.filter((c) => !isToolResultCheckpoint(c))))
        // An actor rebuilt mid-streak does not contain again for the streak it finds.
        return {
          agentId,
          log,
          context,
          aap: replayAapDrift(traces.filter((t) => !isToolResultTrace(t))),
          streak,
          contained: streak.count > 0
        } satisfies AgentActorState
      })

    /** The actor of an agent, created (state rebuilt from the store) or refreshed (settings changed, or older than the TTL). */
    const get = (agentId: string, now: number): Effect.Effect<AgentActorState, StoreError> =>
      Effect.gen(function* () {
        yield* takeChanges
        const entry = agents.get(agentId, now)
        // Marked fresh before reading: a change that arrives during the read marks it stale again.
        if (entry !== undefined) {
          if (current(agentId, entry.state, now)) return entry.state
          stale.delete(agentId)
          const context = yield* limited(loadContext(agentId, now))
          entry.state = { ...entry.state, context }
          return entry.state
        }
        stale.delete(agentId)
        const state = yield* limited(load(agentId, now))
        agents.set(agentId, state, now)
        agents.evict(now, options)
        return state
      })

    /** An agent's AIP window in a session, replayed from its newest stored checkpoints there when not in memory. */
    const session = (agentId: string, sessionId: string, now: number): Effect.Effect<AipDriftState, StoreError> => {
      const key = sessionKey(agentId, sessionId)
      const entry = sessions.get(key, now)
      if (entry !== undefined) return Effect.succeed(entry.state)
      return Effect.map(limited(store.sessionCheckpoints(agentId, sessionId, SESSION_REPLAY)), (newestFirst) => {
        const state = replayAipDrift(chronological(newestFirst.filter((c) => !isToolResultCheckpoint(c))))
        sessions.set(key, state, now)
        sessions.evict(now, options)
        return state
      })
    }

    /**
     * The states of these keys: those in memory (and current) straight from the map, the others
     * fetched a few at a time. Most batches find every actor in memory, and then fork nothing.
     */
    const getMany = <A>(
      keys: Iterable<string>,
      current: (key: string) => A | undefined,
      fetch: (key: string) => Effect.Effect<A, StoreError>
    ): Effect.Effect<Map<string, A>, StoreError> => {
      const found = new Map<string, A>()
      const missing: Array<string> = []
      for (const key of new Set(keys)) {
        const state = current(key)
        if (state === undefined) missing.push(key)
        else found.set(key, state)
      }
      if (missing.length === 0) return Effect.succeed(found)
      return Effect.as(
        Effect.forEach(missing, (key) => Effect.map(fetch(key), (state) => void found.set(key, state)), {
          concurrency: options.loadConcurrency,
          discard: true
        }),
        found
      )
    }

    /** The actors of these agents, those not in memory (or with a stale context) rebuilt a few at a time. */
    const getAll = (agentIds: Iterable<string>, now: number) =>
      Effect.zipRight(
        takeChanges,
        // Suspended: getMany looks at the map when called, which must be after the changes are taken.
        Effect.suspend(() =>
          getMany(
            agentIds,
            (agentId) => {
              const entry = agents.get(agentId, now)
              return entry !== undefined && current(agentId, entry.state, now) ? entry.state : undefined
            },
            (agentId) => get(agentId, now)
          )
        )
      )

    /** The AIP windows of these agents' sessions, likewise, by `sessionKey`. */
    const sessionAll = (
      of: Iterable<{ readonly agent_id: string; readonly session_id: string }>,
      now: number
    ): Effect.Effect<Map<string, AipDriftState>, StoreError> => {
      const byKey = new Map<string, { readonly agent_id: string; readonly session_id: string }>()
      for (const pair of of) byKey.set(sessionKey(pair.agent_id, pair.session_id), pair)
      return getMany(
        byKey.keys(),
        (key) => sessions.get(key, now)?.state,
        (key) => {
          const { agent_id, session_id } = byKey.get(key)!
          return session(agent_id, session_id, now)
        }
      )
    }

    return {
      get,
      getAll,
      session,
      sessionAll,
      /** `Store.commitBatch` through the worker's group commit (see GroupCommit.ts). */
      commit: yield* makeGroupCommit(store.commitBatch, options.commit, store.ping),
      /** After a commit: the states the batch produced become the actors' states. */
      put: (state: AgentActorState, now: number) => agents.set(state.agentId, state, now),
      /** After a commit: `key` is a `sessionKey`. */
      putSession: (key: string, state: AipDriftState, now: number) => sessions.set(key, state, now),
      /** After a conflict or a failed commit: the next event rebuilds the actor from the store. */
      forget: (agentId: string) => {
        agents.entries.delete(agentId)
        stale.delete(agentId)
      },
      forgetSession: (agentId: string, sessionId: string) =>
        void sessions.entries.delete(sessionKey(agentId, sessionId)),
      size: () => agents.entries.size
    }
  })

export type AgentActors = Effect.Effect.Success<ReturnType<typeof makeAgentActors>>
