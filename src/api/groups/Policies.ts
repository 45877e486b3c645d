/**
 * Tool policies (docs/api.md, "Policies"; the document is core/schema/Policy.ts, the CLPI DSL): an
 * agent's and an organization's, every version kept, the merged policy an agent is subject to, and
 * what the gateway would decide for a set of tools.
 *
 * The PUT bodies are JSON or YAML (`application/yaml`, `text/yaml`), so their handlers read the raw
 * body (handlers/PolicyBody.ts); the payload declared here is what the OpenAPI document shows.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { BadRequest, Forbidden, InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import { AgentId, Identifier } from "../../../core/schema/Ids.js"
import {
  Policy,
  AgentPolicyRecord,
  OrgPolicyRecord,
  ResolvedPolicy,
  OrgPolicyHistory,
  AgentPolicyHistory,
  EvaluateRequest,
  EvaluateResponse
} from "../../../core/schema/Policy.js"
import { PolicyNotFound } from "../../../services/Policies.js"

const AgentPath = Schema.Struct({ agent_id: AgentId })
const OrgPath = Schema.Struct({ org_id: Identifier })

/** The document in JSON, or the same structure as YAML text under either YAML media type. */
export const PolicyDocument = Schema.Union(
  Policy,
  HttpApiSchema.Text({ contentType: "application/yaml" }),
  HttpApiSchema.Text({ contentType: "text/yaml" })
)

export class PoliciesApi extends HttpApiGroup.make("policies")
  .add(
    HttpApiEndpoint.get("getAgentPolicy", "/agents/:agent_id/policy").setPath(AgentPath).addSuccess(AgentPolicyRecord)
  )
  .add(
    HttpApiEndpoint.put("putAgentPolicy", "/agents/:agent_id/policy")
      .setPath(AgentPath)
      .setPayload(PolicyDocument)
      .addSuccess(AgentPolicyRecord)
      .addError(BadRequest)
  )
  .add(
    HttpApiEndpoint.del("deleteAgentPolicy", "/agents/:agent_id/policy")
      .setPath(AgentPath)
      .addSuccess(HttpApiSchema.NoContent)
  )
  .add(
    HttpApiEndpoint.get("getResolvedPolicy", "/agents/:agent_id/policy/resolved")
      .setPath(AgentPath)
      .addSuccess(ResolvedPolicy)
  )
  .add(
    HttpApiEndpoint.get("getAgentPolicyHistory", "/agents/:agent_id/policy/history")
      .setPath(AgentPath)
      .addSuccess(AgentPolicyHistory)
  )
  .add(HttpApiEndpoint.get("getOrgPolicy", "/orgs/:org_id/policy").setPath(OrgPath).addSuccess(OrgPolicyRecord))
  .add(
    HttpApiEndpoint.put("putOrgPolicy", "/orgs/:org_id/policy")
      .setPath(OrgPath)
      .setPayload(PolicyDocument)
      .addSuccess(OrgPolicyRecord)
      .addError(BadRequest)
  )
  .add(
    HttpApiEndpoint.del("deleteOrgPolicy", "/orgs/:org_id/policy").setPath(OrgPath).addSuccess(HttpApiSchema.NoContent)
  )
  .add(
    HttpApiEndpoint.get("getOrgPolicyHistory", "/orgs/:org_id/policy/history")
      .setPath(OrgPath)
      .addSuccess(OrgPolicyHistory)
  )
  .add(
    HttpApiEndpoint.post("evaluatePolicy", "/policies/evaluate")
      .setPayload(EvaluateRequest)
      .addSuccess(EvaluateResponse)
  )
  .addError(Forbidden)
  .addError(NotFound)
  .addError(InternalError)
  .addError(PolicyNotFound)
  .middleware(Authentication) {}
