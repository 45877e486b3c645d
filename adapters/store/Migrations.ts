/**
 * Versioned schema migrations, bundled with the code (no file glob at run time) and run at start on
 * both backends by the @effect/sql `Migrator`: each runs once, in order, in one transaction that
 * also records it in `candor_migrations`.
 */
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import initial from "./migrations/0001_initial.js"
import webhooksEnforcement from "./migrations/0002_webhooks_enforcement.js"
import identity from "./migrations/0003_identity.js"
import agentQueries from "./migrations/0004_agent_queries.js"
import keysProofs from "./migrations/0005_keys_proofs.js"
import governanceLog from "./migrations/0006_governance_log.js"
import containment from "./migrations/0007_containment.js"
import orgConscienceValues from "./migrations/0008_org_conscience_values.js"
import policies from "./migrations/0009_policies.js"
import sealedSecrets from "./migrations/0010_sealed_secrets.js"
import webhookEndpoints from "./migrations/0011_webhook_endpoints.js"
import feedEvents from "./migrations/0012_feed_events.js"
import sealedFields from "./migrations/0014_sealed_fields.js"
import reputation from "./migrations/0015_reputation.js"
import teams from "./migrations/0016_teams.js"
import trustEdges from "./migrations/0017_trust_edges.js"
import teamReputation from "./migrations/0018_team_reputation.js"
import riskAssessments from "./migrations/0019_risk_assessments.js"
import reclassifications from "./migrations/0020_reclassifications.js"
import transactions from "./migrations/0021_transactions.js"
import anchors from "./migrations/0022_anchors.js"
import witnessCosignatures from "./migrations/0023_witness_cosignatures.js"
import keyContainment from "./migrations/0024_key_containment.js"
import agentSessions from "./migrations/0025_agent_sessions.js"
import deadLetters from "./migrations/0026_dead_letters.js"
import evidenceRedaction from "./migrations/0027_evidence_redaction.js"
import enforcementRecordsKinds from "./migrations/0028_enforcement_records_kinds.js"
import agentNames from "./migrations/0029_agent_names.js"
import mcpGateway from "./migrations/0030_mcp_gateway.js"
import approvals from "./migrations/0033_approvals.js"
import fleetVersion from "./migrations/0034_fleet_version.js"
import { transaction } from "./Transaction.js"

const TABLE = "candor_migrations"

/** Every migration, in order: `<id>_<name>`; the id orders them and is never reused. */
export const migrationNames = [
  "0001_initial",
  "0002_webhooks_enforcement",
  "0003_identity",
  "0004_agent_queries",
  "0005_keys_proofs",
  "0006_governance_log",
  "0007_containment",
  "0008_org_conscience_values",
  "0009_policies",
  "0010_sealed_secrets",
  "0011_webhook_endpoints",
  "0012_feed_events",
  "0014_sealed_fields",
  "0015_reputation",
  "0016_teams",
  "0017_trust_edges",
  "0018_team_reputation",
  "0019_risk_assessments",
  "0020_reclassifications",
  "0021_transactions",
  "0022_anchors",
  "0023_witness_cosignatures",
  "0024_key_containment",
  "0025_agent_sessions",
  "0026_dead_letters",
  "0027_evidence_redaction",
  "0028_enforcement_records_kinds",
  "0029_agent_names",
  "0030_mcp_gateway",
  "0033_approvals",
  "0034_fleet_version"
] as const

export const migrations = Migrator.fromRecord({
  "0001_initial": initial,
  "0002_webhooks_enforcement": webhooksEnforcement,
  "0003_identity": identity,
  "0004_agent_queries": agentQueries,
  "0005_keys_proofs": keysProofs,
  "0006_governance_log": governanceLog,
  "0007_containment": containment,
  "0008_org_conscience_values": orgConscienceValues,
  "0009_policies": policies,
  "0010_sealed_secrets": sealedSecrets,
  "0011_webhook_endpoints": webhookEndpoints,
  "0012_feed_events": feedEvents,
  "0014_sealed_fields": sealedFields,
  "0015_reputation": reputation,
  "0016_teams": teams,
  "0017_trust_edges": trustEdges,
  "0018_team_reputation": teamReputation,
  "0019_risk_assessments": riskAssessments,
  "0020_reclassifications": reclassifications,
  "0021_transactions": transactions,
  "0022_anchors": anchors,
  "0023_witness_cosignatures": witnessCosignatures,
  "0024_key_containment": keyContainment,
  "0025_agent_sessions": agentSessions,
  "0026_dead_letters": deadLetters,
  "0027_evidence_redaction": evidenceRedaction,
  "0028_enforcement_records_kinds": enforcementRecordsKinds,
  "0029_agent_names": agentNames,
  "0030_mcp_gateway": mcpGateway,
  "0033_approvals": approvals,
  "0034_fleet_version": fleetVersion
} satisfies Record<(typeof migrationNames)[number], unknown>)

/**
 * The Migrator creates its table only after failing to find it, a race when several processes
 * start on an empty database (`--role` split). Creating it first under a transaction-scoped
 * advisory lock closes that race; the Migrator then locks the table itself while it migrates.
 */
const ensureTable = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  transaction(
    sql,
    Effect.zipRight(
      sql`select pg_advisory_xact_lock(7260411) as locked`,
      sql`create table if not exists ${sql(TABLE)} (
        migration_id integer primary key,
        created_at timestamptz not null default now(),
        name text not null
      )`
    )
  )
)

/** Applies the migrations this database has not had yet; returns those it applied. */
export const run = Effect.zipRight(ensureTable, Migrator.make({})({ loader: migrations, table: TABLE }))
