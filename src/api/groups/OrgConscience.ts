/**
 * Organization conscience values (docs/api.md, "Organization conscience values"): the values, their
 * order, the layer's mode, the change log, and an agent's resolved (effective) values. Owner and
 * Admin write; every member reads; the log is for Owner and Admin.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { BadRequest, Conflict, Forbidden, InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import {
  ConscienceSeverity,
  ConscienceValueType,
  EffectiveConscience,
  ORG_CONSCIENCE_CONTENT_MAX,
  ORG_CONSCIENCE_NAME_MAX,
  OrgConscience,
  OrgConscienceLogEntry,
  OrgConscienceMode,
  OrgConscienceValue
} from "../../../core/schema/Conscience.js"
import { AgentId, Identifier } from "../../../core/schema/Ids.js"
import { IntParam } from "./Checkpoints.js"
import { ConscienceConflict, ConscienceInvalid, ConscienceNotFound } from "../../../services/OrgConscience.js"

const OrgPath = Schema.Struct({ org_id: Identifier })
const ValuePath = Schema.Struct({ org_id: Identifier, value_id: Identifier })
const AgentPath = Schema.Struct({ agent_id: AgentId })

/** Trimmed, then `min`..`max` characters: a name is matched exactly, so stray spaces would never match. */
const boundedText = (max: number) =>
  Schema.Trim.pipe(
    Schema.minLength(1, { message: () => `must be 1 to ${max} characters` }),
    Schema.maxLength(max, { message: () => `must be 1 to ${max} characters` })
  )

export const ConscienceName = boundedText(ORG_CONSCIENCE_NAME_MAX).annotations({
  description: `1 to ${ORG_CONSCIENCE_NAME_MAX} characters, unique within the organization (what a judge's concern names)`
})
export const ConscienceContent = boundedText(ORG_CONSCIENCE_CONTENT_MAX).annotations({
  description: `1 to ${ORG_CONSCIENCE_CONTENT_MAX} characters`
})

const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

/** `description` is accepted for `content` (Mnemom's name for it); `content` wins when both are sent. */
export const CreateOrgConscienceValue = Schema.Struct({
  type: ConscienceValueType,
  name: ConscienceName,
  content: optional(ConscienceContent),
  description: optional(ConscienceContent.annotations({ description: "Alias of content" })),
  severity: optional(ConscienceSeverity.annotations({ description: "Default advisory" })),
  is_active: optional(Schema.Boolean.annotations({ description: "Default true" }))
}).annotations({ identifier: "CreateOrgConscienceValue" })

export const UpdateOrgConscienceValue = Schema.Struct({
  type: optional(ConscienceValueType),
  name: optional(ConscienceName),
  content: optional(ConscienceContent),
  description: optional(ConscienceContent.annotations({ description: "Alias of content" })),
  severity: optional(ConscienceSeverity),
  is_active: optional(Schema.Boolean)
}).annotations({ identifier: "UpdateOrgConscienceValue" })

export const OrgConscienceValueDeleted = Schema.Struct({
  deleted: Schema.Boolean,
  value_id: Schema.String
}).annotations({ identifier: "OrgConscienceValueDeleted" })

export const OrgConscienceOrder = Schema.Struct({
  order: Schema.Array(Schema.String).annotations({
    description: "Every value id of the organization, each once, in the new order"
  })
}).annotations({ identifier: "OrgConscienceOrder" })

export const OrgConscienceOrdered = Schema.Struct({
  org_id: Schema.String,
  order: Schema.Array(Schema.String)
}).annotations({ identifier: "OrgConscienceOrdered" })

export const OrgConscienceModeUpdate = Schema.Struct({
  mode: optional(OrgConscienceMode),
  enabled: optional(
    Schema.Boolean.annotations({ description: "false: the organization layer does not apply (as if it had none)" })
  )
}).annotations({ identifier: "OrgConscienceModeUpdate", description: "At least one of mode and enabled" })

export const OrgConscienceModeState = Schema.Struct({
  org_id: Schema.String,
  mode: OrgConscienceMode,
  enabled: Schema.Boolean
}).annotations({ identifier: "OrgConscienceModeState" })

export const OrgConscienceLog = Schema.Struct({
  org_id: Schema.String,
  entries: Schema.Array(OrgConscienceLogEntry).annotations({ description: "Newest first" })
}).annotations({ identifier: "OrgConscienceLog" })

export const ORG_CONSCIENCE_LOG_LIMIT = { min: 1, max: 1000, default: 100 } as const

export const OrgConscienceLogParams = Schema.Struct({
  limit: Schema.optionalWith(IntParam(ORG_CONSCIENCE_LOG_LIMIT.min, ORG_CONSCIENCE_LOG_LIMIT.max), {
    default: () => ORG_CONSCIENCE_LOG_LIMIT.default,
    exact: true
  }),
  offset: Schema.optionalWith(IntParam(0, Number.MAX_SAFE_INTEGER), { default: () => 0, exact: true })
})

const ROOT = "/orgs/:org_id/conscience-values"

export class OrgConscienceApi extends HttpApiGroup.make("orgConscience")
  .add(HttpApiEndpoint.get("getOrgConscience", ROOT).setPath(OrgPath).addSuccess(OrgConscience))
  .add(
    HttpApiEndpoint.post("createOrgConscienceValue", ROOT)
      .setPath(OrgPath)
      .setPayload(CreateOrgConscienceValue)
      .addSuccess(OrgConscienceValue, { status: 201 })
  )
  .add(
    HttpApiEndpoint.put("orderOrgConscienceValues", `${ROOT}/order`)
      .setPath(OrgPath)
      .setPayload(OrgConscienceOrder)
      .addSuccess(OrgConscienceOrdered)
  )
  .add(
    HttpApiEndpoint.put("setOrgConscienceMode", `${ROOT}/mode`)
      .setPath(OrgPath)
      .setPayload(OrgConscienceModeUpdate)
      .addSuccess(OrgConscienceModeState)
  )
  .add(
    HttpApiEndpoint.get("orgConscienceLog", `${ROOT}/log`)
      .setPath(OrgPath)
      .setUrlParams(OrgConscienceLogParams)
      .addSuccess(OrgConscienceLog)
  )
  .add(
    HttpApiEndpoint.patch("updateOrgConscienceValue", `${ROOT}/:value_id`)
      .setPath(ValuePath)
      .setPayload(UpdateOrgConscienceValue)
      .addSuccess(OrgConscienceValue)
  )
  .add(
    HttpApiEndpoint.del("deleteOrgConscienceValue", `${ROOT}/:value_id`)
      .setPath(ValuePath)
      .addSuccess(OrgConscienceValueDeleted)
  )
  .add(
    HttpApiEndpoint.get("effectiveConscienceValues", "/agents/:agent_id/conscience-values/effective")
      .setPath(AgentPath)
      .addSuccess(EffectiveConscience)
  )
  .addError(BadRequest)
  .addError(Forbidden)
  .addError(NotFound)
  .addError(Conflict)
  .addError(InternalError)
  // The OrgConscience service's own errors (services/OrgConscience.ts), each with its status.
  .addError(ConscienceNotFound)
  .addError(ConscienceInvalid)
  .addError(ConscienceConflict)
  .middleware(Authentication) {}
