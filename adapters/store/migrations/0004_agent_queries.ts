/**
 * Indexes of the management API's agent-data reads (adapters/store/AgentQueries.ts), so the
 * re-verification batches and the integrity summary stay flat however long an agent's log:
 *
 * - `checkpoints_agent_non_clear`: the AIP re-verification batch, an agent's non-clear checkpoints
 *   newest first (a partial index: clear checkpoints, the vast majority, are not in it).
 * - `traces_agent_violating`: the AAP re-verification batch and the violation counts of the
 *   integrity summary, an agent's traces whose stored verification failed.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

const ddl = `
create index checkpoints_agent_non_clear on checkpoints (agent_id, occurred_at desc, position desc)
  where verdict <> 'clear';

create index traces_agent_violating on traces (agent_id, occurred_at desc, trace_id)
  where (body -> 'verification' ->> 'verified') = 'false';
`

export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(ddl).unprepared)
