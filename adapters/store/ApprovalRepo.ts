/**
 * Approvals on the store (migrations/0033_approvals.ts): tool calls held for a person's decision.
 * Every row is decoded by the published `Approval` schema (core/schema/Approval.ts), never cast.
 * A status leaves `pending` only through `settle`, a conditional update: of two deciders (or a
 * decision and the expiry sweep) exactly one changes the row, the other gets undefined.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { Approval, type ApprovalStatus } from "../../core/schema/Approval.js"
import { type StoreError, storeError } from "./Store.js"

/** `pg` answers int8 as a string, PGlite a number; timestamptz as a Date (both) or a string. */
const Time = Schema.Union(Schema.DateFromSelf, Schema.Date)
const NullableTime = Schema.NullOr(Time)

const ApprovalRow = Schema.Struct({
  ...Approval.fields,
  requested_at: Time,
  expires_at: Time,
  decided_at: NullableTime
})
const decodeRows = Schema.decodeUnknown(Schema.Array(ApprovalRow))
const decodeApproval = Schema.decodeUnknown(Approval)
const decodeCount = Schema.decodeUnknown(
  Schema.Array(Schema.Struct({ total: Schema.Union(Schema.Number, Schema.NumberFromString) }))
)

const approvalsOf = (rows: unknown) =>
  Effect.flatMap(decodeRows(rows), (decoded) =>
    Effect.forEach(decoded, (row) =>
      decodeApproval({
        ...row,
        requested_at: row.requested_at.toISOString(),
        expires_at: row.expires_at.toISOString(),
        decided_at: row.decided_at === null ? null : row.decided_at.toISOString()
      })
    )
  )

const COLUMNS =
  "approval_id, org_id, agent_id, server_id, tool, arguments_hash, reason, requested_at, expires_at, status, decided_at, decided_by, decision_reason"

export interface ApprovalQuery {
  readonly status?: ApprovalStatus | undefined
  readonly limit: number
  readonly offset: number
}

/** How a pending approval is settled. */
export interface Settlement {
  readonly status: Exclude<ApprovalStatus, "pending">
  readonly at: Date
  readonly by: string | null
  readonly reason: string | null
}

export class ApprovalRepo extends Context.Tag("candor/adapters/store/ApprovalRepo")<
  ApprovalRepo,
  {
    readonly insert: (approval: Approval) => Effect.Effect<void, StoreError>
    readonly get: (approvalId: string) => Effect.Effect<Approval | undefined, StoreError>
    /** The organization's approvals, newest request first, and how many match. */
    readonly page: (
      orgId: string,
      query: ApprovalQuery
    ) => Effect.Effect<{ readonly approvals: ReadonlyArray<Approval>; readonly total: number }, StoreError>
    /**
     * Settles a pending approval (`onlyUnexpired`: one not past `expires_at` at `settlement.at`);
     * the row as settled, or undefined when it was not pending (or had expired).
     */
    readonly settle: (
      approvalId: string,
      settlement: Settlement,
      onlyUnexpired: boolean
    ) => Effect.Effect<Approval | undefined, StoreError>
    /** Every pending approval past `expires_at` at `now` becomes `expired` (at most `limit`); those. */
    readonly expireDue: (now: Date, limit: number) => Effect.Effect<ReadonlyArray<Approval>, StoreError>
  }
>() {}

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const columns = sql.literal(COLUMNS)
  return ApprovalRepo.of({
    insert: (a) =>
      sql`
        insert into approvals (approval_id, org_id, agent_id, server_id, tool, arguments_hash, reason,
          requested_at, expires_at, status)
        values (${a.approval_id}, ${a.org_id}, ${a.agent_id}, ${a.server_id}, ${a.tool}, ${a.arguments_hash},
          ${a.reason}, ${a.requested_at}::timestamptz, ${a.expires_at}::timestamptz, ${a.status})`.pipe(
        Effect.asVoid,
        storeError("insertApproval")
      ),
    get: (approvalId) =>
      sql`select ${columns} from approvals where approval_id = ${approvalId}`.pipe(
        Effect.flatMap(approvalsOf),
        Effect.map((rows) => rows[0]),
        storeError("approval")
      ),
    page: (orgId, query) => {
      const status = query.status === undefined ? sql`` : sql`and status = ${query.status}`
      // One statement, so the page and its total come from one snapshot: read apart, an approval
      // requested between the two was counted in a total whose page did not hold it. A page past the
      // end is one row of nulls beside the total.
      return sql<{ readonly approval_id: string | null }>`
        with matching as (select ${columns} from approvals where org_id = ${orgId} ${status})
        select page.*, counted.total from (select count(*) as total from matching) counted
        left join lateral (
          select * from matching
          order by requested_at desc, approval_id desc limit ${query.limit} offset ${query.offset}
        ) page on true
        order by page.requested_at desc, page.approval_id desc`.pipe(
        Effect.flatMap((rows) =>
          Effect.all({
            approvals: approvalsOf(rows.filter((row) => row.approval_id !== null)),
            total: Effect.map(decodeCount(rows.slice(0, 1)), (counted) => Number(counted[0]?.total ?? 0))
          })
        ),
        storeError("approvals")
      )
    },
    settle: (approvalId, s, onlyUnexpired) =>
      sql`
        update approvals set status = ${s.status}, decided_at = ${s.at.toISOString()}::timestamptz,
          decided_by = ${s.by}, decision_reason = ${s.reason}
        where approval_id = ${approvalId} and status = 'pending'
          ${onlyUnexpired ? sql`and expires_at > ${s.at.toISOString()}::timestamptz` : sql``}
        returning ${columns}`.pipe(
        Effect.flatMap(approvalsOf),
        Effect.map((rows) => rows[0]),
        storeError("settleApproval")
      ),
    expireDue: (now, limit) =>
      sql`
        update approvals set status = 'expired', decided_at = expires_at
        where approval_id in (
          select approval_id from approvals
          where status = 'pending' and expires_at <= ${now.toISOString()}::timestamptz
          order by expires_at limit ${limit} for update skip locked)
          and status = 'pending'
        returning ${columns}`.pipe(Effect.flatMap(approvalsOf), storeError("expireApprovals"))
  })
})

export const layer: Layer.Layer<ApprovalRepo, never, SqlClient.SqlClient> = Layer.effect(ApprovalRepo, make)
