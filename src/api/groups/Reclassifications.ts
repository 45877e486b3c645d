/**
 * Reclassification routes (docs/reclassification.md): reclassify a checkpoint's verdict, list the
 * reclassifications and card amendments, recompute a reputation on request, export the compliance record.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { BadRequest, Conflict, Forbidden, InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import { AgentId, DateTimeString } from "../../../core/schema/Ids.js"
import { literalUnion } from "../../../core/schema/Literals.js"
import {
  CardAmendmentList,
  ComplianceExport,
  ReclassificationList,
  ReclassifyRequest,
  ReclassifyResult,
  RecomputeRequest,
  RecomputeResult
} from "../../../core/schema/Reclassification.js"
import {
  ReclassificationConflict,
  ReclassificationInvalid,
  ReclassificationNotFound
} from "../../../services/Reclassifications.js"

const AgentPath = Schema.Struct({ agent_id: AgentId })

export const ComplianceExportParams = Schema.Struct({
  format: Schema.optionalWith(literalUnion(["json", "csv"]), { default: () => "json" as const, exact: true }),
  from: Schema.optionalWith(DateTimeString, { exact: true }),
  to: Schema.optionalWith(DateTimeString, { exact: true })
})

export class ReclassificationsApi extends HttpApiGroup.make("reclassifications")
  .add(
    HttpApiEndpoint.post("reclassify", "/agents/:agent_id/reclassify")
      .setPath(AgentPath)
      .setPayload(ReclassifyRequest)
      .addSuccess(ReclassifyResult, { status: 201 })
  )
  .add(
    HttpApiEndpoint.get("listReclassifications", "/agents/:agent_id/reclassifications")
      .setPath(AgentPath)
      .addSuccess(ReclassificationList)
  )
  .add(
    HttpApiEndpoint.get("listCardAmendments", "/agents/:agent_id/card-amendments")
      .setPath(AgentPath)
      .addSuccess(CardAmendmentList)
  )
  .add(
    HttpApiEndpoint.post("recomputeReputation", "/reputation/:agent_id/recompute")
      .setPath(AgentPath)
      .setPayload(RecomputeRequest)
      .addSuccess(RecomputeResult)
  )
  .add(
    HttpApiEndpoint.get("complianceExport", "/agents/:agent_id/compliance-export")
      .setPath(AgentPath)
      .setUrlParams(ComplianceExportParams)
      .addSuccess(ComplianceExport)
  )
  .addError(BadRequest)
  .addError(Forbidden)
  .addError(NotFound)
  .addError(Conflict)
  .addError(InternalError)
  // The Reclassifications service's own errors (services/Reclassifications.ts), each with its status.
  .addError(ReclassificationNotFound)
  .addError(ReclassificationInvalid)
  .addError(ReclassificationConflict)
  .middleware(Authentication) {}
