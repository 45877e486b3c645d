/**
 * Human approval (docs/approvals.md, docs/api.md "Approvals"; issue 28): the tool calls held for a
 * person's decision. An organization's members list and read them; its Owners and Admins approve
 * or deny a pending one. Another organization's approval is 404, as an unknown one.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { BadRequest, Conflict, Forbidden, InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import {
  Approval,
  ApprovalDecisionBody,
  ApprovalId,
  ApprovalPage,
  ApprovalStatus
} from "../../../core/schema/Approval.js"
import { Identifier } from "../../../core/schema/Ids.js"
import { IntParam } from "./Checkpoints.js"

export const APPROVAL_LIMIT = { min: 1, max: 100, default: 50 } as const
/** Offsets past this are refused: a queue is read from its newest end, and deep offsets cost a scan. */
export const APPROVAL_MAX_OFFSET = 10_000

export const ApprovalParams = Schema.Struct({
  status: Schema.optionalWith(ApprovalStatus, { exact: true }),
  limit: Schema.optionalWith(IntParam(APPROVAL_LIMIT.min, APPROVAL_LIMIT.max), {
    default: () => APPROVAL_LIMIT.default,
    exact: true
  }),
  offset: Schema.optionalWith(IntParam(0, APPROVAL_MAX_OFFSET), { default: () => 0, exact: true })
})

const ApprovalPath = Schema.Struct({ approval_id: ApprovalId })

export class ApprovalsApi extends HttpApiGroup.make("approvals")
  .add(
    HttpApiEndpoint.get("listApprovals", "/orgs/:org_id/approvals")
      .setPath(Schema.Struct({ org_id: Identifier }))
      .setUrlParams(ApprovalParams)
      .addSuccess(ApprovalPage)
  )
  .add(HttpApiEndpoint.get("getApproval", "/approvals/:approval_id").setPath(ApprovalPath).addSuccess(Approval))
  .add(
    HttpApiEndpoint.post("approveApproval", "/approvals/:approval_id/approve")
      .setPath(ApprovalPath)
      .setPayload(ApprovalDecisionBody)
      .addSuccess(Approval)
  )
  .add(
    HttpApiEndpoint.post("denyApproval", "/approvals/:approval_id/deny")
      .setPath(ApprovalPath)
      .setPayload(ApprovalDecisionBody)
      .addSuccess(Approval)
  )
  .addError(BadRequest)
  .addError(Forbidden)
  .addError(NotFound)
  .addError(Conflict)
  .addError(InternalError)
  .middleware(Authentication) {}
