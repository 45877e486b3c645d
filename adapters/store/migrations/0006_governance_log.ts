/**
 * The governance logs (core/schema/Governance.ts): one RFC 6962 log per agent (`agents/<id>`) and
 * per organization (`orgs/<id>`), in the same shape as the checkpoint logs: a head row per log (its
 * size and frontier, locked to append), the perfect nodes, one signed tree head per size, and the
 * entries with the record each leaf hashes (JCS of `record`).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

const ddl = `
create table governance_logs (
  log_id text primary key,
  size bigint not null,
  frontier jsonb not null
);

create table governance_entries (
  log_id text not null,
  idx bigint not null,
  leaf_hash bytea not null,
  record json not null,
  created_at timestamptz not null default now(),
  primary key (log_id, idx)
);

create table governance_nodes (
  log_id text not null,
  level smallint not null,
  idx bigint not null,
  hash bytea not null,
  primary key (log_id, level, idx)
);

create table governance_tree_heads (
  log_id text not null,
  tree_size bigint not null,
  root bytea not null,
  note text not null,
  created_at timestamptz not null default now(),
  primary key (log_id, tree_size)
);
`

export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(ddl).unprepared)
