/**
 * The reputation routes (groups/Reputation.ts). Scores are read as the workers stored them
 * (streams/ReputationWorker.ts); an agent read before any was stored (claimed, no traffic yet, or
 * its first commit not drained yet) is computed on the spot, by the same recomputation.
 *
 * Who sees what: the public routes answer for public and unlisted agents, and 404 for private ones
 * with the text of an unknown id (except to a credential that may read them: ./PublicAccess.ts). The authenticated ones answer for the agents the caller may read
 * and the public ones; any other id is "not found", whatever its visibility.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { AccessControl } from "../../../adapters/auth/AccessControl.js"
import { actorOf, CurrentPrincipal, type Principal } from "../../../adapters/auth/Principal.js"
import { BadRequest, NotFound } from "../../../adapters/http/ApiErrors.js"
import { type Readable, ReputationRepo, type ScoreRecord } from "../../../adapters/store/ReputationRepo.js"
import type { StoreError } from "../../../adapters/store/Store.js"
import { LABELS } from "../../../core/Reputation.js"
import { Identifier } from "../../../core/schema/Ids.js"
import { type AgentReputation, COMPONENT_KEYS, type Visibility } from "../../../core/schema/Reputation.js"
import { Reputation } from "../../../services/Reputation.js"
import { recomputeReputation } from "../../../services/ReputationRecompute.js"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import {
  agentBadge,
  agentBadgeState,
  BADGE_CACHE_CONTROL,
  BADGE_CONTENT_TYPE,
  teamBadge,
  teamBadgeState
} from "../../../core/Badge.js"
import { TeamReputationRepo } from "../../../adapters/store/TeamReputationRepo.js"
import { CandorApi } from "../Api.js"
import { COMPARE_MAX, COMPARE_MIN, RATED_GRADES } from "../groups/Reputation.js"
import { internal } from "./Access.js"
import { agentShown, teamShown } from "./PublicAccess.js"
import { writeAgent } from "./AgentAccess.js"

const DAY_MS = 86_400_000

/** `{key: value(key)}` for every key. */
const recordOf = <K extends string, V>(keys: ReadonlyArray<K>, value: (key: K) => V): Record<K, V> =>
  Object.fromEntries(keys.map((key) => [key, value(key)])) as Record<K, V>

const agentNotFound = (agentId: string) => new NotFound({ error: `agent ${agentId} not found` })

/** The stored score, or one computed now when none is stored yet; with the agent's visibility. */
const published = (agentId: string, visibility: Visibility, record: ScoreRecord | undefined) =>
  Effect.map(
    record === undefined ? Effect.map(recomputeReputation(agentId), (done) => done.record) : Effect.succeed(record),
    (score): AgentReputation => ({ ...score, visibility })
  )

/** A public route's agent: its visibility, 404 when unknown or private (unless the credential sent may read it). */
const publicAgent = (agentId: string) =>
  Effect.gen(function* () {
    const visibility = yield* (yield* ReputationRepo).visibility(agentId)
    if (visibility === undefined || !(yield* agentShown(agentId, visibility)))
      return yield* Effect.fail(agentNotFound(agentId))
    return visibility
  })

/**
 * What the request may read of an agent's reputation: undefined for an unknown agent, and for a
 * private one unless the request's credential may read it (./PublicAccess.ts).
 */
export const publicReputation = (agentId: string) =>
  Effect.gen(function* () {
    const visibility = yield* (yield* ReputationRepo).visibility(agentId)
    if (visibility === undefined || !(yield* agentShown(agentId, visibility))) return undefined
    const stored = yield* (yield* ReputationRepo).stored(agentId)
    return yield* published(agentId, visibility, stored?.record)
  })

/** The agents an authenticated caller's listings may hold beside the public ones. */
const readableBy = (principal: Principal): Effect.Effect<Readable, StoreError, AccessControl> =>
  principal.kind === "service"
    ? Effect.succeed("all")
    : Effect.flatMap(AccessControl, (access) => access.visibleAgents(principal))

/** Of `agentIds` (distinct, in order), the reputations the caller may read, and the others. */
const readableReputations = (agentIds: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const readable = yield* readableBy(yield* CurrentPrincipal)
    const mayRead =
      readable === "all"
        ? () => true
        : (
            (ids) => (id: string) =>
              ids.has(id)
          )(new Set(readable))
    const found = yield* (yield* ReputationRepo).lookup(agentIds)
    const reputations: Array<AgentReputation> = []
    const notFound: Array<string> = []
    for (const agentId of agentIds) {
      const agent = found.get(agentId)
      if (agent === undefined || !(agent.visibility === "public" || mayRead(agentId))) notFound.push(agentId)
      else reputations.push(yield* published(agentId, agent.visibility, agent.record))
    }
    return { reputations, notFound }
  })

const distinct = (ids: ReadonlyArray<string>): ReadonlyArray<string> => [...new Set(ids)]

const isIdentifier = Schema.is(Identifier)

/** `agent_ids=a,b,…` of a comparison: 2 to 10 distinct ids. */
const compareIds = (raw: string) => {
  const ids = distinct(raw.split(",").map((id) => id.trim()))
  if (ids.some((id) => !isIdentifier(id)))
    return Effect.fail(new BadRequest({ error: "agent_ids: every id must be 1 to 256 characters without whitespace" }))
  if (ids.length < COMPARE_MIN || ids.length > COMPARE_MAX)
    return Effect.fail(
      new BadRequest({
        error: `agent_ids: between ${COMPARE_MIN} and ${COMPARE_MAX} distinct agent ids, separated by commas; got ${ids.length}`
      })
    )
  return Effect.succeed(ids)
}

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

export const ReputationLive = HttpApiBuilder.group(CandorApi, "reputation", (handlers) =>
  handlers
    .handle("getReputation", ({ path }) =>
      Effect.gen(function* () {
        const visibility = yield* publicAgent(path.agent_id)
        const stored = yield* (yield* ReputationRepo).stored(path.agent_id)
        return yield* published(path.agent_id, visibility, stored?.record)
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("getReputationHistory", ({ path, urlParams }) =>
      Effect.gen(function* () {
        yield* publicAgent(path.agent_id)
        const now = yield* Clock.currentTimeMillis
        const since = new Date(now - urlParams.days * DAY_MS).toISOString()
        const history = yield* (yield* ReputationRepo).history(path.agent_id, since, urlParams.limit)
        return { agent_id: path.agent_id, days: urlParams.days, history }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("getReputationBadge", ({ path, urlParams }) =>
      Effect.gen(function* () {
        const reputation = yield* publicReputation(path.agent_id)
        // What publicReputation answers may be shown to this request (a private agent only to its readers).
        const rating = reputation === undefined ? undefined : { ...reputation, visibility: "public" as const }
        return HttpServerResponse.text(agentBadge(agentBadgeState(rating), urlParams.variant, urlParams.style), {
          contentType: BADGE_CONTENT_TYPE,
          headers: { "cache-control": BADGE_CACHE_CONTROL }
        })
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("getTeamBadge", ({ path, urlParams }) =>
      Effect.gen(function* () {
        // A team's badge is public by its id (a random UUID); the score it shows is the one stored.
        // A team holding a private agent is, to anyone outside its organization, an unknown team.
        const stored = (yield* teamShown(path.team_id))
          ? yield* (yield* TeamReputationRepo).stored(path.team_id)
          : undefined
        const rating =
          stored === undefined ? null : { ...stored.reputation, checkpoint_count: stored.reputation.total_assessments }
        return HttpServerResponse.text(teamBadge(teamBadgeState(rating), urlParams.variant, urlParams.style), {
          contentType: BADGE_CONTENT_TYPE,
          headers: { "cache-control": BADGE_CACHE_CONTROL }
        })
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("getReputationBenchmarks", () =>
      Effect.gen(function* () {
        const stats = yield* (yield* ReputationRepo).benchmarks(COMPONENT_KEYS)
        return {
          ...stats,
          grades: recordOf(RATED_GRADES, (grade) => stats.grades[grade] ?? 0),
          components: recordOf(COMPONENT_KEYS, (key) => stats.components[key] ?? null),
          computed_at: new Date(yield* Clock.currentTimeMillis).toISOString()
        }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
)

export const ReputationQueriesLive = HttpApiBuilder.group(CandorApi, "reputationQueries", (handlers) =>
  Effect.map(Reputation, (reputation) =>
    handlers
      .handle("batchReputation", ({ payload }) =>
        Effect.map(readableReputations(distinct(payload.agent_ids)), ({ notFound, reputations }) => ({
          reputations,
          not_found: notFound
        })).pipe(Effect.catchTag("StoreError", internal))
      )
      .handle("searchReputation", ({ urlParams }) =>
        Effect.gen(function* () {
          const readable = yield* readableBy(yield* CurrentPrincipal)
          const page = yield* (yield* ReputationRepo).search({ ...urlParams, readable })
          return { reputations: page.items, total: page.total, limit: urlParams.limit, offset: urlParams.offset }
        }).pipe(Effect.catchTag("StoreError", internal))
      )
      .handle("compareReputation", ({ urlParams }) =>
        Effect.gen(function* () {
          const ids = yield* compareIds(urlParams.agent_ids)
          const { notFound, reputations } = yield* readableReputations(ids)
          if (notFound.length > 0) return yield* Effect.fail(agentNotFound(notFound[0]!))
          const scores = reputations.map((r) => r.score)
          return {
            agent_ids: ids,
            reputations,
            score_spread: Math.max(...scores) - Math.min(...scores),
            differences: differencesOf(reputations)
          }
        }).pipe(Effect.catchTag("StoreError", internal))
      )
      .handle("setAgentVisibility", ({ path, payload }) =>
        Effect.gen(function* () {
          yield* writeAgent(path.agent_id)
          const actor = actorOf(yield* CurrentPrincipal)
          return yield* reputation.setVisibility(path.agent_id, payload.visibility, actor)
        })
      )
  )
)
