/**
 * An organization's evidence redaction (issue 26, docs/security.md "Evidence redaction"): `none`,
 * `mask` or `omit`, pushed to the gateways with the agents' policies. Existing organizations keep
 * `none`, which changes nothing: the deployment's CANDOR_EVIDENCE_REDACTION still applies to them.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

const ddl = `
alter table orgs add column evidence_redaction text not null default 'none'
  check (evidence_redaction in ('none', 'mask', 'omit'));
`

export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(ddl).unprepared)
