/**
 * The embedded event feed (adapters/bus/EventFeedStore.ts), used when no NATS is configured.
 *
 * - `feed_events`: every catalogue event once (`id` unique: a republish is dropped), in `seq` order,
 *   which is commit order because inserts are serialised by an advisory lock. The envelope is kept
 *   whole as `json`, the text as written (the first migration's convention for served records);
 *   `type`, `org_id`, `agent_id` and `created_at` are copies of its fields. `published_at` is when it
 *   was stored: `?since=` and retention (7 days) go by it.
 * - `feed_cursors`: how far each durable consumer (`webhooks`) has acked, every event at or below
 *   `seq` settled.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

const ddl = `
create table feed_events (
  seq bigserial primary key,
  id text not null unique,
  type text not null,
  org_id text,
  agent_id text,
  created_at timestamptz not null,
  published_at timestamptz not null,
  envelope json not null
);
create index feed_events_published_at on feed_events (published_at);

create table feed_cursors (
  name text primary key,
  seq bigint not null,
  updated_at timestamptz not null
);
`

export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(ddl).unprepared)
