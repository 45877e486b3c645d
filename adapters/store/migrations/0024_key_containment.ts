/**
 * Containment with scope `key` (issue 24): a provider key (by its SHA-256, as `agent_claims.agent_hash`
 * holds it) paused or killed, which refuses every agent derived from it, `x-candor-agent` names not
 * seen yet included. One row per key ever contained; `containment` null once it is active again.
 * Written in the transaction of its containment log row and governance entry (streams/Containment.ts),
 * the row locked (`for update`) so two changes are ordered.
 *
 * `containment_log.scope` says which containment an action changed: the agent's own (`agent`, every
 * row before this migration) or its key's (`key`, logged on the agent the action was addressed through).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

const ddl = `
create table key_containment (
  key_hash text primary key,
  containment jsonb,
  updated_at timestamptz not null default now()
);
alter table containment_log add column scope text not null default 'agent';
create index agent_claims_key on agent_claims (agent_hash);
`

export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(ddl).unprepared)
