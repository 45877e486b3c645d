/**
 * Containment (docs/api.md, "Containment"): pause, resume, kill and reactivate an agent (scope
 * `agent`, the default) or every agent of its provider key (scope `key`), read its containment and
 * log, set its auto-containment threshold. The same six routes under
 * `/v1/orgs/{org_id}/agents/{agent_id}` (an organization's agent, for its members) and under
 * `/v1/agents/{agent_id}` (any agent the caller may see, a personal one included).
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { BadRequest, Forbidden, InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import { AgentStatus, ContainedStatus } from "../../../core/schema/Agent.js"
import { ContainmentAction, ContainmentScope } from "../../../core/schema/Containment.js"
import { AgentId, DateTimeString, Identifier } from "../../../core/schema/Ids.js"
import { ContainmentRefused } from "../../../services/Containment.js"

export const MAX_REASON_LENGTH = 1000

/** At least two: one violation is not a streak (the judge can be wrong once). */
export const MIN_AUTO_CONTAINMENT_THRESHOLD = 2

const AgentPath = Schema.Struct({ agent_id: AgentId })
const OrgAgentPath = Schema.Struct({ org_id: Identifier, agent_id: AgentId })

const Reason = Schema.NullOr(Schema.String.pipe(Schema.maxLength(MAX_REASON_LENGTH))).annotations({
  message: () => ({ message: `must be a string of at most ${MAX_REASON_LENGTH} characters, or null`, override: true })
})

const Scope = ContainmentScope.annotations({
  message: () => ({ message: 'must be "agent" or "key"', override: true }),
  description: "agent (the default): this agent only; key: every agent derived from its provider key"
})

const ReasonFields = Schema.Struct({
  reason: Schema.optionalWith(Reason, { exact: true }),
  scope: Schema.optionalWith(Scope, { exact: true })
})
const ScopeFields = Schema.Struct({ scope: Schema.optionalWith(Scope, { exact: true }) })

const SCOPE_JSON_SCHEMA = { type: "string", enum: ["agent", "key"] }

/**
 * Pause and kill: the body is optional (none, `{}`, `{reason}`, `{scope}` or both). An empty body
 * arrives as null, read as `{}` (a union with null would report every field error twice, once per member).
 */
export const ContainmentReason = Schema.transform(Schema.Unknown, ReasonFields, {
  strict: false,
  decode: (body) => body ?? {},
  encode: (body) => body
}).annotations({
  identifier: "ContainmentReason",
  jsonSchema: {
    type: "object",
    properties: { reason: { type: ["string", "null"], maxLength: MAX_REASON_LENGTH }, scope: SCOPE_JSON_SCHEMA },
    additionalProperties: false
  }
})

/** Resume and reactivate: none, `{}` or `{scope}`. */
export const ContainmentScopeBody = Schema.transform(Schema.Unknown, ScopeFields, {
  strict: false,
  decode: (body) => body ?? {},
  encode: (body) => body
}).annotations({
  identifier: "ContainmentScopeBody",
  jsonSchema: { type: "object", properties: { scope: SCOPE_JSON_SCHEMA }, additionalProperties: false }
})

export const AgentContained = Schema.Struct({
  agent_id: AgentId,
  containment_scope: ContainmentScope,
  containment_status: ContainedStatus,
  contained_at: DateTimeString,
  contained_by: Schema.String.annotations({ description: "A user id, `service` or `system`" }),
  containment_reason: Schema.NullOr(Schema.String)
}).annotations({ identifier: "AgentContained" })

export const AgentActive = Schema.Struct({
  agent_id: AgentId,
  containment_scope: ContainmentScope,
  containment_status: Schema.Literal("active").annotations({
    description: "The scope acted on is active; the agent may still be contained at the other (GET …/containment)"
  })
}).annotations({ identifier: "AgentActive" })

export const ContainmentLogItem = Schema.Struct({
  action: ContainmentAction,
  actor: Schema.String,
  reason: Schema.NullOr(Schema.String),
  previous_status: AgentStatus,
  new_status: AgentStatus,
  scope: ContainmentScope,
  created_at: DateTimeString
}).annotations({ identifier: "ContainmentLogItem" })

/** One scope's containment. */
export const ContainmentView = Schema.Struct({
  status: AgentStatus,
  contained_at: Schema.NullOr(DateTimeString),
  contained_by: Schema.NullOr(Schema.String),
  reason: Schema.NullOr(Schema.String)
}).annotations({ identifier: "ContainmentView" })

export const AgentContainment = Schema.Struct({
  agent_id: AgentId,
  containment_status: AgentStatus.annotations({
    description: "In force: the agent's own containment or its key's, the more severe (killed over paused)"
  }),
  containment_scope: Schema.NullOr(ContainmentScope).annotations({
    description: "Which containment is in force; null when the agent is active"
  }),
  contained_at: Schema.NullOr(DateTimeString),
  contained_by: Schema.NullOr(Schema.String),
  containment_reason: Schema.NullOr(Schema.String),
  agent_containment: ContainmentView.annotations({ description: "The agent's own containment (scope agent)" }),
  key_containment: Schema.NullOr(ContainmentView).annotations({
    description: "Its provider key's (scope key); null when Candor does not know the key (the agent is not claimed)"
  }),
  auto_containment_threshold: Schema.NullOr(Schema.Int),
  log: Schema.Array(ContainmentLogItem).annotations({ description: "Newest first, at most 100" })
}).annotations({ identifier: "AgentContainment" })

const Threshold = Schema.NullOr(
  Schema.Int.pipe(Schema.greaterThanOrEqualTo(MIN_AUTO_CONTAINMENT_THRESHOLD))
).annotations({
  message: () => ({
    message: `must be an integer of at least ${MIN_AUTO_CONTAINMENT_THRESHOLD}, or null (never)`,
    override: true
  })
})

export const ContainmentPolicy = Schema.Struct({
  auto_containment_threshold: Threshold.annotations({
    description: "Pause the agent after this many consecutive boundary violations; null: never"
  })
}).annotations({ identifier: "ContainmentPolicy" })

export const AgentContainmentPolicy = Schema.Struct({
  agent_id: AgentId,
  auto_containment_threshold: Schema.NullOr(Schema.Int)
}).annotations({ identifier: "AgentContainmentPolicy" })

const AGENT = "/agents/:agent_id"
const ORG_AGENT = "/orgs/:org_id/agents/:agent_id"

export class ContainmentApi extends HttpApiGroup.make("containment")
  // An agent the caller may see (a personal agent's claimer is its Owner).
  .add(
    HttpApiEndpoint.post("agentPause", `${AGENT}/pause`)
      .setPath(AgentPath)
      .setPayload(ContainmentReason)
      .addSuccess(AgentContained)
  )
  .add(
    HttpApiEndpoint.post("agentResume", `${AGENT}/resume`)
      .setPath(AgentPath)
      .setPayload(ContainmentScopeBody)
      .addSuccess(AgentActive)
  )
  .add(
    HttpApiEndpoint.post("agentKill", `${AGENT}/kill`)
      .setPath(AgentPath)
      .setPayload(ContainmentReason)
      .addSuccess(AgentContained)
  )
  .add(
    HttpApiEndpoint.post("agentReactivate", `${AGENT}/reactivate`)
      .setPath(AgentPath)
      .setPayload(ContainmentScopeBody)
      .addSuccess(AgentActive)
  )
  .add(HttpApiEndpoint.get("agentContainment", `${AGENT}/containment`).setPath(AgentPath).addSuccess(AgentContainment))
  .add(
    HttpApiEndpoint.put("agentContainmentPolicy", `${AGENT}/containment-policy`)
      .setPath(AgentPath)
      .setPayload(ContainmentPolicy)
      .addSuccess(AgentContainmentPolicy)
  )
  // An organization's agent, for the organization's members.
  .add(
    HttpApiEndpoint.post("orgPause", `${ORG_AGENT}/pause`)
      .setPath(OrgAgentPath)
      .setPayload(ContainmentReason)
      .addSuccess(AgentContained)
  )
  .add(
    HttpApiEndpoint.post("orgResume", `${ORG_AGENT}/resume`)
      .setPath(OrgAgentPath)
      .setPayload(ContainmentScopeBody)
      .addSuccess(AgentActive)
  )
  .add(
    HttpApiEndpoint.post("orgKill", `${ORG_AGENT}/kill`)
      .setPath(OrgAgentPath)
      .setPayload(ContainmentReason)
      .addSuccess(AgentContained)
  )
  .add(
    HttpApiEndpoint.post("orgReactivate", `${ORG_AGENT}/reactivate`)
      .setPath(OrgAgentPath)
      .setPayload(ContainmentScopeBody)
      .addSuccess(AgentActive)
  )
  .add(
    HttpApiEndpoint.get("orgContainment", `${ORG_AGENT}/containment`).setPath(OrgAgentPath).addSuccess(AgentContainment)
  )
  .add(
    HttpApiEndpoint.put("orgContainmentPolicy", `${ORG_AGENT}/containment-policy`)
      .setPath(OrgAgentPath)
      .setPayload(ContainmentPolicy)
      .addSuccess(AgentContainmentPolicy)
  )
  .addError(BadRequest)
  .addError(Forbidden)
  .addError(NotFound)
  .addError(InternalError)
  // The Containment service's own error (services/Containment.ts), with its status.
  .addError(ContainmentRefused)
  .middleware(Authentication) {}
