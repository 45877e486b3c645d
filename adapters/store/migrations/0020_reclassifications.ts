/**
 * Reclassifications (docs/reclassification.md).
 *
 * - `reclassifications`: one per checkpoint at most (the primary key is the 409): an Owner's or
 *   Admin's judgement that a non-clear verdict was a gap in the agent's card (`card_gap`, the score
 *   stops counting it as a violation) or a real behaviour gap (`behavior_gap`, it confirms the
 *   verdict). Each row is written in the transaction of its `reclassification.create` entry in the
 *   agent's governance log, which is what a third party checks; the certificate is never touched.
 * - `card_amendments`: the change to the card a reclassification (or a policy change, or a person)
 *   said was due, as recorded; it does not edit the card.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

const ddl = `
create table reclassifications (
  reclassification_id text not null unique,
  checkpoint_id text primary key,
  agent_id text not null,
  session_id text not null,
  original_verdict text not null,
  new_type text not null check (new_type in ('card_gap', 'behavior_gap')),
  reason text not null,
  approved_by text not null,
  certificate_hash text not null,
  governance_index bigint not null,
  created_at timestamptz not null
);
create index reclassifications_agent on reclassifications (agent_id, created_at, reclassification_id);

create table card_amendments (
  amendment_id text primary key,
  agent_id text not null,
  reclassification_id text references reclassifications (reclassification_id) on delete cascade,
  field_changed text not null,
  old_value text,
  new_value text,
  triggered_by text not null check (triggered_by in ('reclassification', 'policy_change', 'manual')),
  created_by text not null,
  created_at timestamptz not null
);
create index card_amendments_agent on card_amendments (agent_id, created_at, amendment_id);
`

export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(ddl).unprepared)
