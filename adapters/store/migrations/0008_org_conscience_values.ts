/**
 * Organization conscience values (docs/api.md, "Organization conscience values").
 *
 * - `org_conscience_values`: at most 20 per organization (checked by the API under the
 *   organization's row lock), names unique within it, their order in `sort_order`.
 * - `org_conscience_settings`: the layer's mode and whether it applies; no row means the defaults
 *   (`augment`, enabled).
 * - `org_conscience_log`: every change, with its diff. It outlives a deleted organization (no
 *   foreign key), like the governance log that also records each change.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

const ddl = `
create table org_conscience_values (
  value_id text primary key,
  org_id text not null references orgs on delete cascade,
  type text not null check (type in ('BOUNDARY', 'FEAR', 'COMMITMENT', 'BELIEF', 'HOPE')),
  name text not null,
  content text not null,
  severity text not null check (severity in ('advisory', 'mandatory')),
  is_active boolean not null default true,
  sort_order integer not null,
  created_by text not null,
  updated_by text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (org_id, name)
);
create index org_conscience_values_order on org_conscience_values (org_id, sort_order);

create table org_conscience_settings (
  org_id text primary key references orgs on delete cascade,
  mode text not null check (mode in ('augment', 'replace')),
  enabled boolean not null,
  updated_by text not null,
  updated_at timestamptz not null default now()
);

create table org_conscience_log (
  entry_id bigint generated always as identity primary key,
  org_id text not null,
  value_id text,
  action text not null,
  actor text not null,
  changes jsonb not null,
  created_at timestamptz not null default now()
);
create index org_conscience_log_org on org_conscience_log (org_id, entry_id);
`

export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(ddl).unprepared)
