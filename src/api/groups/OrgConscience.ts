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
  EffectiveConscience,
  OrgConscience,
  OrgConscienceValue,
  CreateOrgConscienceValue,
  UpdateOrgConscienceValue,
  OrgConscienceValueDeleted,
  OrgConscienceOrder,
  OrgConscienceOrdered,
  OrgConscienceModeUpdate,
  OrgConscienceModeState,
  OrgConscienceLog
} from "../../../core/schema/Conscience.js"
import { AgentId, Identifier } from "../../../core/schema/Ids.js"
import { IntParam } from "./Checkpoints.js"
import { ConscienceConflict, ConscienceInvalid, ConscienceNotFound } from "../../../services/OrgConscience.js"

const OrgPath = Schema.Struct({ org_id: Identifier })
const ValuePath = Schema.Struct({ org_id: Identifier, value_id: Identifier })
const AgentPath = Schema.Struct({ agent_id: AgentId })

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
