/**
 * Witness cosignatures (docs/witnesses.md): the C2SP `tlog-cosignature` lines that configured
 * witnesses returned for the agents' signed tree heads, and where each witness stands with each log.
 *
 * - `witness_cosignatures`: one verified cosignature line per (log, tree size, witness key). The
 *   line is kept as the witness sent it (it is what the served notes carry); name, key hash and
 *   timestamp are copies of what it says, for listing. Lines are verified before they are written.
 * - `witness_logs`: per (witness key, log) the largest size the witness cosigned, and the last
 *   attempt with its error, if it failed (logs attempted longest ago are submitted first, so a log a
 *   witness keeps refusing does not hold the others back).
 *
 * A witness key is `<name>+<hex key hash>`, as a signature line names it.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

const ddl = `
create table witness_cosignatures (
  agent_id text not null,
  tree_size bigint not null,
  witness_key text not null,
  witness_name text not null,
  key_hash text not null,
  cosigned_at bigint not null,
  line text not null,
  created_at timestamptz not null default now(),
  primary key (agent_id, tree_size, witness_key)
);

create table witness_logs (
  witness_key text not null,
  agent_id text not null,
  cosigned_size bigint not null default 0,
  attempted_at timestamptz,
  error text,
  primary key (witness_key, agent_id)
);
create index witness_logs_attempted on witness_logs (witness_key, attempted_at);
`

export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(ddl).unprepared)
