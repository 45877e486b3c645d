/**
 * Tool policies (core/schema/Policy.ts) of agents and organizations, every version kept: a row per
 * version (`policy_id` `pol-<uuid>`, the normalised document, its hash, who stored it and when),
 * marked `deleted` when a DELETE took it out of force. The document is `json`, not `jsonb`, so its
 * capability mappings keep the order their author wrote them in. `policy_heads` holds each owner's
 * last version number: it is only ever incremented (the row is locked while a version is allocated),
 * so a version is never reused, also after a DELETE.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

const ddl = `
create table policy_heads (
  scope text not null,
  owner_id text not null,
  version integer not null,
  primary key (scope, owner_id)
);

create table policies (
  policy_id text primary key,
  scope text not null,
  owner_id text not null,
  version integer not null,
  policy json not null,
  policy_hash text not null,
  updated_at timestamptz not null default now(),
  updated_by text not null,
  deleted boolean not null default false,
  deleted_at timestamptz,
  deleted_by text,
  unique (scope, owner_id, version)
);
`

export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(ddl).unprepared)
