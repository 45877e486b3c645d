/**
 * The MCP gateway (issue 28, docs/mcp.md): an organization's registered MCP servers, and the agent
 * tokens agents present to reach them. A token is stored as its SHA-256 only (shown once, when
 * made); `org_id` is the agent's organization when the token was made: a token opens that
 * organization's servers and no other. The gateways learn both through the shared agent state
 * (adapters/bus/AgentState.ts, `KeySettings`), restored from here at start (streams/AgentStateRestore.ts).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

const ddl = `
create table mcp_servers (
  server_id text primary key,
  org_id text not null,
  name text not null check (char_length(name) between 1 and 200),
  url text not null check (char_length(url) between 1 and 2048),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index mcp_servers_org on mcp_servers (org_id, created_at);

create table mcp_tokens (
  token_id text primary key,
  agent_id text not null,
  org_id text not null,
  token_hash text not null unique,
  created_at timestamptz not null default now(),
  last_used_at timestamptz
);
create index mcp_tokens_agent on mcp_tokens (agent_id, created_at);
`

export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(ddl).unprepared)
