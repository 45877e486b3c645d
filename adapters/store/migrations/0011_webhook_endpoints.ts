/**
 * The per-agent webhooks of 0002 become endpoints (the webhook endpoints API, adapters/store/WebhookRepo.ts),
 * and every delivery is a row.
 *
 * - `webhooks` keeps its columns (`registration_id` is the endpoint id, `callback_url` the URL,
 *   `events` the subscribed event types, `active` whether it is enabled) and gains an owner scope
 *   (`org_id` for an organization's endpoint, `agent_id` alone for an agent's), a description, an
 *   agent filter, why it was disabled, its consecutive failed attempts, the previous secret of a
 *   rotation (sealed like the current one) with its expiry, and `updated_at`.
 * - The event names of the older per-agent webhooks are folded into the catalogue's
 *   (core/schema/WebhookEvents.ts): `verdict` into `verdict.boundary_violation` and
 *   `verdict.review_needed`, `drift_alert` into `drift.detected`, `containment` into `agent.paused`.
 * - `webhook_deliveries`: one row per endpoint and event (unique), holding the envelope it sends,
 *   so every retry and redelivery sends the same body. It is not tied to the endpoint by a foreign
 *   key: a deleted endpoint's deliveries stay on record (and end as failed). `owner_scope` and
 *   `owner_id` are the endpoint's, for listing; `sequence` counts redeliveries, so an outbox item of
 *   an earlier sequence does nothing.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/** The older per-agent webhooks' event names as the catalogue's (idempotent: rows without them are untouched). */
export const FOLD_LEGACY_EVENT_NAMES = `
update webhooks set events = (
  select coalesce(jsonb_agg(name order by name), '[]'::jsonb) from (
    select case e when 'drift_alert' then 'drift.detected' when 'containment' then 'agent.paused' else e end as name
    from jsonb_array_elements_text(webhooks.events) as e where e <> 'verdict'
    union
    select n from unnest(array['verdict.boundary_violation', 'verdict.review_needed']) as n
    where webhooks.events ? 'verdict'
  ) folded
)
where events ?| array['verdict', 'drift_alert', 'containment']`

const ddl = `
alter table webhooks alter column agent_id drop not null;
alter table webhooks add column org_id text;
alter table webhooks add column description text not null default '';
alter table webhooks add column agent_ids jsonb not null default '[]'::jsonb;
alter table webhooks add column disabled_reason text;
alter table webhooks add column consecutive_failures integer not null default 0;
alter table webhooks add column previous_secret_sealed text;
alter table webhooks add column previous_secret_expires_at timestamptz;
alter table webhooks add column updated_at timestamptz;
update webhooks set updated_at = created_at;
alter table webhooks alter column updated_at set not null;
alter table webhooks alter column updated_at set default now();
create index webhooks_org on webhooks (org_id, created_at) where org_id is not null;

${FOLD_LEGACY_EVENT_NAMES};

create table webhook_deliveries (
  delivery_id text primary key,
  endpoint_id text not null,
  owner_scope text not null,
  owner_id text not null,
  event_id text not null,
  event_type text not null,
  envelope jsonb not null,
  status text not null default 'pending',
  sequence integer not null default 1,
  attempts integer not null default 0,
  last_status integer,
  last_error text,
  next_attempt_at timestamptz,
  latency_ms integer,
  created_at timestamptz not null,
  delivered_at timestamptz,
  unique (endpoint_id, event_id)
);
create index webhook_deliveries_owner on webhook_deliveries (owner_scope, owner_id, created_at desc);
`

export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(ddl).unprepared)
