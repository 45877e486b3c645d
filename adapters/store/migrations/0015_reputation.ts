/**
 * Agent reputation (docs/reputation-storage.md): who may see an agent's score, and what keeps the
 * score exact without reading the whole log at each recomputation.
 *
 * - `agent_claims.visibility` (`public` | `unlisted` | `private`, default `unlisted`) is the one
 *   source of an agent's visibility; `public` becomes a generated column (`visibility = 'public'`),
 *   so the Agent record's `public` can never disagree with it. Claims made public before this keep it.
 * - `reputation_tallies`: per agent, the counts of the first `tree_size` certificates of its log
 *   (the prefix a score is computed over). A recomputation reads only the checkpoints from
 *   `tree_size` to the chain head and moves the counts; retention later deleting checkpoints does
 *   not change them (the certificates were counted when they were there).
 * - `reputation_sessions`: per (agent, session) what the drift and compliance components need:
 *   checkpoints seen, the newest boundary violation, whether an AIP drift alert (`ida-…`) was raised.
 * - `reputation_scores`: the current result (`result`, the published record without its visibility)
 *   with copies of the fields that are filtered and sorted on, and the last score and grade
 *   notified by webhook (reputation.score_changed fires on a move of more than 10 from the former).
 * - `reputation_history`: recomputations that changed something, and one weekly snapshot per ISO
 *   week (Monday 00:00 UTC, `week_start`), unique per agent and week.
 * - `drift_alerts_aip_session`: whether a session had an AIP alert, without scanning an agent's alerts.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

const ddl = `
alter table agent_claims add column visibility text not null default 'unlisted'
  check (visibility in ('public', 'unlisted', 'private'));
update agent_claims set visibility = 'public' where public;
alter table agent_claims drop column public;
alter table agent_claims add column public boolean generated always as (visibility = 'public') stored;
create index agent_claims_public on agent_claims (agent_id) where visibility = 'public';

create table reputation_tallies (
  agent_id text primary key,
  tree_size bigint not null default 0,
  certified bigint not null default 0,
  analysed bigint not null default 0,
  analysed_clear bigint not null default 0,
  long_sessions bigint not null default 0,
  stable_sessions bigint not null default 0,
  updated_at timestamptz
);

create table reputation_sessions (
  agent_id text not null,
  session_id text not null,
  checkpoints bigint not null,
  last_violation_at timestamptz,
  drifted boolean not null default false,
  primary key (agent_id, session_id)
);
create index reputation_sessions_violations on reputation_sessions (agent_id, last_violation_at)
  where last_violation_at is not null;

create table reputation_scores (
  agent_id text primary key,
  score integer not null,
  grade text not null,
  confidence text not null,
  is_eligible boolean not null,
  checkpoint_count bigint not null,
  tree_size bigint not null,
  -- {component key: component score}, for the benchmarks' means
  component_scores jsonb not null,
  result json not null,
  computed_at timestamptz not null,
  notified_score integer,
  notified_grade text,
  -- the score with no trust adjustment: what this agent's trust is weighted by (core/TrustPropagation.ts)
  base_score integer not null
);
create index reputation_scores_score on reputation_scores (score desc, agent_id);
create index reputation_scores_computed on reputation_scores (computed_at desc, agent_id);

create table reputation_history (
  id bigint generated always as identity primary key,
  agent_id text not null,
  kind text not null check (kind in ('recomputation', 'weekly_snapshot')),
  score integer not null,
  grade text not null,
  confidence text not null,
  checkpoint_count bigint not null,
  tree_size bigint not null,
  computed_at timestamptz not null,
  week_start timestamptz,
  check ((kind = 'weekly_snapshot') = (week_start is not null))
);
create index reputation_history_agent on reputation_history (agent_id, computed_at desc, id desc);
create unique index reputation_history_weekly on reputation_history (agent_id, week_start)
  where kind = 'weekly_snapshot';

create index drift_alerts_aip_session on drift_alerts (agent_id, session_id) where alert_id like 'ida-%';
`

export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(ddl).unprepared)
