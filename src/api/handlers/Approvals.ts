/**
 * Human approval's routes: thin, over services/Approvals.ts. Listing and reading need the Member
 * role in the approval's organization, deciding Owner or Admin (and a principal that may write).
 * An approval of an organization the caller is not in is 404, as an unknown one (orgRole's rule).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { actorOf, CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { Conflict, NotFound } from "../../../adapters/http/ApiErrors.js"
import type { ApprovalDecision } from "../../../core/schema/Approval.js"
import { type ApprovalNotPending, Approvals } from "../../../services/Approvals.js"
import { CandorApi } from "../Api.js"
import { requireOrgRole } from "./Access.js"

const notFound = (approvalId: string) => () => Effect.fail(new NotFound({ error: `approval ${approvalId} not found` }))

const notPending = (error: ApprovalNotPending) =>
  Effect.fail(
    new Conflict({
      error:
        error.status === "expired"
          ? `approval ${error.approval_id} has expired: the held call was denied`
          : `approval ${error.approval_id} is ${error.status}, not pending`
    })
  )

/** The approval, once the caller is found to hold `role` in its organization. */
const approvalFor = (approvalId: string, role: "member" | "admin", write: boolean) =>
  Effect.gen(function* () {
    const approval = yield* (yield* Approvals).get(approvalId)
    yield* requireOrgRole(approval.org_id, role, write).pipe(Effect.catchTag("NotFound", notFound(approvalId)))
    return approval
  })

const decide = (approvalId: string, decision: ApprovalDecision, reason: string | null | undefined) =>
  Effect.gen(function* () {
    yield* approvalFor(approvalId, "admin", true)
    const actor = actorOf(yield* CurrentPrincipal)
    return yield* (yield* Approvals).decide(approvalId, decision, actor, reason ?? null)
  }).pipe(
    Effect.catchTags({
      ApprovalNotFound: notFound(approvalId),
      ApprovalNotPending: notPending
    })
  )

export const ApprovalsLive = HttpApiBuilder.group(CandorApi, "approvals", (handlers) =>
  handlers
    .handle("listApprovals", ({ path, urlParams }) =>
      Effect.gen(function* () {
        yield* requireOrgRole(path.org_id, "member", false)
        const page = yield* (yield* Approvals).list(path.org_id, urlParams)
        return { ...page, limit: urlParams.limit, offset: urlParams.offset }
      })
    )
    .handle("getApproval", ({ path }) =>
      approvalFor(path.approval_id, "member", false).pipe(
        Effect.catchTag("ApprovalNotFound", notFound(path.approval_id))
      )
    )
    .handle("approveApproval", ({ path, payload }) => decide(path.approval_id, "approve", payload.reason))
    .handle("denyApproval", ({ path, payload }) => decide(path.approval_id, "deny", payload.reason))
)
