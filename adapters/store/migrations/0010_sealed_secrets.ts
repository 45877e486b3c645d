/**
 * Webhook signing secrets sealed at rest (core/SecretBox.ts, adapters/store/WebhookSecrets.ts).
 *
 * - `secret_sealed`: the secret as a `v1.<kek id>.<nonce>.<ciphertext>` envelope, bound to its
 *   row's id (`registration_id`); every write of a secret seals it from now on.
 * - `legacy_secret`: the clear column of 0002, renamed so nothing reads it as current. A migration
 *   cannot hold the key-encryption key, so rows stored before this one are sealed, and their clear
 *   value set to NULL, by `sealLegacySecrets` when a process with the key opens the store.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

const ddl = `
alter table webhooks rename column secret to legacy_secret;
alter table webhooks alter column legacy_secret drop not null;
alter table webhooks add column secret_sealed text;
`

export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(ddl).unprepared)
