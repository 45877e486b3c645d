/**
 * Human approval (docs/approvals.md): one row per tool call held for a person's decision. Listed per
 * organization and status, newest first; the expiry sweep reads pending rows by `expires_at`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

const ddl = `
create table approvals (
  approval_id text primary key,
  org_id text not null,
  agent_id text not null,
  server_id text,
  tool text not null check (char_length(tool) between 1 and 256),
  arguments_hash text not null check (arguments_hash ~ '^[0-9a-f]{64}$'),
  reason text not null check (char_length(reason) <= 1000),
  requested_at timestamptz not null,
  expires_at timestamptz not null check (expires_at > requested_at),
  status text not null default 'pending'
    check (status in ('pending', 'approved', 'denied', 'expired', 'cancelled')),
  decided_at timestamptz,
  decided_by text,
  decision_reason text check (char_length(decision_reason) <= 1000),
  check ((status = 'pending') = (decided_at is null))
);
create index approvals_org_status on approvals (org_id, status, requested_at desc, approval_id desc);
create index approvals_pending_expiry on approvals (expires_at) where status = 'pending';
`

export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(ddl).unprepared)
