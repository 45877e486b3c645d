/**
 * Team reputation (docs/team-reputation.md).
 *
 * - `team_assessments`: every recorded team assessment (coherence, risk, the member scores seen, the
 *   hash of the inputs it was made from). `source` says what recorded it: `computation` for one per
 *   team reputation computation; other producers (team risk assessments) add rows with their own.
 * - `team_reputation_scores`: the current result per team, with the inputs hash it was computed
 *   from, when the inputs were last compared (`checked_at`, the periodic refresh's clock) and the
 *   score and grade last notified (score events fire on a move from the last NOTIFIED score, so a
 *   slow slide alerts too).
 * - `team_reputation_computations`: one row per computation, the quota's ledger: the organization,
 *   the calendar month (UTC, `YYYY-MM`), whether it was overage and its cost, and the score it gave
 *   (the 30-day trend reads it back).
 * - `team_reputation_quota_notices`: per organization and month, when the warning and the exceeded
 *   events were sent (each once).
 * - `team_reputation_triggers`: automatic recomputations' coalescing: when the last automatic
 *   computation ran and since when another is waiting for its hour to pass.
 *
 * Rows go with their team or organization (`on delete cascade`).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

const ddl = `
create table team_assessments (
  -- recording order (two assessments may share an assessed_at)
  seq bigint generated always as identity primary key,
  assessment_id text not null unique,
  team_id text not null references teams on delete cascade,
  org_id text not null references orgs on delete cascade,
  assessed_at timestamptz not null,
  member_coherence double precision,
  card_coherence double precision,
  risk_level text not null check (risk_level in ('low', 'medium', 'high', 'critical')),
  member_scores jsonb not null,
  inputs_hash text not null,
  source text not null default 'computation'
);
create index team_assessments_team on team_assessments (team_id, seq);

create table team_reputation_scores (
  team_id text primary key references teams on delete cascade,
  org_id text not null references orgs on delete cascade,
  score integer not null,
  grade text not null,
  -- the published result (GET /v1/teams/{team_id}/reputation) as computed
  result jsonb not null,
  inputs_hash text not null,
  computed_at timestamptz not null,
  checked_at timestamptz not null,
  last_notified_score integer not null,
  last_notified_grade text not null
);
create index team_reputation_scores_checked on team_reputation_scores (checked_at);

create table team_reputation_computations (
  computation_id bigint generated always as identity primary key,
  org_id text not null references orgs on delete cascade,
  team_id text not null references teams on delete cascade,
  assessment_id text not null,
  score integer not null,
  computed_at timestamptz not null,
  period text not null check (period ~ '^[0-9]{4}-[0-9]{2}$'),
  overage boolean not null,
  cost numeric(12, 4) not null
);
create index team_reputation_computations_org on team_reputation_computations (org_id, period);
create index team_reputation_computations_team on team_reputation_computations (team_id, computed_at);

create table team_reputation_quota_notices (
  org_id text not null references orgs on delete cascade,
  period text not null,
  warning_sent_at timestamptz,
  exceeded_sent_at timestamptz,
  primary key (org_id, period)
);

create table team_reputation_triggers (
  team_id text primary key references teams on delete cascade,
  last_automatic_at timestamptz,
  pending_since timestamptz
);
create index team_reputation_triggers_pending on team_reputation_triggers (pending_since) where pending_since is not null;
`

export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(ddl).unprepared)
