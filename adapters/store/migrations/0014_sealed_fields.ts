/**
 * The fields that can hold text derived from the model's reasoning sealed at rest
 * (adapters/store/SealedFields.ts): checkpoints' `reasoning_summary` and concerns' `evidence`,
 * traces' `decision.selection_reasoning`, certificates' `claims.reasoning_summary`.
 *
 * - `sealed_by`: the id of the key-encryption key the row's fields are sealed under; written by
 *   every commit from now on. NULL marks a row stored in clear before this migration: a migration
 *   cannot hold the key, so `sealLegacyFields` seals those rows in batches once a process with the
 *   key runs, and reads take them as they are until then.
 * - The partial indexes hold only the rows still in clear: the pass finds its next batch without
 *   scanning the table, and once every row is sealed they are empty.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

const ddl = `
alter table checkpoints add column sealed_by text;
alter table traces add column sealed_by text;
alter table certificates add column sealed_by text;
create index checkpoints_unsealed on checkpoints (checkpoint_id) where sealed_by is null;
create index traces_unsealed on traces (trace_id) where sealed_by is null;
create index certificates_unsealed on certificates (checkpoint_id) where sealed_by is null;
`

export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(ddl).unprepared)
