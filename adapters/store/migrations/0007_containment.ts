/**
 * The containment log: every pause, resume, kill, reactivation and automatic pause of an agent, with
 * who did it, why, and the status before and after, written in the transaction that changes the
 * agent's settings (streams/Containment.ts). `GET …/containment` lists it newest first; `seq` orders
 * actions committed within the same microsecond. `metadata` holds what triggered an automatic pause
 * (the checkpoint, the violations counted).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

const ddl = `
create table containment_log (
  id text primary key,
  seq bigint generated always as identity,
  agent_id text not null,
  action text not null,
  actor text not null,
  reason text,
  previous_status text not null,
  new_status text not null,
  metadata jsonb not null default '{}',
  created_at timestamptz not null default now()
);
create index containment_log_agent on containment_log (agent_id, seq desc);
`

export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(ddl).unprepared)
