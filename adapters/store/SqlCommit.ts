/**
 * The write path of the store: a batch of attested checkpoints in one statement, all or nothing.
 *
 * The fence is the chain head. Heads of agents already seen are compared-and-set in one UPDATE …
 * FROM; heads of new agents are inserted with ON CONFLICT DO NOTHING. If a head did not match (a
 * second owner of the partition got there first) or a checkpoint id or chain position is already
 * taken (a redelivery), nothing of the batch is written and the caller gets `Conflict` naming the
 * agents to reload: a lost lease or a redelivered event can never fork a chain or duplicate a leaf.
 * One statement and one round trip per batch, whatever its size.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { SecretKey } from "../../core/SecretBox.js"
import { type CommitPlan, planCommit } from "./CommitPlan.js"
import { json, toCount } from "./Rows.js"
import { type CommitInput, type CommitResult, StoreError } from "./Store.js"

const COMMITTED: CommitResult = { _tag: "Committed" }
const conflict = (agentIds: Iterable<string>): CommitResult => ({ _tag: "Conflict", agentIds: [...new Set(agentIds)] })

/**
 * SQLSTATEs of a refused batch: the statement's own guard (division by zero: a head or checkpoint
 * did not go in), and "someone else wrote first": unique violation, serialization failure, deadlock
 * (two owners updating overlapping heads in different orders). The caller reloads and retries.
 */
const REFUSED = new Set(["22012", "23505", "40001", "40P01"])

const sqlState = (error: SqlError): string | undefined => {
  const cause = error.cause
  return typeof cause === "object" && cause !== null && "code" in cause && typeof cause.code === "string"
    ? cause.code
    : undefined
}

/**
 * One statement: every table's rows, each table in a data-modifying CTE, so the whole batch costs
 * one round trip, and a statement is atomic on its own (no BEGIN/COMMIT round trips either). The
 * final SELECT divides by zero when a head did not move as expected or a checkpoint was not
 * inserted (taken id or position): the error undoes every CTE, and `conflictsOf` finds out whose.
 */
const writePlan = (sql: SqlClient, plan: CommitPlan, now: string) =>
  sql`
    with new_heads as (
      select * from json_to_recordset(${json(plan.newHeads)}::json)
        as r(agent_id text, position bigint, hash text, frontier jsonb, default_name text)
    ), new_agents as (
      -- An agent named through the API or claimed before its first request already has a row: its
      -- default name is filled in then, once (only a new head carries one).
      insert into agents (agent_id, default_name) select agent_id, default_name from new_heads
      on conflict (agent_id) do update set default_name = excluded.default_name
      where agents.default_name is null and excluded.default_name is not null
    ), inserted_heads as (
      insert into chain_heads (agent_id, position, hash, frontier)
      select agent_id, position, decode(hash, 'hex'), frontier from new_heads
      on conflict do nothing
      returning 1
    ), moved_heads as (
      update chain_heads h
      set position = r.position, hash = decode(r.hash, 'hex'), frontier = r.frontier
      from json_to_recordset(${json(plan.movedHeads)}::json)
        as r(agent_id text, before_position bigint, before_hash text, position bigint, hash text, frontier jsonb)
      where h.agent_id = r.agent_id and h.position = r.before_position and h.hash = decode(r.before_hash, 'hex')
      returning 1
    ), inserted as (
      -- ON CONFLICT DO NOTHING without a target covers both the checkpoint id and (agent, position).
      insert into checkpoints (checkpoint_id, agent_id, session_id, verdict, occurred_at, position, body, sealed_by)
      select checkpoint_id, agent_id, session_id, verdict, occurred_at, position, body, sealed_by
      from json_to_recordset(${json(plan.checkpoints)}::json)
        as r(checkpoint_id text, agent_id text, session_id text, verdict text, occurred_at timestamptz, position bigint,
             body json, sealed_by text)
      on conflict do nothing
      returning agent_id, verdict
    ), counted as (
      insert into checkpoint_counts (agent_id, verdict, count)
      select agent_id, verdict, count(*) from inserted group by agent_id, verdict
      on conflict (agent_id, verdict) do update set count = checkpoint_counts.count + excluded.count
    ), certificates_ as (
      insert into certificates (checkpoint_id, key_id, body, sealed_by)
      select checkpoint_id, key_id, body, sealed_by
      from json_to_recordset(${json(plan.certificates)}::json)
        as r(checkpoint_id text, key_id text, body json, sealed_by text)
    ), traces_ as (
      insert into traces (trace_id, agent_id, occurred_at, body, sealed_by)
      select trace_id, agent_id, occurred_at, body, sealed_by
      from json_to_recordset(${json(plan.traces)}::json)
        as r(trace_id text, agent_id text, occurred_at timestamptz, body json, sealed_by text)
      on conflict do nothing
    ), nodes_ as (
      insert into merkle_nodes (agent_id, level, idx, hash)
      select agent_id, level, idx, decode(hash, 'hex')
      from json_to_recordset(${json(plan.nodes)}::json) as r(agent_id text, level smallint, idx bigint, hash text)
    ), tree_heads_ as (
      insert into tree_heads (agent_id, tree_size, root, note)
      select agent_id, tree_size, decode(root, 'hex'), note
      from json_to_recordset(${json(plan.treeHeads)}::json) as r(agent_id text, tree_size bigint, root text, note text)
    ), alerts_ as (
      insert into drift_alerts (alert_id, agent_id, session_id, detected_at, body)
      select alert_id, agent_id, session_id, detected_at, body
      from json_to_recordset(${json(plan.alerts)}::json)
        as r(alert_id text, agent_id text, session_id text, detected_at timestamptz, body json)
      on conflict do nothing
    ), outbox_ as (
      insert into outbox (kind, payload, due_at, created_at)
      select kind, coalesce(payload, 'null'::json), ${now}::timestamptz, ${now}::timestamptz
      from json_to_recordset(${json(plan.outbox)}::json) as r(kind text, payload json)
    )
    select 1 / (case
      when (select count(*) from inserted_heads) = ${plan.newHeads.length}
        and (select count(*) from moved_heads) = ${plan.movedHeads.length}
        and (select count(*) from inserted) = ${plan.checkpoints.length}
      then 1 else 0 end) as ok`

/**
 * After a refused batch: the agents whose stored head is not what the batch extended, or whose
 * checkpoint id is already stored. None found (a deadlock, say): every agent of the batch.
 */
const conflictsOf = (sql: SqlClient, plan: CommitPlan): Effect.Effect<CommitResult, SqlError> =>
  Effect.gen(function* () {
    const heads = [...plan.newHeads, ...plan.movedHeads]
    const stored = yield* sql<{ agent_id: string; position: unknown; hash: string }>`
      select agent_id, position, encode(hash, 'hex') as hash from chain_heads
      where agent_id in (select jsonb_array_elements_text(${json(heads.map((head) => head.agent_id))}::jsonb))`
    const byAgent = new Map(stored.map((row) => [row.agent_id, row]))
    const stale = heads.filter((head) => {
      const row = byAgent.get(head.agent_id)
      return head.before_position === 0
        ? row !== undefined
        : row === undefined || toCount(row.position) !== head.before_position || row.hash !== head.before_hash
    })
    const taken = yield* sql<{ agent_id: string }>`
      select agent_id from checkpoints
      where checkpoint_id in (select jsonb_array_elements_text(${json(plan.checkpoints.map((row) => row.checkpoint_id))}::jsonb))`
    const agentIds = [...stale.map((head) => head.agent_id), ...taken.map((row) => row.agent_id)]
    return conflict(agentIds.length > 0 ? agentIds : heads.map((head) => head.agent_id))
  })

export const makeCommitBatch =
  (sql: SqlClient, key: SecretKey) =>
  (inputs: ReadonlyArray<CommitInput>): Effect.Effect<CommitResult, StoreError> => {
    if (inputs.length === 0) return Effect.succeed(COMMITTED)
    const planned = planCommit(inputs, key)
    if (planned._tag === "Broken") return Effect.succeed(conflict(planned.agentIds))
    return Clock.currentTimeMillis.pipe(
      Effect.flatMap((now) => writePlan(sql, planned.plan, new Date(now).toISOString())),
      Effect.as(COMMITTED),
      Effect.catchTag("SqlError", (error) => {
        const state = sqlState(error)
        return state !== undefined && REFUSED.has(state) ? conflictsOf(sql, planned.plan) : Effect.fail(error)
      }),
      Effect.mapError((cause) => new StoreError({ operation: "commitBatch", cause }))
    )
  }
