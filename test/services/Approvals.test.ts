/**
 * Human approval's service (services/Approvals.ts) on PGlite, with the Effect TestClock for expiry:
 * a request is stored pending with its `approval.requested` event; a decision is taken once, with
 * its approver on the agent's governance log, and wakes the held side; an approval expires at
 * `expires_at` (lazily on read, by the sweep, and at the end of a wait) and is then refused; a
 * cancelled one cannot be approved.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { randomUUID } from "node:crypto"
import { ApprovalSignal } from "../../adapters/bus/ApprovalSignal.js"
import { SigningKeys } from "../../adapters/keys/SigningKeys.js"
import * as SecretKeys from "../../adapters/keys/SecretKeys.js"
import * as ApprovalRepo from "../../adapters/store/ApprovalRepo.js"
import * as GovernanceLog from "../../adapters/store/GovernanceLog.js"
import * as SqlStore from "../../adapters/store/SqlStore.js"
import { argumentsHash } from "../../core/Approval.js"
import { agentGovernanceLog } from "../../core/Governance.js"
import { generateSigningKey } from "../../core/Signing.js"
import * as Approvals from "../../services/Approvals.js"
import { outboxEvents } from "../support/EventOutbox.js"
import { migratedPglite } from "../support/PgliteTemplate.js"

const World = Approvals.layer.pipe(
  Layer.provideMerge(
    Layer.mergeAll(GovernanceLog.layer({ logOrigin: "candor.test" }), ApprovalRepo.layer, ApprovalSignal.layerMemory)
  ),
  Layer.provideMerge(
    Layer.mergeAll(
      SqlStore.layer.pipe(Layer.provide(SecretKeys.layerEphemeral), Layer.provideMerge(migratedPglite)),
      SigningKeys.fromKey(generateSigningKey())
    )
  )
)

const hash = argumentsHash({ path: "/etc/passwd", mode: "r" })!

const request = (overrides: Partial<Approvals.ApprovalRequest> = {}) =>
  Effect.flatMap(Approvals.Approvals, (approvals) =>
    approvals.request({
      agent_id: `agt-${randomUUID().slice(0, 8)}`,
      org_id: "org-a",
      server_id: "mcp-files",
      tool: "read_file",
      arguments_hash: hash,
      reason: "reading files needs a person",
      timeout: "300 seconds",
      ...overrides
    })
  )

layer(World, { timeout: "60 seconds" })("human approval", (it) => {
  it.effect("a request is pending for the policy's timeout, with its approval.requested event", () =>
    Effect.gen(function* () {
      const approval = yield* request()
      expect(approval).toMatchObject({ status: "pending", decided_at: null, decided_by: null, org_id: "org-a" })
      expect(Date.parse(approval.expires_at) - Date.parse(approval.requested_at)).toBe(300_000)
      expect(approval.approval_id).toMatch(/^apr-/)
      const events = yield* outboxEvents({ agentId: approval.agent_id, type: "approval.requested" })
      expect(events).toHaveLength(1)
      expect(events[0]).toMatchObject({
        org_id: "org-a",
        data: { approval_id: approval.approval_id, tool: "read_file" }
      })
      const stored = yield* (yield* Approvals.Approvals).get(approval.approval_id)
      expect(stored).toEqual(approval)
    })
  )

  it.effect("a timeout outside 10 s to 1 h is clamped", () =>
    Effect.gen(function* () {
      const long = yield* request({ timeout: "3 days" })
      expect(Date.parse(long.expires_at) - Date.parse(long.requested_at)).toBe(3_600_000)
      const short = yield* request({ timeout: "1 millis" })
      expect(Date.parse(short.expires_at) - Date.parse(short.requested_at)).toBe(10_000)
    })
  )

  it.effect("an approval is decided once, with its approver on the agent's log, and wakes the held call", () =>
    Effect.gen(function* () {
      const approvals = yield* Approvals.Approvals
      const approval = yield* request()
      const waiting = yield* Effect.fork(approvals.awaitDecision(approval.approval_id))
      const decided = yield* approvals.decide(approval.approval_id, "approve", "user-admin", "looks fine")
      expect(decided).toMatchObject({ status: "approved", decided_by: "user-admin", decision_reason: "looks fine" })
      expect(yield* Fiber.join(waiting)).toBe("approved")
      // Twice: refused, and nothing changes.
      const again = yield* Effect.either(approvals.decide(approval.approval_id, "deny", "user-other", null))
      expect(Either.isLeft(again) && again.left._tag).toBe("ApprovalNotPending")
      expect((yield* approvals.get(approval.approval_id)).status).toBe("approved")

      const { entries } = yield* (yield* GovernanceLog.GovernanceLog).entries(
        agentGovernanceLog(approval.agent_id),
        0,
        10
      )
      expect(entries).toHaveLength(1)
      expect(entries[0]?.record).toMatchObject({
        action: "approval.approve",
        actor: "user-admin",
        reason: "looks fine",
        new_state: { approval_id: approval.approval_id, status: "approved", arguments_hash: hash }
      })
    })
  )

  it.effect("a denial ends the wait with denied and is logged as approval.deny", () =>
    Effect.gen(function* () {
      const approvals = yield* Approvals.Approvals
      const approval = yield* request()
      yield* approvals.decide(approval.approval_id, "deny", "user-owner", null)
      // A wait that begins after the decision answers at once.
      expect(yield* approvals.awaitDecision(approval.approval_id)).toBe("denied")
      const { entries } = yield* (yield* GovernanceLog.GovernanceLog).entries(
        agentGovernanceLog(approval.agent_id),
        0,
        10
      )
      expect(entries.map((e) => [e.record.action, e.record.actor])).toEqual([["approval.deny", "user-owner"]])
    })
  )

  it.effect("undecided by expires_at: expired, and a decision after it is refused", () =>
    Effect.gen(function* () {
      const approvals = yield* Approvals.Approvals
      const approval = yield* request({ timeout: "60 seconds" })
      yield* TestClock.adjust("59 seconds")
      expect((yield* approvals.get(approval.approval_id)).status).toBe("pending")
      yield* TestClock.adjust("1 second")
      const late = yield* Effect.either(approvals.decide(approval.approval_id, "approve", "user-admin", null))
      expect(Either.isLeft(late) && late.left).toMatchObject({ _tag: "ApprovalNotPending", status: "expired" })
      expect(yield* approvals.get(approval.approval_id)).toMatchObject({
        status: "expired",
        decided_by: null,
        decided_at: approval.expires_at
      })
      expect(yield* approvals.awaitDecision(approval.approval_id)).toBe("expired")
      // Nobody decided: no governance entry.
      const { size } = yield* (yield* GovernanceLog.GovernanceLog).entries(agentGovernanceLog(approval.agent_id), 0, 1)
      expect(size).toBe(0)
    })
  )

  it.effect("a held call waiting past expires_at gets expired", () =>
    Effect.gen(function* () {
      const approvals = yield* Approvals.Approvals
      const approval = yield* request({ timeout: "30 seconds" })
      const waiting = yield* Effect.fork(approvals.awaitDecision(approval.approval_id))
      yield* TestClock.adjust("31 seconds")
      expect(yield* Fiber.join(waiting)).toBe("expired")
      expect((yield* approvals.get(approval.approval_id)).status).toBe("expired")
    })
  )

  it.effect("the sweep expires what is due, and the list filters by status", () =>
    Effect.gen(function* () {
      const approvals = yield* Approvals.Approvals
      const org = `org-${randomUUID().slice(0, 8)}`
      const due = yield* request({ org_id: org, timeout: "10 seconds" })
      const kept = yield* request({ org_id: org, timeout: "600 seconds" })
      yield* request({ org_id: "org-other" })
      yield* TestClock.adjust("11 seconds")
      expect(yield* approvals.sweep).toBeGreaterThanOrEqual(1)
      expect((yield* approvals.get(due.approval_id)).status).toBe("expired")
      const pending = yield* approvals.list(org, { status: "pending", limit: 50, offset: 0 })
      expect(pending.total).toBe(1)
      expect(pending.approvals.map((a) => a.approval_id)).toEqual([kept.approval_id])
      const all = yield* approvals.list(org, { limit: 1, offset: 0 })
      expect(all.total).toBe(2)
      expect(all.approvals).toHaveLength(1)
    })
  )

  it.effect("a cancelled approval (the client left) cannot be approved", () =>
    Effect.gen(function* () {
      const approvals = yield* Approvals.Approvals
      const approval = yield* request()
      const waiting = yield* Effect.fork(approvals.awaitDecision(approval.approval_id))
      expect((yield* approvals.cancel(approval.approval_id)).status).toBe("cancelled")
      expect(yield* Fiber.join(waiting)).toBe("cancelled")
      const late = yield* Effect.either(approvals.decide(approval.approval_id, "approve", "user-admin", null))
      expect(Either.isLeft(late) && late.left).toMatchObject({ _tag: "ApprovalNotPending", status: "cancelled" })
    })
  )

  it.effect("an unknown approval is not found", () =>
    Effect.gen(function* () {
      const approvals = yield* Approvals.Approvals
      const missing = yield* Effect.either(approvals.get(`apr-${randomUUID()}`))
      expect(Either.isLeft(missing) && missing.left._tag).toBe("ApprovalNotFound")
    })
  )
})
