/**
 * Trust edges (docs/trust.md, docs/api.md "Trust edges"): an agent's public statements that it
 * trusts other agents, which raise the coherence component of the trusted agents' reputations
 * (core/TrustPropagation.ts), never the declarer's own. Owner and Admin of the source agent create
 * and delete them; readers of an agent list the edges it declared and the edges naming it.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { BadRequest, Conflict, Forbidden, InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import { AgentId, Identifier } from "../../../core/schema/Ids.js"
import { literalUnion } from "../../../core/schema/Literals.js"
import { TrustEdge, CreateTrustEdge, TrustEdgeList, TrustEdgeDeleted } from "../../../core/schema/Trust.js"
import { IntParam } from "./Checkpoints.js"
import { TrustEdgeConflict, TrustEdgeInvalid, TrustEdgeNotFound } from "../../../services/TrustEdges.js"

const AgentPath = Schema.Struct({ agent_id: AgentId })
const EdgePath = Schema.Struct({ agent_id: AgentId, edge_id: Identifier })

export const TRUST_EDGE_LIST_LIMIT = { min: 1, max: 1000, default: 100 } as const

export const TrustEdgeListParams = Schema.Struct({
  direction: Schema.optionalWith(literalUnion(["outgoing", "incoming", "both"]), {
    default: () => "both" as const,
    exact: true
  }),
  limit: Schema.optionalWith(IntParam(TRUST_EDGE_LIST_LIMIT.min, TRUST_EDGE_LIST_LIMIT.max), {
    default: () => TRUST_EDGE_LIST_LIMIT.default,
    exact: true
  }),
  offset: Schema.optionalWith(IntParam(0, Number.MAX_SAFE_INTEGER), { default: () => 0, exact: true })
})

const ROOT = "/agents/:agent_id/trust-edges"

export class TrustEdgesApi extends HttpApiGroup.make("trustEdges")
  .add(
    HttpApiEndpoint.post("createTrustEdge", ROOT)
      .setPath(AgentPath)
      .setPayload(CreateTrustEdge)
      .addSuccess(TrustEdge, { status: 201 })
  )
  .add(
    HttpApiEndpoint.get("listTrustEdges", ROOT)
      .setPath(AgentPath)
      .setUrlParams(TrustEdgeListParams)
      .addSuccess(TrustEdgeList)
  )
  .add(HttpApiEndpoint.del("deleteTrustEdge", `${ROOT}/:edge_id`).setPath(EdgePath).addSuccess(TrustEdgeDeleted))
  .addError(BadRequest)
  .addError(Forbidden)
  .addError(NotFound)
  .addError(Conflict)
  .addError(InternalError)
  // The TrustEdges service's own errors (services/TrustEdges.ts), each with its status.
  .addError(TrustEdgeNotFound)
  .addError(TrustEdgeInvalid)
  .addError(TrustEdgeConflict)
  .middleware(Authentication) {}
