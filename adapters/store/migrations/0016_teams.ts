/**
 * Teams (docs/teams.md).
 *
 * - `teams`: one row per team; a name is unique among the organization's ACTIVE teams, compared
 *   case-insensitively (an archived team's name may be used again). Archiving is final.
 * - `team_members`: one row per membership period, `removed_at` null while it lasts; at most one
 *   open period per agent and team. Past periods stay, so the roster at any time can be read back.
 * - `team_roster_changes`: every agent added or removed, with who did it, in order (`change_id`).
 * - `team_cards`: every version of a team's card, the newest the only active one.
 *
 * Rows go with their organization (`on delete cascade`); the organization's governance log keeps
 * the record of every change.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

const ddl = `
create table teams (
  team_id text primary key,
  -- creation order (listings are oldest first; two teams may share a created_at)
  seq bigint generated always as identity,
  org_id text not null references orgs on delete cascade,
  name text not null,
  description text,
  status text not null check (status in ('active', 'archived')),
  metadata jsonb not null default '{}'::jsonb,
  created_by text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  archived_at timestamptz
);
create unique index teams_active_name on teams (org_id, lower(name)) where status = 'active';
create index teams_org on teams (org_id, seq);

create table team_members (
  membership_id bigint generated always as identity primary key,
  team_id text not null references teams on delete cascade,
  agent_id text not null,
  added_at timestamptz not null,
  added_by text,
  removed_at timestamptz,
  removed_by text
);
create unique index team_members_current on team_members (team_id, agent_id) where removed_at is null;
create index team_members_agent on team_members (agent_id, team_id);

create table team_roster_changes (
  change_id bigint generated always as identity primary key,
  team_id text not null references teams on delete cascade,
  change_type text not null check (change_type in ('agent_added', 'agent_removed')),
  agent_id text not null,
  actor_id text,
  created_at timestamptz not null
);
create index team_roster_changes_team on team_roster_changes (team_id, change_id);

create table team_cards (
  team_id text not null references teams on delete cascade,
  version integer not null,
  card_id text not null unique,
  card jsonb not null,
  card_source text not null check (card_source in ('manual', 'auto_derived', 'hybrid')),
  active boolean not null,
  actor_id text,
  issued_at timestamptz not null,
  primary key (team_id, version)
);
create unique index team_cards_one_active on team_cards (team_id) where active;
`

export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(ddl).unprepared)
