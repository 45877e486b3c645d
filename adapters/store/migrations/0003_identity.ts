/**
 * Users, organizations and what the management API needs around them.
 *
 * - `users` are created on their first authenticated request (the identity provider owns them; we
 *   keep the `sub`, the last email seen, the plan and whether they are a platform admin).
 * - `orgs` / `org_members` / `org_invites`: roles `owner`, `admin`, `member`. Invite tokens are kept
 *   only as SHA-256, like API keys and impersonation tokens: a database dump reveals no credential.
 * - `agent_claims`: who claimed an agent (by proving possession of its provider key, which is hashed
 *   and dropped), optionally into an organization. Unclaimed agents are visible to nobody but the
 *   service-role key.
 * - `plans` and `promo_codes` are seeded here; self-hosters edit the rows.
 * - `licenses` records activations of Ed25519-signed license tokens (the token is self-contained).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

const ddl = `
create table plans (
  plan_id text primary key,
  display_name text not null,
  description text not null,
  billing_model text not null,
  base_price_cents integer not null,
  annual_price_cents integer not null,
  per_check_price double precision not null,
  included_checks bigint not null,
  trace_retention_days integer not null,
  feature_flags jsonb not null,
  limits jsonb not null,
  sort_order integer not null
);

insert into plans values
  ('free', 'Free', 'For trying Candor on a few agents.', 'none', 0, 0, 0, 10000, 7,
   '{"aip": true, "aap": true, "webhooks": false, "organizations": false, "verdict_proofs": true, "sso": false}',
   '{"requests_per_second": 10, "agents": 3, "org_members": 1}', 1),
  ('developer', 'Developer', 'For individual developers running agents in production.', 'monthly', 2900, 29000, 0.0005, 100000, 30,
   '{"aip": true, "aap": true, "webhooks": true, "organizations": false, "verdict_proofs": true, "sso": false}',
   '{"requests_per_second": 50, "agents": 25, "org_members": 1}', 2),
  ('team', 'Team', 'For teams with shared agents, roles and fleet views.', 'monthly', 9900, 99000, 0.0004, 1000000, 90,
   '{"aip": true, "aap": true, "webhooks": true, "organizations": true, "verdict_proofs": true, "sso": false, "team_reputation": true}',
   '{"requests_per_second": 200, "agents": 250, "org_members": 50, "team_reputation_computations_per_month": 200}', 3),
  ('enterprise', 'Enterprise', 'Custom limits, retention and support; self-hosted licenses.', 'custom', 0, 0, 0, 0, 365,
   '{"aip": true, "aap": true, "webhooks": true, "organizations": true, "verdict_proofs": true, "sso": true, "team_reputation": true}',
   '{"requests_per_second": null, "agents": null, "org_members": null}', 4);

create table users (
  user_id text primary key,
  email text,
  plan_id text not null default 'free',
  is_admin boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table orgs (
  org_id text primary key,
  name text not null,
  slug text not null unique,
  billing_account_id text not null,
  owner_user_id text not null,
  billing_email text,
  company_name text,
  plan_id text not null default 'free',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table org_members (
  org_id text not null references orgs on delete cascade,
  user_id text not null,
  role text not null check (role in ('owner', 'admin', 'member')),
  created_at timestamptz not null default now(),
  primary key (org_id, user_id)
);
create index org_members_user on org_members (user_id);

create table org_invites (
  invite_id text primary key,
  org_id text not null references orgs on delete cascade,
  email text not null,
  role text not null check (role in ('admin', 'member')),
  token_hash text not null unique,
  invited_by text not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  accepted_at timestamptz,
  accepted_by text,
  revoked_at timestamptz
);
create index org_invites_org on org_invites (org_id, created_at);

create table api_keys (
  key_id text primary key,
  key_hash text not null unique,
  name text not null,
  prefix text not null,
  user_id text not null,
  org_id text references orgs on delete cascade,
  role text check (role in ('owner', 'admin', 'member')),
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
create index api_keys_owner on api_keys (user_id, org_id, created_at);

create table impersonation_sessions (
  session_id text primary key,
  admin_user_id text not null,
  target_user_id text not null,
  token_hash text not null unique,
  reason text,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  ended_at timestamptz
);

create table agent_claims (
  agent_id text primary key,
  agent_hash text not null,
  user_id text not null,
  org_id text references orgs on delete set null,
  public boolean not null default false,
  claimed_at timestamptz not null default now()
);
create index agent_claims_user on agent_claims (user_id);
create index agent_claims_org on agent_claims (org_id) where org_id is not null;

create table promo_codes (
  code text primary key,
  name text not null,
  discount_percent integer not null default 0,
  discount_amount_cents integer not null default 0,
  active boolean not null default true,
  expires_at timestamptz
);
insert into promo_codes (code, name, discount_percent, discount_amount_cents) values
  ('LAUNCH20', 'Launch: 20% off the first year', 20, 0),
  ('OPENSOURCE', 'Open-source maintainers: 100% off Developer', 100, 0),
  ('WELCOME10', 'Welcome: $10 off', 0, 1000);

create table enterprise_contacts (
  id text primary key,
  user_id text,
  name text not null,
  email text not null,
  company text not null,
  role text not null,
  company_size text not null,
  message text not null,
  created_at timestamptz not null default now()
);

create table license_activations (
  license_id text not null,
  instance_id text not null,
  instance_metadata jsonb not null default '{}'::jsonb,
  first_seen timestamptz not null default now(),
  last_seen timestamptz not null default now(),
  primary key (license_id, instance_id)
);

create table blog_posts (
  post_id text primary key,
  agent_id text not null,
  title text not null,
  slug text not null unique,
  summary text not null default '',
  body text not null default '',
  published_at timestamptz not null default now()
);
create index blog_posts_time on blog_posts (published_at desc, post_id);
create index blog_posts_agent on blog_posts (agent_id, published_at desc);
`

export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(ddl).unprepared)
