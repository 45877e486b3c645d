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
import { AgentId, DateTimeString, Hex32, Identifier } from "../../../core/schema/Ids.js"
import { Policy, PolicyFinding, PolicyMeta, PolicyVerdict } from "../../../core/schema/Policy.js"
import { PolicyEnforcementMode } from "../../../core/schema/Verdict.js"
import { PolicyNotFound } from "../../../services/Policies.js"

const AgentPath = Schema.Struct({ agent_id: AgentId })
const OrgPath = Schema.Struct({ org_id: Identifier })

/** The document in JSON, or the same structure as YAML text under either YAML media type. */
export const PolicyDocument = Schema.Union(
  Policy,
  HttpApiSchema.Text({ contentType: "application/yaml" }),
  HttpApiSchema.Text({ contentType: "text/yaml" })
)

const PolicyId = Schema.String.annotations({ description: "`pol-<uuid>`, one per stored version" })
const Version = Schema.Int.annotations({ description: "1, 2, … per agent or organization; never reused" })

const stored = {
  version: Version,
  policy: Policy.annotations({ description: "The document as stored: normalised, every default filled in" }),
  policy_hash: Hex32.annotations({
    description: 'SHA-256("candor/v1/policy\\0" ‖ JCS(policy)), as the governance log binds it'
  }),
  updated_at: DateTimeString,
  updated_by: Schema.String.annotations({ description: "The user who stored it, or `service`" })
}

export const AgentPolicyRecord = Schema.Struct({
  policy_id: PolicyId,
  scope: Schema.Literal("agent"),
  agent_id: AgentId,
  ...stored
}).annotations({ identifier: "AgentPolicy" })

export const OrgPolicyRecord = Schema.Struct({
  policy_id: PolicyId,
  scope: Schema.Literal("org"),
  org_id: Identifier,
  ...stored
}).annotations({ identifier: "OrgPolicy" })

export const ResolvedPolicy = Schema.Struct({
  agent_id: AgentId,
  resolved_policy: Schema.NullOr(Policy).annotations({
    description: "The organization's and the agent's merged (either alone, as it is); null when neither has one"
  }),
  sources: Schema.Struct({
    org_id: Schema.NullOr(Identifier),
    org_policy_version: Schema.NullOr(Schema.Int),
    agent_policy_version: Schema.NullOr(Schema.Int),
    merge_strategy: Schema.Literal("org_floor")
  })
}).annotations({ identifier: "ResolvedPolicy" })

export const PolicyVersionItem = Schema.Struct({
  version: Version,
  policy_id: PolicyId,
  meta: PolicyMeta,
  policy_hash: Hex32,
  updated_at: DateTimeString,
  updated_by: Schema.String,
  deleted: Schema.Boolean.annotations({ description: "Taken out of force by a DELETE" })
}).annotations({ identifier: "PolicyVersion" })

export const OrgPolicyHistory = Schema.Struct({
  org_id: Identifier,
  versions: Schema.Array(PolicyVersionItem).annotations({ description: "Newest first" })
}).annotations({ identifier: "OrgPolicyHistory" })

export const AgentPolicyHistory = Schema.Struct({
  agent_id: AgentId,
  versions: Schema.Array(PolicyVersionItem).annotations({ description: "Newest first" })
}).annotations({ identifier: "AgentPolicyHistory" })

const ToolName = Schema.String.pipe(
  Schema.minLength(1, { message: () => "a tool name must not be empty" }),
  Schema.maxLength(256, { message: () => "a tool name must be at most 256 characters" })
)

export const EvaluateRequest = Schema.Struct({
  agent_id: AgentId,
  tools: Schema.Array(ToolName).pipe(
    Schema.minItems(1, { message: () => "must list 1 to 256 tool names" }),
    Schema.maxItems(256, { message: () => "must list 1 to 256 tool names" })
  )
}).annotations({ identifier: "PolicyEvaluateRequest" })

export const EvaluateResponse = Schema.Struct({
  agent_id: AgentId,
  verdict: PolicyVerdict,
  violations: Schema.Array(PolicyFinding),
  warnings: Schema.Array(PolicyFinding),
  tools_evaluated: Schema.Int.annotations({ description: "Distinct tool names evaluated" }),
  findings_omitted: Schema.optionalWith(Schema.Int, { exact: true }).annotations({
    description: "Findings past the 256 listed in either list, counted for the verdict but not listed; absent when none"
  }),
  policy_id: Schema.NullOr(PolicyId).annotations({
    description: "The agent's policy version in force, else its organization's; null without a policy"
  }),
  policy_version: Schema.NullOr(Schema.Int),
  enforcement_mode: Schema.NullOr(PolicyEnforcementMode),
  would_block: Schema.Boolean.annotations({
    description: "The gateway would refuse the request (403, X-Policy-Verdict: fail): verdict fail in enforce mode"
  }),
  duration_ms: Schema.Number
}).annotations({ identifier: "PolicyEvaluation" })

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
