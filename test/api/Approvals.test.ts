/**
 * Human approval's routes (docs/api.md, "Approvals"): an organization's members list and read its
 * approvals, its Owners and Admins approve or deny a pending one once (409 after), with the approver
 * on the agent's governance log; the held call waiting on the service wakes on the API's decision;
 * another organization's approval is 404 to every route; an expired one is 409.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"
import * as ApprovalRepo from "../../adapters/store/ApprovalRepo.js"
import { GovernanceLog } from "../../adapters/store/GovernanceLog.js"
import { argumentsHash } from "../../core/Approval.js"
import { agentGovernanceLog } from "../../core/Governance.js"
import * as Approvals from "../../services/Approvals.js"
import { outboxEvents } from "../support/EventOutbox.js"
import { ApiHarness, freshOrganization, layer as harness } from "./Support.js"

const World = Approvals.layer.pipe(Layer.provide(ApprovalRepo.layer), Layer.provideMerge(harness()))

const hold = (orgId: string, agentId: string, timeout: Duration.DurationInput = "300 seconds") =>
  Effect.flatMap(Approvals.Approvals, (approvals) =>
    approvals.request({
      agent_id: agentId,
      org_id: orgId,
      server_id: "mcp-1",
      tool: "delete_repo",
      arguments_hash: argumentsHash({ repo: "candor" })!,
      reason: "deleting a repository needs a person",
      timeout
    })
  )

layer(World, { timeout: "60 seconds", excludeTestServices: true })("approval routes", (it) => {
  it.effect("members list and read; an Admin approves once, logged with the approver; the held call wakes", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { admin, member, owner } = api.fixtures
      const orgId = yield* freshOrganization("Approvals")
      const agentId = yield* api.claimAgent({ userId: owner.userId, orgId })
      const approval = yield* hold(orgId, agentId)
      const waiting = yield* Effect.fork((yield* Approvals.Approvals).awaitDecision(approval.approval_id))

      const events = yield* outboxEvents({ agentId, type: "approval.requested" })
      expect(events.map((e) => e.data)).toEqual([approval])

      const list = yield* api.call("GET", `/v1/orgs/${orgId}/approvals?status=pending`, { token: member.token })
      expect(list.status).toBe(200)
      expect(list.body).toEqual({ approvals: [approval], total: 1, limit: 50, offset: 0 })
      const one = yield* api.call("GET", `/v1/approvals/${approval.approval_id}`, { token: member.token })
      expect(one.body).toEqual(approval)

      const byMember = yield* api.call("POST", `/v1/approvals/${approval.approval_id}/approve`, {
        token: member.token,
        body: { reason: "fine" }
      })
      expect(byMember.status).toBe(403)

      const approved = yield* api.call("POST", `/v1/approvals/${approval.approval_id}/approve`, {
        token: admin.token,
        body: { reason: "checked with the team" }
      })
      expect(approved.status).toBe(200)
      expect(approved.body).toMatchObject({
        status: "approved",
        decided_by: admin.userId,
        decision_reason: "checked with the team"
      })
      expect(yield* Fiber.join(waiting)).toBe("approved")

      const twice = yield* api.call("POST", `/v1/approvals/${approval.approval_id}/deny`, {
        token: owner.token,
        body: {}
      })
      expect(twice.status).toBe(409)
      expect(twice.body.error).toContain("approved, not pending")

      const { entries } = yield* (yield* GovernanceLog).entries(agentGovernanceLog(agentId), 0, 100)
      const decisions = entries.filter((e) => e.record.action.startsWith("approval."))
      expect(decisions.map((e) => [e.record.action, e.record.actor])).toEqual([["approval.approve", admin.userId]])

      const decided = yield* api.call("GET", `/v1/orgs/${orgId}/approvals?status=approved`, { token: member.token })
      expect(decided.body.total).toBe(1)
      const none = yield* api.call("GET", `/v1/orgs/${orgId}/approvals?status=pending`, { token: member.token })
      expect(none.body).toMatchObject({ approvals: [], total: 0 })
    })
  )

  it.effect("another organization's approval is 404 to every route, and its list 404 too", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { userB, owner } = api.fixtures
      const orgId = yield* freshOrganization("Approvals")
      const agentId = yield* api.claimAgent({ userId: owner.userId, orgId })
      const approval = yield* hold(orgId, agentId)
      for (const [method, path] of [
        ["GET", `/v1/approvals/${approval.approval_id}`],
        ["POST", `/v1/approvals/${approval.approval_id}/approve`],
        ["POST", `/v1/approvals/${approval.approval_id}/deny`],
        ["GET", `/v1/orgs/${orgId}/approvals`]
      ] as const) {
        const res = yield* api.call(method, path, { token: userB.token, body: method === "POST" ? {} : undefined })
        expect([method, path, res.status]).toEqual([method, path, 404])
      }
      const unknown = yield* api.call("POST", `/v1/approvals/apr-${randomUUID()}/approve`, {
        token: owner.token,
        body: {}
      })
      expect(unknown.status).toBe(404)
      const malformed = yield* api.call("GET", `/v1/approvals/not-an-id`, { token: owner.token })
      expect(malformed.status).toBe(400)
      // Still pending: nobody outside decided it.
      expect((yield* (yield* Approvals.Approvals).get(approval.approval_id)).status).toBe("pending")
    })
  )

  it.effect("a denial is the Owner's too; an expired approval is 409; bad bodies and params are 400", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { owner } = api.fixtures
      const orgId = yield* freshOrganization("Approvals")
      const agentId = yield* api.claimAgent({ userId: owner.userId, orgId })
      const approval = yield* hold(orgId, agentId)
      const denied = yield* api.call("POST", `/v1/approvals/${approval.approval_id}/deny`, {
        token: owner.token,
        body: { reason: "no" }
      })
      expect(denied.body).toMatchObject({ status: "denied", decided_by: owner.userId })

      // Expired: its expires_at set in the past on the store (the service test covers the clock).
      const stale = yield* hold(orgId, agentId)
      const sql = yield* SqlClient.SqlClient
      yield* sql`update approvals set requested_at = now() - interval '2 hours', expires_at = now() - interval '1 hour'
        where approval_id = ${stale.approval_id}`
      const late = yield* api.call("POST", `/v1/approvals/${stale.approval_id}/approve`, {
        token: owner.token,
        body: {}
      })
      expect(late.status).toBe(409)
      expect(late.body.error).toContain("expired")

      const tooLong = yield* api.call("POST", `/v1/approvals/${approval.approval_id}/deny`, {
        token: owner.token,
        body: { reason: "x".repeat(1001) }
      })
      expect(tooLong.status).toBe(400)
      for (const query of ["status=maybe", "limit=0", "limit=101", "offset=-1", "offset=10001"]) {
        const res = yield* api.call("GET", `/v1/orgs/${orgId}/approvals?${query}`, { token: owner.token })
        expect([query, res.status]).toEqual([query, 400])
      }
    })
  )
})
