/**
 * Scoped transactions (docs/transactions.md): a window of at most 24 hours in which an agent may use
 * only the tools it names. Each row is written (and closed) in the transaction of its
 * `transaction.open` (`transaction.close`) entry in the agent's governance log. `status` is not
 * stored: it is `completed` once `ended_at` is set, else `expired` once `expires_at` has passed.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

const ddl = `
create table scoped_transactions (
  transaction_id text primary key,
  agent_id text not null,
  action_type text not null,
  tools jsonb not null,
  policy jsonb,
  merged_policy jsonb not null,
  created_by text not null,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  ended_at timestamptz,
  ended_by text
);
create index scoped_transactions_agent on scoped_transactions (agent_id, created_at desc, transaction_id);
create index scoped_transactions_open on scoped_transactions (agent_id, expires_at) where ended_at is null;
`

export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(ddl).unprepared)
