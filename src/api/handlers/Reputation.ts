/**
 * The reputation routes (groups/Reputation.ts), through the Reputation service
 * (services/Reputation.ts), and the TeamReputation one for a team's badge.
 *
 * Who sees what: the public routes answer for public and unlisted agents, and 404 for private ones
 * with the text of an unknown id (except to a credential that may read them: ./PublicAccess.ts). The authenticated ones answer for the agents the caller may read
 * and the public ones; any other id is "not found", whatever its visibility.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { AccessControl } from "../../../adapters/auth/AccessControl.js"
import { actorOf, CurrentPrincipal, type Principal } from "../../../adapters/auth/Principal.js"
import { BadRequest } from "../../../adapters/http/ApiErrors.js"
import type { Readable } from "../../../adapters/store/ReputationRepo.js"
import type { StoreError } from "../../../adapters/store/Store.js"
import {
  agentBadge,
  agentBadgeState,
  BADGE_CACHE_CONTROL,
  BADGE_CONTENT_TYPE,
  teamBadge,
  teamBadgeState
} from "../../../core/Badge.js"
import { Identifier } from "../../../core/schema/Ids.js"
import type { Visibility } from "../../../core/schema/Reputation.js"
import { Reputation } from "../../../services/Reputation.js"
import { TeamReputation } from "../../../services/TeamReputation.js"
import { CandorApi } from "../Api.js"
import { COMPARE_MAX, COMPARE_MIN } from "../groups/Reputation.js"
import { agentShown, teamShown } from "./PublicAccess.js"
import { writeAgent } from "./AgentAccess.js"

/** Whether the request may be shown the agent (a private one only to a credential that may read it). */
const shown = (agentId: string, visibility: Visibility) => agentShown(agentId, visibility)

/** The agents an authenticated caller's listings may hold beside the public ones. */
const readableBy = (principal: Principal): Effect.Effect<Readable, StoreError, AccessControl> =>
  principal.kind === "service"
    ? Effect.succeed("all")
    : Effect.flatMap(AccessControl, (access) => access.visibleAgents(principal))

const readableByCaller = Effect.flatMap(CurrentPrincipal, readableBy)

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

export const ReputationLive = HttpApiBuilder.group(CandorApi, "reputation", (handlers) =>
  Effect.gen(function* () {
    const reputation = yield* Reputation
    const teamReputation = yield* TeamReputation
    return handlers
      .handle("getReputation", ({ path }) => reputation.get(path.agent_id, shown))
      .handle("getReputationHistory", ({ path, urlParams }) =>
        reputation.history(path.agent_id, urlParams.days, urlParams.limit, shown)
      )
      .handle("getReputationBadge", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const found = yield* reputation.publicReputation(path.agent_id, shown)
          // What publicReputation answers may be shown to this request (a private agent only to its readers).
          const rating = found === undefined ? undefined : { ...found, visibility: "public" as const }
          return HttpServerResponse.text(agentBadge(agentBadgeState(rating), urlParams.variant, urlParams.style), {
            contentType: BADGE_CONTENT_TYPE,
            headers: { "cache-control": BADGE_CACHE_CONTROL }
          })
        })
      )
      .handle("getTeamBadge", ({ path, urlParams }) =>
        Effect.gen(function* () {
          // A team's badge is public by its id (a random UUID); the score it shows is the one stored.
          // A team holding a private agent is, to anyone outside its organization, an unknown team.
          const stored = (yield* teamShown(path.team_id)) ? yield* teamReputation.stored(path.team_id) : undefined
          const rating = stored === undefined ? null : { ...stored, checkpoint_count: stored.total_assessments }
          return HttpServerResponse.text(teamBadge(teamBadgeState(rating), urlParams.variant, urlParams.style), {
            contentType: BADGE_CONTENT_TYPE,
            headers: { "cache-control": BADGE_CACHE_CONTROL }
          })
        })
      )
      .handle("getReputationBenchmarks", () => reputation.benchmarks)
  })
)

export const ReputationQueriesLive = HttpApiBuilder.group(CandorApi, "reputationQueries", (handlers) =>
  Effect.map(Reputation, (reputation) =>
    handlers
      .handle("batchReputation", ({ payload }) =>
        readableByCaller.pipe(
          Effect.flatMap((readable) => reputation.lookup(distinct(payload.agent_ids), readable)),
          Effect.map(({ notFound, reputations }) => ({ reputations, not_found: notFound }))
        )
      )
      .handle("searchReputation", ({ urlParams }) =>
        readableByCaller.pipe(Effect.flatMap((readable) => reputation.search({ ...urlParams, readable })))
      )
      .handle("compareReputation", ({ urlParams }) =>
        Effect.gen(function* () {
          const ids = yield* compareIds(urlParams.agent_ids)
          return yield* reputation.compare(ids, yield* readableByCaller)
        })
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
