/**
 * Signing keys and proof jobs.
 *
 * - `signing_keys`: the public key of every key that ever signed, so `GET /v1/keys` can list
 *   retired keys and old certificates keep verifying after a rotation. A worker registers its key
 *   when it starts; `retired_at` is set once a newer key has been registered (or `candor keys
 *   rotate` retired it). Public keys are the raw 32 bytes, hex across the SQL boundary as hashes are.
 * - `proofs` (0001) gets the index the API and operators use to find proofs that are not done.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

const ddl = `
create table signing_keys (
  key_id text primary key,
  public_key bytea not null,
  created_at timestamptz not null default now(),
  retired_at timestamptz
);

create index proofs_unfinished on proofs (status, updated_at) where status <> 'completed';
`

export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(ddl).unprepared)
