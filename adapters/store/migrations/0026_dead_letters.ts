/**
 * Dead letters (issue 24, docs/api.md "Dead letters"): one row per gateway event the pipeline gave up
 * on, written by the workers' recorder (streams/DeadLetters.ts) with its `pipeline.dead_lettered`
 * event in one transaction. Never the payload: the subject, the agent it names, the reason, the
 * deliveries and the time.
 *
 * - `seq` orders the rows as recorded and is the pages' cursor (`before`), so a page costs the same
 *   however deep it is;
 * - `dead_letter_id` is unique: a notice recorded twice (a redelivery after a crash) is one row;
 * - `dead_letters_agent` serves an organization's page: for each of its agents, its newest rows.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

const ddl = `
create table dead_letters (
  seq bigint generated always as identity primary key,
  dead_letter_id text not null unique,
  subject text not null,
  agent_id text,
  reason text not null,
  deliveries integer not null,
  dead_lettered_at timestamptz not null,
  recorded_at timestamptz not null default now()
);
create index dead_letters_agent on dead_letters (agent_id, seq desc) where agent_id is not null;
`

export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(ddl).unprepared)
