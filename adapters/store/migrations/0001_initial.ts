/**
 * The first schema. Conventions, kept by every later migration:
 *
 * - Hashes (chain heads, Merkle nodes, roots) are `bytea`, 32 bytes. They cross the SQL boundary as
 *   lowercase hex (`decode(x, 'hex')` in, `encode(x, 'hex')` out), since hex is how every hash
 *   leaves Candor, and bytea halves the size of the largest table (`merkle_nodes`).
 * - Records served as they were written (checkpoints, traces, certificates, alerts, outbox payloads)
 *   are kept whole as `json`, the text as written: cheaper to insert than `jsonb` (the write path
 *   measurably pays for the conversion), and a `\u0000` in a judge's summary cannot fail a batch as
 *   it would in `jsonb`. The columns beside a body are copies of its fields for filtering and
 *   ordering. Documents that are queried or updated in place (cards, settings, frontiers) are `jsonb`.
 * - Times are `timestamptz`; counts and positions `bigint` (logs may outgrow 2^31 leaves).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

const ddl = `
create table agents (
  agent_id text primary key,
  created_at timestamptz not null default now(),
  -- enforcement mode, failure policy, containment, auto-containment threshold
  settings jsonb not null default '{}'::jsonb,
  violation_streak integer not null default 0
);

create table cards (
  agent_id text not null,
  version integer not null,
  card_id text not null,
  card jsonb not null,
  -- copy of card.audit_commitment.retention_days, read by the purge
  retention_days integer not null,
  active boolean not null default false,
  created_at timestamptz not null default now(),
  primary key (agent_id, version)
);
create unique index cards_one_active on cards (agent_id) where active;

create table conscience_values (
  agent_id text primary key,
  "values" jsonb not null,
  updated_at timestamptz not null default now()
);

create table checkpoints (
  checkpoint_id text primary key,
  agent_id text not null,
  session_id text not null,
  verdict text not null,
  occurred_at timestamptz not null,
  position bigint not null,
  body json not null,
  -- a second fence behind the chain-head compare-and-set: one leaf per position
  unique (agent_id, position)
);
create index checkpoints_agent_time on checkpoints (agent_id, occurred_at desc, position desc);
create index checkpoints_agent_verdict_time on checkpoints (agent_id, verdict, occurred_at desc, position desc);
create index checkpoints_session_time on checkpoints (session_id, occurred_at desc, position desc);

-- Totals of checkpoint listings without counting a million rows per page.
create table checkpoint_counts (
  agent_id text not null,
  verdict text not null,
  count bigint not null,
  primary key (agent_id, verdict)
);

create table traces (
  trace_id text primary key,
  agent_id text not null,
  occurred_at timestamptz not null,
  body json not null
);
create index traces_agent_time on traces (agent_id, occurred_at desc);

create table certificates (
  checkpoint_id text primary key,
  key_id text not null,
  body json not null
);

-- The next position of each agent's chain, its hash, and the Merkle frontier at that size
-- (a JSON array of hex hashes, largest subtree first).
create table chain_heads (
  agent_id text primary key,
  position bigint not null,
  hash bytea not null,
  frontier jsonb not null
);

-- Perfect subtrees of each agent's log, written once: enough for any inclusion or consistency proof.
create table merkle_nodes (
  agent_id text not null,
  level smallint not null,
  idx bigint not null,
  hash bytea not null,
  primary key (agent_id, level, idx)
);

create table tree_heads (
  agent_id text not null,
  tree_size bigint not null,
  root bytea not null,
  note text not null,
  created_at timestamptz not null default now(),
  primary key (agent_id, tree_size)
);

create table drift_alerts (
  alert_id text primary key,
  agent_id text not null,
  session_id text not null,
  detected_at timestamptz not null,
  body json not null
);
create index drift_alerts_agent_time on drift_alerts (agent_id, detected_at desc);

create table enforcement_records (
  id bigint generated always as identity primary key,
  agent_id text not null,
  checkpoint_id text,
  session_id text,
  mode text not null,
  action text not null,
  body jsonb not null default '{}'::jsonb,
  created_at timestamptz not null default now()
);
create index enforcement_records_agent_time on enforcement_records (agent_id, created_at desc);

create table proofs (
  checkpoint_id text primary key,
  agent_id text not null,
  status text not null default 'pending',
  proof jsonb,
  attempts integer not null default 0,
  error text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table outbox (
  id bigint generated always as identity primary key,
  kind text not null,
  payload json not null,
  attempts integer not null default 0,
  due_at timestamptz not null,
  leased_until timestamptz,
  dead boolean not null default false,
  last_error text,
  created_at timestamptz not null
);
create index outbox_due on outbox (kind, due_at, id) where not dead;
`

export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(ddl).unprepared)
