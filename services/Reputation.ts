/**
 * An agent's reputation as others see it. Scores are read as the workers stored them
 * (streams/ReputationWorker.ts); an agent read before any was stored (claimed, no traffic yet, or
 * its first commit not drained yet) is computed on the spot, by the same recomputation
 * (./ReputationRecompute.ts).
 *
 * Its visibility (public, unlisted, private) is stored with its `agent.visibility` entry in the
 * agent's governance log in one transaction.
 *
 * Who sees what is the caller's to say: whether the request may be shown an agent of a given
 * visibility (`shown`, on the public routes), which agents besides the public ones a caller's
 * listings may hold (`readable`), who may write the agent; the actor it names is the one recorded.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { NotFound } from "../adapters/http/ApiErrors.js"
import { GovernanceLog } from "../adapters/store/GovernanceLog.js"
import { IdentityRepo } from "../adapters/store/identity/IdentityRepo.js"
import { type Readable, ReputationRepo, type ScoreRecord, type SearchQuery } from "../adapters/store/ReputationRepo.js"
import { StoreError } from "../adapters/store/Store.js"
import { transaction } from "../adapters/store/Transaction.js"
import { agentGovernanceLog } from "../core/Governance.js"
import { LABELS } from "../core/Reputation.js"
import { type AgentReputation, COMPONENT_KEYS, type Visibility } from "../core/schema/Reputation.js"
import { RATED_GRADES } from "../core/schema/ReputationQueries.js"
import { type RecomputationNeeds, recomputeReputation } from "./ReputationRecompute.js"

/** No such agent, or one not claimed (visibility belongs to the claim). */
export class ReputationNotFound extends Schema.TaggedError<ReputationNotFound>()(
  "ReputationNotFound",
  { error: Schema.String },
  HttpApiSchema.annotations({ status: 404 })
) {}

const DAY_MS = 86_400_000

/** `{key: value(key)}` for every key. */
const recordOf = <K extends string, V>(keys: ReadonlyArray<K>, value: (key: K) => V): Record<K, V> =>
  Object.fromEntries(keys.map((key) => [key, value(key)])) as Record<K, V>

const agentNotFound = (agentId: string) => new NotFound({ error: `agent ${agentId} not found` })

const differencesOf = (reputations: ReadonlyArray<AgentReputation>) =>
  COMPONENT_KEYS.map((key) => {
    const scores = reputations.map((r) => r.components.find((c) => c.key === key)?.score ?? 0)
    const max = Math.max(...scores)
    return {
      key,
      label: LABELS[key],
      scores,
      spread: max - Math.min(...scores),
      highest: reputations[scores.indexOf(max)]!.agent_id
    }
  })

/** Whether the request may be shown the agent, of this visibility. */
export type Shown<E, R> = (agentId: string, visibility: Visibility) => Effect.Effect<boolean, E, R>

/** The stored score, or one computed now when none is stored yet; with the agent's visibility. */
const publishedScore = (agentId: string, visibility: Visibility, record: ScoreRecord | undefined) =>
  Effect.map(
    record === undefined ? Effect.map(recomputeReputation(agentId), (done) => done.record) : Effect.succeed(record),
    (score): AgentReputation => ({ ...score, visibility })
  )

/** What the request may read of an agent's reputation: undefined for an unknown agent, and for one not `shown`. */
const publicReputationOf = <E, R>(agentId: string, shown: Shown<E, R>) =>
  Effect.gen(function* () {
    const repo = yield* ReputationRepo
    const visibility = yield* repo.visibility(agentId)
    if (visibility === undefined || !(yield* shown(agentId, visibility))) return undefined
    const stored = yield* repo.stored(agentId)
    return yield* publishedScore(agentId, visibility, stored?.record)
  })

export const make = Effect.gen(function* () {
  const identity = yield* IdentityRepo
  const governance = yield* GovernanceLog
  const sql = yield* SqlClient.SqlClient
  const repo = yield* ReputationRepo
  const recomputation = yield* Effect.context<RecomputationNeeds>()

  const published = (agentId: string, visibility: Visibility, record: ScoreRecord | undefined) =>
    publishedScore(agentId, visibility, record).pipe(Effect.provide(recomputation))

  /** A public route's agent: its visibility, 404 when unknown or not `shown`. */
  const publicAgent = <E, R>(agentId: string, shown: Shown<E, R>) =>
    Effect.gen(function* () {
      const visibility = yield* repo.visibility(agentId)
      if (visibility === undefined || !(yield* shown(agentId, visibility)))
        return yield* Effect.fail(agentNotFound(agentId))
      return visibility
    })

  /** What the request may read of an agent's reputation: undefined for an unknown agent, and for one not `shown`. */
  const publicReputation = <E, R>(agentId: string, shown: Shown<E, R>) =>
    publicReputationOf(agentId, shown).pipe(Effect.provide(recomputation))

  /**
   * The public reputation page's reads (src/http/ReputationPageRoute.ts): what `publicReputation`
   * answers, with the agent's scores of the last `days` days; undefined when there is nothing to show.
   */
  const publicPage = <E, R>(agentId: string, days: number, limit: number, shown: Shown<E, R>) =>
    Effect.gen(function* () {
      const reputation = yield* publicReputation(agentId, shown)
      if (reputation === undefined) return undefined
      const now = yield* Clock.currentTimeMillis
      return { reputation, history: yield* repo.history(agentId, new Date(now - days * DAY_MS).toISOString(), limit) }
    })

  /** The agent's reputation on a public route. */
  const get = <E, R>(agentId: string, shown: Shown<E, R>) =>
    Effect.gen(function* () {
      const visibility = yield* publicAgent(agentId, shown)
      const stored = yield* repo.stored(agentId)
      return yield* published(agentId, visibility, stored?.record)
    })

  /** The agent's scores of the last `days` days, on a public route. */
  const history = <E, R>(agentId: string, days: number, limit: number, shown: Shown<E, R>) =>
    Effect.gen(function* () {
      yield* publicAgent(agentId, shown)
      const now = yield* Clock.currentTimeMillis
      const since = new Date(now - days * DAY_MS).toISOString()
      return { agent_id: agentId, days, history: yield* repo.history(agentId, since, limit) }
    })

  /** How the stored scores are spread, by grade and by component. */
  const benchmarks = Effect.gen(function* () {
    const stats = yield* repo.benchmarks(COMPONENT_KEYS)
    return {
      ...stats,
      grades: recordOf(RATED_GRADES, (grade) => stats.grades[grade] ?? 0),
      components: recordOf(COMPONENT_KEYS, (key) => stats.components[key] ?? null),
      computed_at: new Date(yield* Clock.currentTimeMillis).toISOString()
    }
  })

  /** Of `agentIds` (distinct, in order), the reputations the caller may read (public, or `readable`), and the others. */
  const lookup = (agentIds: ReadonlyArray<string>, readable: Readable) =>
    Effect.gen(function* () {
      const mayRead =
        readable === "all"
          ? () => true
          : (
              (ids) => (id: string) =>
                ids.has(id)
            )(new Set(readable))
      const found = yield* repo.lookup(agentIds)
      const reputations: Array<AgentReputation> = []
      const notFound: Array<string> = []
      for (const agentId of agentIds) {
        const agent = found.get(agentId)
        if (agent === undefined || !(agent.visibility === "public" || mayRead(agentId))) notFound.push(agentId)
        else reputations.push(yield* published(agentId, agent.visibility, agent.record))
      }
      return { reputations, notFound }
    })

  /** A page of the reputations the caller may read (public, or `readable`). */
  const search = (query: SearchQuery) =>
    Effect.map(repo.search(query), (page) => ({
      reputations: page.items,
      total: page.total,
      limit: query.limit,
      offset: query.offset
    }))

  /** These agents' reputations side by side; any the caller may not read (public, or `readable`) is "not found". */
  const compare = (agentIds: ReadonlyArray<string>, readable: Readable) =>
    Effect.gen(function* () {
      const { notFound, reputations } = yield* lookup(agentIds, readable)
      if (notFound.length > 0) return yield* Effect.fail(agentNotFound(notFound[0]!))
      const scores = reputations.map((r) => r.score)
      return {
        agent_ids: agentIds,
        reputations,
        score_spread: Math.max(...scores) - Math.min(...scores),
        differences: differencesOf(reputations)
      }
    })

  /** Sets the agent's visibility, as `actor`. */
  const setVisibility = (agentId: string, visibility: Visibility, actor: string) =>
    transaction(
      sql,
      Effect.gen(function* () {
        const before = yield* identity.setVisibility(agentId, visibility)
        // Visibility belongs to the claim: an unclaimed agent (the service-role key sees them) has none to set.
        if (before === undefined)
          return yield* Effect.fail(new ReputationNotFound({ error: `agent ${agentId} not found` }))
        yield* governance.append(agentGovernanceLog(agentId), {
          action: "agent.visibility",
          actor,
          previous_state: { visibility: before },
          new_state: { visibility }
        })
      })
    ).pipe(
      Effect.catchTag("SqlError", (cause) => Effect.fail(new StoreError({ operation: "setVisibility", cause }))),
      Effect.as({ agent_id: agentId, visibility })
    )

  return { publicReputation, publicPage, get, history, benchmarks, lookup, search, compare, setVisibility }
})

export class Reputation extends Context.Tag("candor/services/Reputation")<
  Reputation,
  Effect.Effect.Success<typeof make>
>() {}

export const layer = Layer.effect(Reputation, make)
