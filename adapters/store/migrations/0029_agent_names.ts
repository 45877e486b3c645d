/**
 * Agent names (docs/api.md, "PATCH /v1/agents/{agent_id}"): `display_name`, set by an Owner or Admin
 * (null: none), and `default_name`, the `x-candor-agent` label the gateway saw with the agent's first
 * checkpoint. The label is part of what the agent id is derived from (adapters/gateway/AgentIdentity.ts),
 * so every later request of the agent carries the same one: first seen is last seen, and the commit
 * path writes it only when it inserts the agent's chain head, never per checkpoint (a claim naming
 * the label writes it too). Existing agents keep null until named.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

const ddl = `
alter table agents add column display_name text check (char_length(display_name) between 1 and 100);
alter table agents add column default_name text check (char_length(default_name) between 1 and 128);
`

export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(ddl).unprepared)
