/**
 * Agent reputation (docs/api.md, "Reputation"; the method in docs/reputation.md, the storage in
 * docs/reputation-storage.md).
 *
 * `ReputationApi` is public, no credentials: one agent's reputation and history by id, the
 * benchmarks over public agents, and the agent and team badges. A private agent answers 404 exactly
 * as an unknown id does (its badge: "Not Rated", as for an unknown id).
 *
 * `ReputationQueriesApi` needs credentials (any role): batch, search and compare over the agents the
 * caller may read and the public ones (any other id is "not found", never told apart), and an
 * agent's visibility, which its Owners and Admins set.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { AgentBadgeParams, TeamBadgeParams } from "../../../core/schema/Badge.js"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { BadRequest, Forbidden, InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import { AgentId, Identifier } from "../../../core/schema/Ids.js"
import { literalUnion } from "../../../core/schema/Literals.js"
import { AgentReputation, Confidence, Grade } from "../../../core/schema/Reputation.js"
import { ReputationNotFound } from "../../../services/Reputation.js"
import { IntParam } from "./Checkpoints.js"
import {
  ReputationHistory,
  ReputationBenchmarks,
  ReputationBatchRequest,
  ReputationBatch,
  ReputationSearch,
  ReputationComparison,
  AgentVisibility,
  VisibilityUpdate
} from "../../../core/schema/ReputationQueries.js"

// The handler reads the grades the benchmarks count from here (core/schema/ReputationQueries.ts).
export { RATED_GRADES } from "../../../core/schema/ReputationQueries.js"

const AgentPath = Schema.Struct({ agent_id: AgentId })

/** A badge (docs/reputation-badges.md): public, cached an hour; "Not Rated" for unknown and private ids. */
export const BadgeSvg = Schema.String.pipe(
  HttpApiSchema.withEncoding({ kind: "Text", contentType: "image/svg+xml" })
).annotations({ description: "An SVG badge with a <title> for screen readers" })

export const COMPARE_MIN = 2
export const COMPARE_MAX = 10

export const SEARCH_SORTS = ["score_desc", "score_asc", "recent"] as const

export const ReputationSearchParams = Schema.Struct({
  q: Schema.optionalWith(
    Schema.String.pipe(Schema.minLength(1), Schema.maxLength(256)).annotations({
      message: () => ({ message: "must be 1 to 256 characters", override: true })
    }),
    { exact: true }
  ),
  grade: Schema.optionalWith(Grade, { exact: true }),
  confidence: Schema.optionalWith(Confidence, { exact: true }),
  sort: Schema.optionalWith(literalUnion(SEARCH_SORTS), { default: () => "score_desc" as const, exact: true }),
  limit: Schema.optionalWith(IntParam(1, 100), { default: () => 20, exact: true }),
  offset: Schema.optionalWith(IntParam(0, 100_000), { default: () => 0, exact: true })
})

export class ReputationApi extends HttpApiGroup.make("reputation")
  .add(HttpApiEndpoint.get("getReputationBenchmarks", "/reputation/benchmarks").addSuccess(ReputationBenchmarks))
  .add(HttpApiEndpoint.get("getReputation", "/reputation/:agent_id").setPath(AgentPath).addSuccess(AgentReputation))
  .add(
    HttpApiEndpoint.get("getReputationHistory", "/reputation/:agent_id/history")
      .setPath(AgentPath)
      .setUrlParams(
        Schema.Struct({
          days: Schema.optionalWith(IntParam(1, 365), { default: () => 90, exact: true }),
          limit: Schema.optionalWith(IntParam(1, 1000), { default: () => 100, exact: true })
        })
      )
      .addSuccess(ReputationHistory)
  )
  .add(
    HttpApiEndpoint.get("getReputationBadge", "/reputation/:agent_id/badge.svg")
      .setPath(AgentPath)
      .setUrlParams(AgentBadgeParams)
      .addSuccess(BadgeSvg)
  )
  .add(
    HttpApiEndpoint.get("getTeamBadge", "/teams/:team_id/badge.svg")
      .setPath(Schema.Struct({ team_id: Identifier }))
      .setUrlParams(TeamBadgeParams)
      .addSuccess(BadgeSvg)
  )
  .addError(NotFound)
  .addError(InternalError) {}

export class ReputationQueriesApi extends HttpApiGroup.make("reputationQueries")
  .add(
    HttpApiEndpoint.post("batchReputation", "/reputation/batch")
      .setPayload(ReputationBatchRequest)
      .addSuccess(ReputationBatch)
  )
  .add(
    HttpApiEndpoint.get("searchReputation", "/reputation/search")
      .setUrlParams(ReputationSearchParams)
      .addSuccess(ReputationSearch)
  )
  .add(
    HttpApiEndpoint.get("compareReputation", "/reputation/compare")
      .setUrlParams(
        Schema.Struct({
          agent_ids: Schema.String.annotations({
            description: `${COMPARE_MIN} to ${COMPARE_MAX} agent ids, separated by commas`
          })
        })
      )
      .addSuccess(ReputationComparison)
  )
  .add(
    HttpApiEndpoint.put("setAgentVisibility", "/agents/:agent_id/visibility")
      .setPath(AgentPath)
      .setPayload(VisibilityUpdate)
      .addSuccess(AgentVisibility)
  )
  .addError(BadRequest)
  .addError(Forbidden)
  .addError(NotFound)
  .addError(InternalError)
  // The Reputation service's own error (services/Reputation.ts), with its status.
  .addError(ReputationNotFound)
  .middleware(Authentication) {}
