/**
 * Risk assessments (docs/risk.md): every signed record the risk routes issued, individual (`ra-…`,
 * with its agent) and team (`rta-…`, over any 2 to 50 agents, not a stored team, hence not a row of
 * `team_assessments`). `record` is the signed JSON text as issued: a `json` column keeps its
 * numbers' digits exactly as they were signed. Records are never updated; a reader's access is
 * checked against the agents the record names.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

const ddl = `
create table risk_assessments (
  assessment_id text primary key,
  kind text not null check (kind in ('individual', 'team')),
  agent_id text,
  record json not null,
  assessed_at timestamptz not null,
  check ((kind = 'individual') = (agent_id is not null))
);
create index risk_assessments_agent_time on risk_assessments (agent_id, assessed_at desc, assessment_id desc)
  where kind = 'individual';
`

export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(ddl).unprepared)
