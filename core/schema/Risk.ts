/**
 * Risk assessments as requested and as published (docs/risk.md). A record carries everything its
 * result was computed from (`inputs`), the result, and an Ed25519 signature by the service's key
 * over the rest of it (core/RiskSignature.ts), so anyone recomputes the result with core/Risk.ts
 * and checks the signature with the key listed at `GET /v1/keys`.
 */
import { Schema } from "effect"
import { AgentId, DateTimeString, Ed25519SignatureBase64, Identifier } from "./Ids.js"
import { literalUnion } from "./Literals.js"
import { ComponentKey, ComputedOver, Confidence, Grade, Score } from "./Reputation.js"

export const RISK_ASSESSMENT_ID_PREFIX = "ra-"
export const TEAM_RISK_ASSESSMENT_ID_PREFIX = "rta-"

export const ACTION_TYPES = [
  "financial_transaction",
  "data_access",
  "task_delegation",
  "tool_invocation",
  "autonomous_operation",
  "multi_agent_coordination"
] as const
export const ActionType = literalUnion(ACTION_TYPES, { identifier: "RiskActionType" })
export type ActionType = typeof ActionType.Type

export const RISK_TOLERANCES = ["conservative", "moderate", "aggressive"] as const
export const RiskTolerance = literalUnion(RISK_TOLERANCES, { identifier: "RiskTolerance" })
export type RiskTolerance = typeof RiskTolerance.Type

export const COORDINATION_MODES = ["parallel", "sequential", "hierarchical", "consensus"] as const
export const CoordinationMode = literalUnion(COORDINATION_MODES, { identifier: "RiskCoordinationMode" })
export type CoordinationMode = typeof CoordinationMode.Type

export const RISK_ASSESSMENT_LEVELS = ["low", "medium", "high", "critical"] as const
export const RiskAssessmentLevel = literalUnion(RISK_ASSESSMENT_LEVELS, { identifier: "RiskAssessmentLevel" })
export type RiskLevel = typeof RiskAssessmentLevel.Type

export const RISK_DECISIONS = ["approve", "review", "deny"] as const
export const RiskDecision = literalUnion(RISK_DECISIONS, { identifier: "RiskDecision" })
export type RiskDecision = typeof RiskDecision.Type

/** Amounts are recorded with the assessment (they do not move the score; docs/risk.md). */
const Amount = Schema.Number.pipe(Schema.finite(), Schema.nonNegative(), Schema.lessThanOrEqualTo(1e15))

const contextFields = {
  action_type: ActionType,
  amount: Schema.optionalWith(Amount, { exact: true }),
  counterparty_id: Schema.optionalWith(Identifier, { exact: true })
}

/** The context as requested: `risk_tolerance` defaults to moderate. */
export const RiskContextRequest = Schema.Struct({
  ...contextFields,
  risk_tolerance: Schema.optionalWith(RiskTolerance, { default: () => "moderate" as const, exact: true })
}).annotations({ identifier: "RiskContextRequest" })

/** The context as recorded (tolerance filled in). */
export const RiskContext = Schema.Struct({ ...contextFields, risk_tolerance: RiskTolerance }).annotations({
  identifier: "RiskContext"
})
export type RiskContext = typeof RiskContext.Type

export const TeamRiskContextRequest = Schema.Struct({
  ...RiskContextRequest.fields,
  coordination_mode: CoordinationMode
}).annotations({ identifier: "TeamRiskContextRequest" })

export const TeamRiskContext = Schema.Struct({
  ...RiskContext.fields,
  coordination_mode: CoordinationMode
}).annotations({ identifier: "TeamRiskContext" })
export type TeamRiskContext = typeof TeamRiskContext.Type

export const TEAM_RISK_MIN_AGENTS = 2
export const TEAM_RISK_MAX_AGENTS = 50

export const RiskAssessRequest = Schema.Struct({ agent_id: AgentId, context: RiskContextRequest }).annotations({
  identifier: "RiskAssessRequest"
})

export const TeamRiskAssessRequest = Schema.Struct({
  agent_ids: Schema.Array(AgentId).pipe(
    Schema.minItems(TEAM_RISK_MIN_AGENTS),
    Schema.maxItems(TEAM_RISK_MAX_AGENTS),
    Schema.filter((ids) => new Set(ids).size === ids.length || "must not repeat an agent id")
  ),
  context: TeamRiskContextRequest
}).annotations({ identifier: "TeamRiskAssessRequest" })

const Unit = Schema.Number.pipe(Schema.between(0, 1))

const SeverityTally = Schema.Struct({
  count: Schema.NonNegativeInt,
  decayed: Schema.Number.pipe(Schema.nonNegative()).annotations({
    description: "Σ 2^(−age_days ÷ half_life_days) over these violations, at assessed_at"
  })
})

export const RecencyInputs = Schema.Struct({
  half_life_days: Schema.Number,
  window_days: Schema.Number,
  by_severity: Schema.Struct({
    critical: SeverityTally,
    high: SeverityTally,
    medium: SeverityTally,
    low: SeverityTally
  })
}).annotations({ identifier: "RiskRecencyInputs" })
export type RecencyInputs = typeof RecencyInputs.Type

/** The agent's published reputation the context and confidence terms were read from. */
export const RiskReputationInputs = Schema.Struct({
  score: Score,
  grade: Grade,
  confidence: Confidence,
  components: Schema.Record({ key: ComponentKey, value: Score }),
  computed_at: DateTimeString,
  computed_over: ComputedOver
}).annotations({ identifier: "RiskReputationInputs" })

export const RiskInputs = Schema.Struct({
  reputation: RiskReputationInputs,
  recency: RecencyInputs
}).annotations({ identifier: "RiskInputs" })
export type RiskInputs = typeof RiskInputs.Type

export const RiskComponents = Schema.Struct({
  context: Unit,
  recency: Unit,
  confidence_penalty: Unit
}).annotations({ identifier: "RiskComponents" })
export type RiskComponents = typeof RiskComponents.Type

export const RiskResult = Schema.Struct({
  risk_score: Unit,
  risk_level: RiskAssessmentLevel,
  decision: RiskDecision,
  components: RiskComponents
}).annotations({ identifier: "RiskResult" })
export type RiskResult = typeof RiskResult.Type

const signatureFields = {
  key_id: Schema.String.annotations({ description: "The signing key, as listed at GET /v1/keys" }),
  signature: Ed25519SignatureBase64.annotations({
    description: 'Ed25519 over "candor/v1/risk-assessment\\0" ‖ JCS(the record without signature)'
  })
}

export const RiskAssessment = Schema.Struct({
  assessment_id: Schema.String.pipe(Schema.startsWith(RISK_ASSESSMENT_ID_PREFIX)),
  agent_id: AgentId,
  context: RiskContext,
  inputs: RiskInputs,
  result: RiskResult,
  assessed_at: DateTimeString,
  ...signatureFields
}).annotations({ identifier: "RiskAssessment" })
export type RiskAssessment = typeof RiskAssessment.Type

export const TeamRiskMember = Schema.Struct({
  agent_id: AgentId,
  inputs: RiskInputs,
  result: RiskResult
}).annotations({ identifier: "TeamRiskMember" })

export const CIRCUIT_BREAKERS = ["member_score_below_200", "member_denied"] as const

export const TeamRiskResult = Schema.Struct({
  risk_score: Unit,
  risk_level: RiskAssessmentLevel,
  decision: RiskDecision,
  components: Schema.Struct({
    mean_member_risk: Unit,
    max_member_risk: Unit,
    weakest_weight: Unit
  }),
  circuit_breakers: Schema.Array(literalUnion(CIRCUIT_BREAKERS)).annotations({ description: "Those that tripped" })
}).annotations({ identifier: "TeamRiskResult" })
export type TeamRiskResult = typeof TeamRiskResult.Type

export const TeamRiskAssessment = Schema.Struct({
  assessment_id: Schema.String.pipe(Schema.startsWith(TEAM_RISK_ASSESSMENT_ID_PREFIX)),
  agent_ids: Schema.Array(AgentId),
  context: TeamRiskContext,
  members: Schema.Array(TeamRiskMember).annotations({ description: "In agent_ids order" }),
  result: TeamRiskResult,
  assessed_at: DateTimeString,
  ...signatureFields
}).annotations({ identifier: "TeamRiskAssessment" })
export type TeamRiskAssessment = typeof TeamRiskAssessment.Type

export const RiskHistory = Schema.Struct({
  agent_id: AgentId,
  assessments: Schema.Array(RiskAssessment).annotations({ description: "Newest first" }),
  total: Schema.NonNegativeInt,
  limit: Schema.Int,
  offset: Schema.Int
}).annotations({ identifier: "RiskHistory" })

export const RiskProof = Schema.Struct({
  assessment_id: Schema.String,
  kind: literalUnion(["individual", "team"]),
  status: Schema.Literal("verified").annotations({
    description: "The service checked the signature and recomputed the result before answering"
  }),
  record: Schema.Union(RiskAssessment, TeamRiskAssessment),
  verification: Schema.Struct({
    algorithm: Schema.Literal("Ed25519"),
    key_id: Schema.String,
    public_key: Schema.String.annotations({ description: "Base64 of the raw 32-byte key, as at GET /v1/keys" }),
    keys_url: Schema.Literal("/v1/keys"),
    signed_message: Schema.String,
    recompute: Schema.String
  })
}).annotations({ identifier: "RiskProof" })
export type RiskProof = typeof RiskProof.Type
