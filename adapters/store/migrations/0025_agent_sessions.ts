/**
 * Sessions belong to agents (issue 24): an AIP drift window is the checkpoints of one agent in one
 * session, never of every agent that named the same `x-candor-session`. The actors rebuild a window
 * with `agent_id = ? and session_id = ?` newest first (`Store.sessionCheckpoints`), as the checkpoint
 * list filtered by session does; this index serves both. The index on the session alone is dropped:
 * nothing reads a session across agents any more, and keeping it would only cost every commit.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

const ddl = `
create index checkpoints_agent_session_time on checkpoints (agent_id, session_id, occurred_at desc, position desc);
drop index checkpoints_session_time;
`

export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(ddl).unprepared)
