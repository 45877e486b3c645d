/**
 * The governance logs (docs/api.md, "Governance log"): an agent's and an organization's, each an
 * RFC 6962 log with C2SP signed tree heads. Readers of the agent, members of the organization.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { BadRequest, Forbidden, InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import {
  GovernanceConsistencyProof,
  GovernanceInclusionProof,
  GovernanceLogPage
} from "../../../core/schema/Governance.js"
import { AgentId, Identifier } from "../../../core/schema/Ids.js"
import { IntParam } from "./Checkpoints.js"

export const GOVERNANCE_LOG_LIMIT = { default: 100, max: 1000 } as const

const AgentPath = Schema.Struct({ agent_id: AgentId })
const OrgPath = Schema.Struct({ org_id: Identifier })
const IndexPath = { index: IntParam(0, Number.MAX_SAFE_INTEGER) }
const Positive = IntParam(1, Number.MAX_SAFE_INTEGER)

const PageParams = Schema.Struct({
  offset: Schema.optionalWith(IntParam(0, Number.MAX_SAFE_INTEGER), { default: () => 0, exact: true }),
  limit: Schema.optionalWith(IntParam(1, GOVERNANCE_LOG_LIMIT.max), {
    default: () => GOVERNANCE_LOG_LIMIT.default,
    exact: true
  })
})
const InclusionParams = Schema.Struct({ tree_size: Schema.optionalWith(Positive, { exact: true }) })
const ConsistencyParams = Schema.Struct({ from: Positive, to: Schema.optionalWith(Positive, { exact: true }) })

export class GovernanceLogsApi extends HttpApiGroup.make("governanceLogs")
  .add(
    HttpApiEndpoint.get("agentGovernanceLog", "/agents/:agent_id/governance-log")
      .setPath(AgentPath)
      .setUrlParams(PageParams)
      .addSuccess(GovernanceLogPage)
  )
  .add(
    HttpApiEndpoint.get("agentGovernanceConsistency", "/agents/:agent_id/governance-log/consistency-proof")
      .setPath(AgentPath)
      .setUrlParams(ConsistencyParams)
      .addSuccess(GovernanceConsistencyProof)
  )
  .add(
    HttpApiEndpoint.get("agentGovernanceInclusion", "/agents/:agent_id/governance-log/:index/inclusion-proof")
      .setPath(Schema.Struct({ ...AgentPath.fields, ...IndexPath }))
      .setUrlParams(InclusionParams)
      .addSuccess(GovernanceInclusionProof)
  )
  .add(
    HttpApiEndpoint.get("orgGovernanceLog", "/orgs/:org_id/governance-log")
      .setPath(OrgPath)
      .setUrlParams(PageParams)
      .addSuccess(GovernanceLogPage)
  )
  .add(
    HttpApiEndpoint.get("orgGovernanceConsistency", "/orgs/:org_id/governance-log/consistency-proof")
      .setPath(OrgPath)
      .setUrlParams(ConsistencyParams)
      .addSuccess(GovernanceConsistencyProof)
  )
  .add(
    HttpApiEndpoint.get("orgGovernanceInclusion", "/orgs/:org_id/governance-log/:index/inclusion-proof")
      .setPath(Schema.Struct({ ...OrgPath.fields, ...IndexPath }))
      .setUrlParams(InclusionParams)
      .addSuccess(GovernanceInclusionProof)
  )
  .addError(BadRequest)
  .addError(Forbidden)
  .addError(NotFound)
  .addError(InternalError)
  .middleware(Authentication) {}
