/**
 * The write path of the store: a batch of attested checkpoints in one transaction.
 *
 * The fence is the chain head. Heads of agents already seen are compared-and-set in one UPDATE …
 * FROM; heads of new agents are inserted with ON CONFLICT DO NOTHING. If a head did not match (a
 * second owner of the partition got there first) or a checkpoint id or chain position is already
 * taken (a redelivery), the transaction is rolled back and the caller gets `Conflict`: a lost lease
 * or a redelivered event can never fork a chain or duplicate a leaf. About ten statements per batch,
 * whatever its size.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"; void Option; void SqlError
import { type CommitPlan, planCommit } from "./commitPlan.js"
import { json } from "./rows.js"
import { type CommitInput, type CommitResult, StoreError } from "./Store.js"

class BatchConflict extends Data.TaggedError("BatchConflict")<{ readonly agentIds: ReadonlyArray<string> }> {}

const COMMITTED: CommitResult = { _tag: "Committed" }
const conflict = (agentIds: Iterable<string>): CommitResult => ({ _tag: "Conflict", agentIds: [...new Set(agentIds)] })

/**
 * SQLSTATEs that mean "someone else wrote first": unique violation, serialization failure, deadlock
 * (two owners updating overlapping heads in different orders). The caller reloads and retries.
 */
const LOST_RACE = new Set(["23505", "40001", "40P01"])

const sqlState = (error: SqlError): string | undefined => {
  const cause = error.cause
  return typeof cause === "object" && cause !== null && "code" in cause && typeof cause.code === "string" ? cause.code : undefined
}

/** Fails with `BatchConflict` naming the expected ids that did not come back. */
const expectAll = (expected: ReadonlyArray<string>, returned: ReadonlyArray<{ readonly agent_id: string }>) => {
  const seen = new Set(returned.map((row) => row.agent_id))
  const missing = expected.filter((id) => !seen.has(id))
  return missing.length === 0 ? Effect.void : Effect.fail(new BatchConflict({ agentIds: missing }))
}

const writePlan = (sql: SqlClient, plan: CommitPlan, now: string) =>
  Effect.gen(function* () {
    if (plan.newHeads.length > 0) {
      const inserted = yield* sql<{ agent_id: string }>`
        with r as (
          select * from json_to_recordset(${json(plan.newHeads)}::json)
            as r(agent_id text, position bigint, hash text, frontier jsonb)
        ), new_agents as (
          insert into agents (agent_id) select agent_id from r on conflict do nothing
        )
        insert into chain_heads (agent_id, position, hash, frontier)
        select agent_id, position, decode(hash, 'hex'), frontier from r
        on conflict do nothing
        returning agent_id`
      yield* expectAll(plan.newHeads.map((head) => head.agent_id), inserted)
    }
    if (plan.movedHeads.length > 0) {
      const moved = yield* sql<{ agent_id: string }>`
        update chain_heads h
        set position = r.position, hash = decode(r.hash, 'hex'), frontier = r.frontier
        from json_to_recordset(${json(plan.movedHeads)}::json)
          as r(agent_id text, before_position bigint, before_hash text, position bigint, hash text, frontier jsonb)
        where h.agent_id = r.agent_id and h.position = r.before_position and h.hash = decode(r.before_hash, 'hex')
        returning h.agent_id`
      yield* expectAll(plan.movedHeads.map((head) => head.agent_id), moved)
    }

    // ON CONFLICT DO NOTHING without a target covers both the checkpoint id and (agent, position).
    const stored = yield* sql<{ checkpoint_id: string }>`
      with inserted as (
        insert into checkpoints (checkpoint_id, agent_id, session_id, verdict, occurred_at, position, body)
        select checkpoint_id, agent_id, session_id, verdict, occurred_at, position, body
        from json_to_recordset(${json(plan.checkpoints)}::json)
          as r(checkpoint_id text, agent_id text, session_id text, verdict text, occurred_at timestamptz, position bigint, body json)
        on conflict do nothing
        returning checkpoint_id, agent_id, verdict
      ), counted as (
        insert into checkpoint_counts (agent_id, verdict, count)
        select agent_id, verdict, count(*) from inserted group by agent_id, verdict
        on conflict (agent_id, verdict) do update set count = checkpoint_counts.count + excluded.count
      )
      select checkpoint_id from inserted`
    const remaining = new Set(stored.map((row) => row.checkpoint_id))
    const taken = plan.checkpoints.filter((row) => !remaining.delete(row.checkpoint_id))
    if (taken.length > 0) return yield* new BatchConflict({ agentIds: taken.map((row) => row.agent_id) })

    yield* sql`
      insert into certificates (checkpoint_id, key_id, body)
      select checkpoint_id, key_id, body
      from json_to_recordset(${json(plan.certificates)}::json) as r(checkpoint_id text, key_id text, body json)`
    yield* sql`
      insert into traces (trace_id, agent_id, occurred_at, body)
      select trace_id, agent_id, occurred_at, body
      from json_to_recordset(${json(plan.traces)}::json) as r(trace_id text, agent_id text, occurred_at timestamptz, body json)
      on conflict do nothing`
    yield* sql`
      insert into merkle_nodes (agent_id, level, idx, hash)
      select agent_id, level, idx, decode(hash, 'hex')
      from json_to_recordset(${json(plan.nodes)}::json) as r(agent_id text, level smallint, idx bigint, hash text)`
    yield* sql`
      insert into tree_heads (agent_id, tree_size, root, note)
      select agent_id, tree_size, decode(root, 'hex'), note
      from json_to_recordset(${json(plan.treeHeads)}::json) as r(agent_id text, tree_size bigint, root text, note text)`
    if (plan.alerts.length > 0) {
      yield* sql`
        insert into drift_alerts (alert_id, agent_id, session_id, detected_at, body)
        select alert_id, agent_id, session_id, detected_at, body
        from json_to_recordset(${json(plan.alerts)}::json)
          as r(alert_id text, agent_id text, session_id text, detected_at timestamptz, body json)
        on conflict do nothing`
    }
    if (plan.outbox.length > 0) {
      yield* sql`
        insert into outbox (kind, payload, due_at, created_at)
        select kind, coalesce(payload, 'null'::json), ${now}::timestamptz, ${now}::timestamptz
        from json_to_recordset(${json(plan.outbox)}::json) as r(kind text, payload json)`
    }
  })

export const makeCommitBatch =
  (sql: SqlClient) =>
  (inputs: ReadonlyArray<CommitInput>): Effect.Effect<CommitResult, StoreError> => {
    if (inputs.length === 0) return Effect.succeed(COMMITTED)
    const planned = planCommit(inputs)
    if (planned._tag === "Broken") return Effect.succeed(conflict(planned.agentIds))
    const agentIds = inputs.map((input) => input.attestation.link.entry.agent_id)
    return Clock.currentTimeMillis.pipe(
      Effect.flatMap((now) => sql.withTransaction(writePlan(sql, planned.plan, new Date(now).toISOString()))),
      // @effect/sql makes a failed COMMIT or ROLLBACK (a connection cut mid-transaction) a defect.
      // Here it is a failure like any other: the caller hands the batch back, and the redelivery
      // finds whatever did commit as duplicates.
      // Effect.catchSomeDefect((defect) => (defect instanceof SqlError ? Option.some(Effect.fail(defect)) : Option.none())),
      Effect.as(COMMITTED),
      Effect.catchTags({
        BatchConflict: (error) => Effect.succeed(conflict(error.agentIds)),
        SqlError: (error) => {
          const state = sqlState(error)
          return state !== undefined && LOST_RACE.has(state)
            ? Effect.succeed(conflict(agentIds))
            : Effect.fail(new StoreError({ operation: "commitBatch", cause: error }))
        }
      })
    )
  }
