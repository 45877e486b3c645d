/**
 * Webhook registrations, and enforcement records written at most once per decision.
 *
 * - `webhooks`: one row per registration (`reg-<uuid>`), scoped to an agent for now (an organization
 *   scope would be a nullable `org_id` beside `agent_id`). `events` is a JSON array of event names.
 *   The secret is kept because every delivery is signed with it at send time; it never leaves this
 *   table (outbox payloads name the registration, not the secret).
 *   0010_sealed_secrets seals it at rest under a key-encryption key; 0011_webhook_endpoints makes
 *   these rows webhook endpoints.
 * - `enforcement_records`: a decision (a pause, later a nudge or a block) is recorded once per
 *   checkpoint and action, so an outbox item handled twice (a crash between the handler and its
 *   completion) leaves one record. Rows without a checkpoint are never deduplicated (NULLs are distinct).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

const ddl = `
create table webhooks (
  registration_id text primary key,
  agent_id text not null,
  callback_url text not null,
  secret text not null,
  events jsonb not null,
  active boolean not null default true,
  created_at timestamptz not null default now()
);
create index webhooks_agent on webhooks (agent_id, created_at) where active;

create unique index enforcement_records_once on enforcement_records (agent_id, checkpoint_id, action);
`

export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(ddl).unprepared)
