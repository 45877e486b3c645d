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
import { AgentBadgeParams, TeamBadgeParams } from "../../../core/Badge.js"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { BadRequest, Forbidden, InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import { AgentId, DateTimeString, Identifier } from "../../../core/schema/Ids.js"
import { literalUnion } from "../../../core/schema/Literals.js"
import {
  AgentReputation,
  ComponentKey,
  Confidence,
  Grade,
  ReputationHistoryItem,
  Visibility
} from "../../../core/schema/Reputation.js"
import { IntParam } from "./Checkpoints.js"

const AgentPath = Schema.Struct({ agent_id: AgentId })

/** A badge (docs/reputation-badges.md): public, cached an hour; "Not Rated" for unknown and private ids. */
export const BadgeSvg = Schema.String.pipe(
  HttpApiSchema.withEncoding({ kind: "Text", contentType: "image/svg+xml" })
).annotations({ description: "An SVG badge with a <title> for screen readers" })

/** The most agents one batch reads, and one comparison holds. */
export const BATCH_MAX = 50
export const COMPARE_MIN = 2
export const COMPARE_MAX = 10

export const ReputationHistory = Schema.Struct({
  agent_id: AgentId,
  days: Schema.Int,
  history: Schema.Array(ReputationHistoryItem).annotations({ description: "Newest first" })
}).annotations({ identifier: "ReputationHistory" })

const Statistic = Schema.NullOr(Schema.Number)

/** The grades of rated agents: every grade but NR. */
export const RATED_GRADES = ["AAA", "AA", "A", "BBB", "BB", "B", "CCC"] as const

export const ReputationBenchmarks = Schema.Struct({
  count: Schema.NonNegativeInt.annotations({ description: "Public, eligible (rated) agents" }),
  grades: Schema.Record({ key: literalUnion(RATED_GRADES), value: Schema.NonNegativeInt }).annotations({
    description: "Agents per grade (every rated grade, 0 included)"
  }),
  mean: Statistic,
  percentiles: Schema.Struct({ p10: Statistic, p25: Statistic, p50: Statistic, p75: Statistic, p90: Statistic }),
  components: Schema.Record({ key: ComponentKey, value: Statistic }).annotations({
    description: "Mean score of each component"
  }),
  computed_at: DateTimeString
}).annotations({
  identifier: "ReputationBenchmarks",
  description: "The score distribution over public eligible agents; statistics are null without any"
})

export const ReputationBatchRequest = Schema.Struct({
  agent_ids: Schema.Array(AgentId)
    .pipe(Schema.minItems(1), Schema.maxItems(BATCH_MAX))
    .annotations({
      description: `1 to ${BATCH_MAX} agent ids`
    })
}).annotations({ identifier: "ReputationBatchRequest" })

export const ReputationBatch = Schema.Struct({
  reputations: Schema.Array(AgentReputation).annotations({ description: "In the order asked" }),
  not_found: Schema.Array(AgentId).annotations({ description: "Unknown, or not readable by the caller" })
}).annotations({ identifier: "ReputationBatch" })

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

export const ReputationSearch = Schema.Struct({
  reputations: Schema.Array(AgentReputation),
  total: Schema.NonNegativeInt,
  limit: Schema.Int,
  offset: Schema.Int
}).annotations({ identifier: "ReputationSearch" })

export const ComponentDifference = Schema.Struct({
  key: ComponentKey,
  label: Schema.String,
  scores: Schema.Array(Schema.Int).annotations({ description: "The agents' component scores, in their order" }),
  spread: Schema.Int.annotations({ description: "Highest − lowest" }),
  highest: AgentId.annotations({ description: "The agent with the highest score (the first of equals)" })
}).annotations({ identifier: "ReputationComponentDifference" })

export const ReputationComparison = Schema.Struct({
  agent_ids: Schema.Array(AgentId),
  reputations: Schema.Array(AgentReputation),
  score_spread: Schema.Int,
  differences: Schema.Array(ComponentDifference)
}).annotations({ identifier: "ReputationComparison" })

export const AgentVisibility = Schema.Struct({ agent_id: AgentId, visibility: Visibility }).annotations({
  identifier: "AgentVisibility"
})

export const VisibilityUpdate = Schema.Struct({ visibility: Visibility }).annotations({
  identifier: "VisibilityUpdate"
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
  .middleware(Authentication) {}
