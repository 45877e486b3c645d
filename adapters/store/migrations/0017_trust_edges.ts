/**
 * Trust edges (docs/trust.md): one agent's public statement that it trusts another, at a level.
 * A DELETE only sets `deleted_at` (and who): the edge stays on record, as its governance entry does.
 * At most one ACTIVE edge per (source, target) pair: a new level is a delete and a new edge, so each
 * level an agent ever declared keeps its own id and time. Both directions are indexed on the active
 * edges: the workers walk incoming edges (whom an agent is trusted by) and outgoing ones (whom a
 * changed score reaches), TrustEdgeRepo's `incomingGraph` and `outgoingGraph`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

const ddl = `
create table trust_edges (
  edge_id text primary key,
  source_agent_id text not null,
  target_agent_id text not null,
  trust_level text not null check (trust_level in ('low', 'medium', 'high')),
  reason text not null,
  created_by text not null,
  created_at timestamptz not null default now(),
  deleted_at timestamptz,
  deleted_by text,
  check (source_agent_id <> target_agent_id)
);
create unique index trust_edges_active_pair on trust_edges (source_agent_id, target_agent_id) where deleted_at is null;
create index trust_edges_active_incoming on trust_edges (target_agent_id, source_agent_id) where deleted_at is null;
`

export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(ddl).unprepared)
