/**
 * On-chain anchors (docs/on-chain.md): every batch Candor recorded, or tried to record, in the
 * CandorAnchor contract. `anchor_id` is the contract's key (0x + 64 hex); `leaves` the leaf objects in
 * tree order, as their JCS was hashed, so a proof is rebuilt from the row alone; `chain_anchor_agents`
 * indexes them by agent for the history and for access (a reader must be able to read every agent of
 * an anchor). `seq` orders the history and is its cursor. Only `status`, `block_number`, `error` and
 * `tx_hash` change, as the transaction goes.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

const ddl = `
create table chain_anchors (
  anchor_id text primary key,
  seq bigserial not null unique,
  kind text not null check (kind in ('tree_heads', 'scores')),
  chain_id bigint not null,
  contract text not null,
  tx_hash text,
  block_number bigint,
  batch_root text not null,
  leaf_count integer not null check (leaf_count between 1 and 200),
  status text not null check (status in ('pending', 'confirmed', 'failed')),
  error text,
  leaves json not null,
  requested_by text not null,
  anchored_at timestamptz not null
);
create index chain_anchors_pending on chain_anchors (seq) where status = 'pending';
create table chain_anchor_agents (
  anchor_id text not null references chain_anchors on delete cascade,
  agent_id text not null,
  leaf_index integer not null,
  seq bigint not null,
  kind text not null,
  tree_size bigint,
  primary key (anchor_id, agent_id)
);
create index chain_anchor_agents_agent on chain_anchor_agents (agent_id, seq desc);
`

export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(ddl).unprepared)
