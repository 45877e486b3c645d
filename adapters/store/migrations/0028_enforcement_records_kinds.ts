/**
 * Enforcement records for every act of enforcement (issue 26, core/schema/EnforcementRecord.ts):
 * each row gets its `record_id` (made where the act happened; the row is stored once per id, so a
 * message the bus delivers again stores nothing), its `kind` (`blocked`, `nudged`, `paused`, …),
 * the `rule` that acted, the `reason` and the `actor`. `action` stays: with the checkpoint, it is
 * what records an automatic pause once per decision (0002), and new rows write their kind there.
 *
 * Rows written before (automatic pauses only) are backfilled: `enf-<id>`, kind `paused`, rule
 * `auto_containment`, their trigger as reason, actor `system`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

const ddl = `
alter table enforcement_records
  add column record_id text,
  add column kind text,
  add column rule text,
  add column reason text,
  add column actor text;

update enforcement_records set
  record_id = 'enf-' || id::text,
  kind = case action when 'pause' then 'paused' when 'block' then 'blocked' when 'nudge' then 'nudged' else action end,
  rule = case action when 'pause' then 'auto_containment' else mode end,
  reason = coalesce(body->>'trigger', action),
  actor = 'system';

alter table enforcement_records
  alter column record_id set not null,
  alter column kind set not null,
  alter column rule set not null,
  alter column reason set not null,
  alter column actor set not null;

create unique index enforcement_records_record_id on enforcement_records (record_id);
create index enforcement_records_agent_kind_time on enforcement_records (agent_id, kind, created_at desc);
`

export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(ddl).unprepared)
