/**
 * Human approval (docs/approvals.md, issue 28 item 4): a tool call an `approve` escalation trigger
 * holds until a person decides. The MCP proxy, through its approval desk (adapters/bus/ApprovalDesk.ts;
 * services/ApprovalDeskLocal.ts in a process with the store), calls `request`, then `awaitDecision`,
 * and releases the one call bound to the arguments hash only on `approved`; `cancel` when its client
 * leaves first. The
 * API calls `decide`; the held side learns of it through `ApprovalSignal` (a NATS KV key per
 * approval on a split deployment), never by polling the database in a tight loop.
 *
 * The wait is bounded: `awaitDecision` ends at the approval's `expires_at` at the latest (at most
 * an hour, `APPROVAL_TIMEOUT_BOUNDS`), expiring it then; it reads the store again every
 * `RECHECK_INTERVAL` in case a signal was lost (a restart, a watch gap), so a lost signal costs at
 * most that long.
 */
import { eventDraft } from "../adapters/store/EventOutbox.js"
import { randomUUID } from "node:crypto"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { ApprovalSignal, type FinalStatus } from "../adapters/bus/ApprovalSignal.js"
import { type ApprovalQuery, ApprovalRepo } from "../adapters/store/ApprovalRepo.js"
import { GovernanceLog } from "../adapters/store/GovernanceLog.js"
import { Store, StoreError } from "../adapters/store/Store.js"
import { transaction } from "../adapters/store/Transaction.js"
import { approvalRequestedEvent } from "../core/EventData.js"
import { newEnvelope } from "../core/Events.js"
import { agentGovernanceLog } from "../core/Governance.js"
import type { Approval, ApprovalDecision } from "../core/schema/Approval.js"
import { APPROVAL_TIMEOUT_BOUNDS } from "../core/schema/Policy.js"

/** How often a waiter reads the store again, in case its signal was lost. */
export const RECHECK_INTERVAL = Duration.seconds(10)
/** Expired approvals settled per sweep (the rest on the next one). */
export const SWEEP_BATCH = 100

export class ApprovalNotFound extends Data.TaggedError("ApprovalNotFound")<{ readonly approval_id: string }> {}

/** The approval is no longer pending (decided, cancelled) or has expired. */
export class ApprovalNotPending extends Data.TaggedError("ApprovalNotPending")<{
  readonly approval_id: string
  readonly status: Approval["status"]
}> {}

export interface ApprovalRequest {
  readonly agent_id: string
  readonly org_id: string
  readonly server_id?: string | null | undefined
  readonly tool: string
  /** core/Approval.ts `argumentsHash` of the held call's arguments. */
  readonly arguments_hash: string
  /** The approve trigger's reason. */
  readonly reason: string
  /** How long the call may wait: core/Approval.ts `approvalTimeoutSeconds(policy)`, clamped to the bounds. */
  readonly timeout: Duration.DurationInput
}

export class Approvals extends Context.Tag("candor/services/Approvals")<
  Approvals,
  {
    /** A pending approval, stored with its `approval.requested` event in one transaction. */
    readonly request: (input: ApprovalRequest) => Effect.Effect<Approval, StoreError>
    /** One approval (expired first when it is pending past `expires_at`). */
    readonly get: (approvalId: string) => Effect.Effect<Approval, ApprovalNotFound | StoreError>
    /** The organization's approvals (expired ones settled first). */
    readonly list: (
      orgId: string,
      query: ApprovalQuery
    ) => Effect.Effect<{ readonly approvals: ReadonlyArray<Approval>; readonly total: number }, StoreError>
    /**
     * A person's decision on a pending, unexpired approval, with an `approval.approve` or
     * `approval.deny` entry on the agent's governance log (the approver as actor) in the same
     * transaction; then the held call is told.
     */
    readonly decide: (
      approvalId: string,
      decision: ApprovalDecision,
      actor: string,
      reason: string | null
    ) => Effect.Effect<Approval, ApprovalNotFound | ApprovalNotPending | StoreError>
    /** The client left before a decision: pending → cancelled (the call is never sent). */
    readonly cancel: (approvalId: string) => Effect.Effect<Approval, ApprovalNotFound | ApprovalNotPending | StoreError>
    /** Settles every pending approval past `expires_at` as `expired`, telling their waiters; how many. */
    readonly sweep: Effect.Effect<number, StoreError>
    /**
     * The approval's final status: at once when it has one, else when it is decided, cancelled or
     * expires (at `expires_at`, when it is expired here). Only `approved` releases the call.
     */
    readonly awaitDecision: (approvalId: string) => Effect.Effect<FinalStatus, ApprovalNotFound | StoreError>
  }
>() {}

const sqlFailure = (operation: string) => (cause: unknown) => new StoreError({ operation, cause })

const clampTimeoutMs = (timeout: Duration.DurationInput): number =>
  Math.min(
    Math.max(Duration.toMillis(Duration.decode(timeout)), APPROVAL_TIMEOUT_BOUNDS.min * 1000),
    APPROVAL_TIMEOUT_BOUNDS.max * 1000
  )

export const make = Effect.gen(function* () {
  const repo = yield* ApprovalRepo
  const store = yield* Store
  const governance = yield* GovernanceLog
  const signal = yield* ApprovalSignal
  const sql = yield* SqlClient.SqlClient
  const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

  const found = (approvalId: string) =>
    Effect.flatMap(repo.get(approvalId), (approval) =>
      approval === undefined ? Effect.fail(new ApprovalNotFound({ approval_id: approvalId })) : Effect.succeed(approval)
    )

  /** Expires it when it is pending past `expires_at` at `at`; the approval as it now stands. */
  const expireIfDue = (approval: Approval, at: Date) =>
    approval.status !== "pending" || at.getTime() < Date.parse(approval.expires_at)
      ? Effect.succeed(approval)
      : Effect.gen(function* () {
          const expired = yield* repo.settle(
            approval.approval_id,
            { status: "expired", at: new Date(approval.expires_at), by: null, reason: null },
            false
          )
          if (expired === undefined) return yield* found(approval.approval_id) // settled meanwhile
          yield* signal.publish(expired.approval_id, "expired")
          return expired
        })

  const current = (approvalId: string) =>
    Effect.gen(function* () {
      const approval = yield* found(approvalId)
      return yield* expireIfDue(approval, yield* now)
    })

  const sweep = Effect.gen(function* () {
    const expired = yield* repo.expireDue(yield* now, SWEEP_BATCH)
    yield* Effect.forEach(expired, (a) => signal.publish(a.approval_id, "expired"), { discard: true })
    return expired.length
  })

  const settleBy = (
    approvalId: string,
    status: "approved" | "denied" | "cancelled",
    actor: string | null,
    reason: string | null
  ) =>
    Effect.gen(function* () {
      const at = yield* now
      const settled = yield* transaction(
        sql,
        Effect.gen(function* () {
          const done = yield* repo.settle(approvalId, { status, at, by: actor, reason }, status !== "cancelled")
          if (done !== undefined && actor !== null && status !== "cancelled") {
            yield* governance.append(agentGovernanceLog(done.agent_id), {
              action: status === "approved" ? "approval.approve" : "approval.deny",
              actor,
              reason,
              previous_state: { approval_id: done.approval_id, status: "pending" },
              new_state: {
                approval_id: done.approval_id,
                status: done.status,
                tool: done.tool,
                server_id: done.server_id,
                arguments_hash: done.arguments_hash
              }
            })
          }
          return done
        })
      ).pipe(Effect.catchTag("SqlError", (cause) => Effect.fail(sqlFailure("settleApproval")(cause))))
      if (settled === undefined) {
        const standing = yield* current(approvalId)
        // Pending here means it had expired at `at` but not at this read: a clock step; still refused.
        return yield* Effect.fail(new ApprovalNotPending({ approval_id: approvalId, status: standing.status }))
      }
      yield* signal.publish(approvalId, status)
      return settled
    })

  return Approvals.of({
    request: (input) =>
      Effect.gen(function* () {
        const at = yield* now
        const approval: Approval = {
          approval_id: `apr-${randomUUID()}`,
          org_id: input.org_id,
          agent_id: input.agent_id,
          server_id: input.server_id ?? null,
          tool: input.tool,
          arguments_hash: input.arguments_hash,
          reason: input.reason,
          requested_at: at.toISOString(),
          expires_at: new Date(at.getTime() + clampTimeoutMs(input.timeout)).toISOString(),
          status: "pending",
          decided_at: null,
          decided_by: null,
          decision_reason: null
        }
        yield* transaction(
          sql,
          Effect.gen(function* () {
            yield* repo.insert(approval)
            yield* store.enqueueOutbox([eventDraft(newEnvelope(approvalRequestedEvent(approval)))])
          })
        ).pipe(Effect.catchTag("SqlError", (cause) => Effect.fail(sqlFailure("requestApproval")(cause))))
        return approval
      }),
    get: current,
    list: (orgId, query) => Effect.zipRight(sweep, repo.page(orgId, query)),
    decide: (approvalId, decision, actor, reason) =>
      settleBy(approvalId, decision === "approve" ? "approved" : "denied", actor, reason),
    cancel: (approvalId) => settleBy(approvalId, "cancelled", null, null),
    sweep,
    awaitDecision: (approvalId) =>
      Effect.gen(function* () {
        const approval = yield* current(approvalId)
        if (approval.status !== "pending") return approval.status
        const untilExpiry = Math.max(0, Date.parse(approval.expires_at) - (yield* now).getTime())
        // The store again, every RECHECK_INTERVAL: a signal lost costs at most that long.
        const recheck = Effect.gen(function* () {
          for (;;) {
            yield* Effect.sleep(RECHECK_INTERVAL)
            const standing = yield* current(approvalId)
            if (standing.status !== "pending") return standing.status
          }
        })
        const expiry = Effect.sleep(Duration.millis(untilExpiry)).pipe(
          Effect.zipRight(current(approvalId)),
          // At expires_at `current` has settled it (expired, or whatever won the race).
          Effect.map((a) => (a.status === "pending" ? ("expired" as const) : a.status))
        )
        return yield* Effect.raceAll([signal.wait(approvalId), recheck, expiry])
      })
  })
})

export const layer: Layer.Layer<
  Approvals,
  never,
  ApprovalRepo | Store | GovernanceLog | ApprovalSignal | SqlClient.SqlClient
> = Layer.effect(Approvals, make)
