/**
 * The Alignment Card (AAP 0.1.0 and 0.5.0, which share one field set: 0.5.0 only changed the
 * default of `aap_version`), and the card record stored per agent.
 *
 * Every object of the card keeps members this schema does not name. The card is hashed
 * (`card_hash`, JCS) and AAP says to ignore unknown fields, not to delete them: a decode that
 * dropped a vendor's member would silently change what the certificate commits to.
 *
 * Tolerance, where AAP tolerates: optional members may be absent or `null`; `trace_format`
 * defaults like `aap_version`; `issued_at`/`expires_at` accept any ISO 8601 date(-time) because
 * Python SDKs write naive datetimes; `query_endpoint` is not demanded when `queryable` is true
 * (Mnemom's own examples omit it); custom values need no `definitions` entry.
 */
import { Schema } from "effect"
import { literalUnion } from "./Literals.js"
import { ConscienceValue } from "./Conscience.js"
import { AgentId, CardId, JsonObject, LenientDateTimeString, UnknownMembers } from "./Ids.js"

const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })
const optionalOrNull = <S extends Schema.Schema.Any>(schema: S) =>
  Schema.optionalWith(Schema.NullOr(schema), { exact: true })

export const DEFAULT_AAP_VERSION = "0.5.0"
export const KNOWN_AAP_VERSIONS = ["0.1.0", "0.5.0"] as const

/** Any `MAJOR.MINOR.PATCH`: a newer minor version must not make a card unreadable. */
export const AapVersion = Schema.String.pipe(
  Schema.pattern(/^\d+\.\d+\.\d+$/, { message: () => "aap_version must look like 0.5.0" })
).annotations({ identifier: "AapVersion" })

export const STANDARD_VALUES = [
  "principal_benefit",
  "transparency",
  "minimal_data",
  "harm_prevention",
  "honesty",
  "user_control",
  "privacy",
  "fairness"
] as const

export const Principal = Schema.Struct(
  {
    type: literalUnion(["human", "organization", "agent", "unspecified"]),
    identifier: optionalOrNull(Schema.String),
    relationship: literalUnion(["delegated_authority", "advisory", "autonomous"]),
    escalation_contact: optionalOrNull(Schema.String)
  },
  UnknownMembers
).annotations({ identifier: "Principal", description: "Whom the agent serves" })

export const ValueDefinition = Schema.Struct(
  {
    name: Schema.String,
    description: Schema.String,
    priority: optional(Schema.Int)
  },
  UnknownMembers
).annotations({ identifier: "ValueDefinition" })

export const CardValues = Schema.Struct(
  {
    declared: Schema.Array(Schema.String),
    definitions: optionalOrNull(Schema.Record({ key: Schema.String, value: ValueDefinition })),
    conflicts_with: optionalOrNull(Schema.Array(Schema.String)),
    hierarchy: optionalOrNull(literalUnion(["lexicographic", "weighted", "contextual"]))
  },
  UnknownMembers
).annotations({ identifier: "CardValues", description: "What the agent optimises for" })

export const EscalationTrigger = Schema.Struct(
  {
    condition: Schema.String,
    action: literalUnion(["escalate", "deny", "log"]),
    reason: Schema.String
  },
  UnknownMembers
).annotations({ identifier: "EscalationTrigger" })

export const MonetaryValue = Schema.Struct(
  { amount: Schema.Number, currency: optional(Schema.String) },
  UnknownMembers
).annotations({ identifier: "MonetaryValue" })

export const AutonomyEnvelope = Schema.Struct(
  {
    bounded_actions: Schema.Array(Schema.String),
    escalation_triggers: Schema.Array(EscalationTrigger),
    max_autonomous_value: optionalOrNull(MonetaryValue),
    forbidden_actions: optionalOrNull(Schema.Array(Schema.String))
  },
  UnknownMembers
).annotations({ identifier: "AutonomyEnvelope", description: "What the agent may do on its own" })

export const AuditCommitment = Schema.Struct(
  {
    trace_format: Schema.optionalWith(Schema.String, { default: () => "ap-trace-v1" }),
    retention_days: Schema.Int.pipe(
      Schema.greaterThanOrEqualTo(1, { message: () => "retention_days must be at least 1" })
    ),
    storage: optionalOrNull(
      Schema.Struct(
        { type: literalUnion(["local", "remote", "distributed"]), location: optionalOrNull(Schema.String) },
        UnknownMembers
      )
    ),
    queryable: Schema.Boolean,
    query_endpoint: optionalOrNull(Schema.String),
    tamper_evidence: optionalOrNull(literalUnion(["append_only", "signed", "merkle"]))
  },
  UnknownMembers
).annotations({ identifier: "AuditCommitment", description: "How decisions are recorded and for how long" })

export const AlignmentCard = Schema.Struct(
  {
    aap_version: Schema.optionalWith(AapVersion, { default: () => DEFAULT_AAP_VERSION }),
    card_id: CardId,
    agent_id: AgentId,
    issued_at: LenientDateTimeString,
    expires_at: optionalOrNull(LenientDateTimeString),
    principal: Principal,
    values: CardValues,
    autonomy_envelope: AutonomyEnvelope,
    audit_commitment: AuditCommitment,
    extensions: optionalOrNull(JsonObject)
  },
  UnknownMembers
).annotations({
  identifier: "AlignmentCard",
  description: "An agent's declared alignment (AAP 0.5.0; 0.1.0 cards are accepted unchanged)"
})
export type AlignmentCard = typeof AlignmentCard.Type
/** What a client sends: `aap_version` and `audit_commitment.trace_format` may be absent. */
export type AlignmentCardEncoded = typeof AlignmentCard.Encoded

/** The card record of the card update (and of what is stored per agent). */
export const AlignmentCardRecord = Schema.Struct({
  card_id: CardId,
  agent_id: AgentId,
  is_active: Schema.Boolean,
  card_json: AlignmentCard,
  conscience_values: Schema.Array(ConscienceValue),
  /** Lenient like the card's own `issued_at`, which it is usually copied from. */
  issued_at: LenientDateTimeString
}).annotations({ identifier: "AlignmentCardRecord", description: "An agent's card with its conscience values" })
export type AlignmentCardRecord = typeof AlignmentCardRecord.Type
