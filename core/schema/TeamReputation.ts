/**
 * Team reputation as published (docs/team-reputation.md): the score and its components
 * (`GET /v1/teams/{team_id}/reputation`), the recorded assessments it is computed from (so anyone in
 * the organization can recompute it with core/TeamReputation.ts) and the organization's monthly
 * quota of computations.
 */
import { Schema } from "effect"
import { RISK_LEVELS, TEAM_COMPONENT_KEYS } from "../TeamReputation.js"
import { AgentStatus } from "./Agent.js"
import { AgentId, DateTimeString, Hex32, Identifier } from "./Ids.js"
import { literalUnion } from "./Literals.js"
import { Confidence, Grade, Score, scoredComponent } from "./Reputation.js"
import { TeamId } from "./Team.js"

export const TEAM_ASSESSMENT_ID_PREFIX = "tas-"

const Coherence = Schema.NullOr(Schema.Number.pipe(Schema.between(0, 1)))

export const TeamComponentKey = literalUnion(TEAM_COMPONENT_KEYS, { identifier: "TeamReputationComponentKey" })
export const RiskLevel = literalUnion(RISK_LEVELS, { identifier: "TeamRiskLevel" })

export const TeamReputationComponent = scoredComponent(
  TeamComponentKey,
  "What the component was computed from"
).annotations({ identifier: "TeamReputationComponent" })

export const TeamReputation = Schema.Struct({
  team_id: TeamId,
  org_id: Identifier,
  score: Score,
  grade: Grade,
  tier: Schema.String.annotations({ description: "The grade's name: Exemplary … Critical, or Not Rated" }),
  is_eligible: Schema.Boolean.annotations({ description: "From 10 assessments" }),
  total_assessments: Schema.NonNegativeInt,
  last_assessed: Schema.NullOr(DateTimeString),
  member_count: Schema.NonNegativeInt.annotations({ description: "Members at computed_at" }),
  confidence: Confidence,
  components: Schema.Array(TeamReputationComponent),
  computed_at: DateTimeString,
  trend_30d: Schema.NullOr(Schema.Int).annotations({
    description: "score − the newest score computed at or before computed_at − 30 days; null without one"
  })
}).annotations({ identifier: "TeamReputation" })
export type TeamReputation = typeof TeamReputation.Type

export const TeamReputationRecomputed = Schema.Struct({
  ...TeamReputation.fields,
  computed: Schema.Boolean.annotations({
    description: "false: the inputs hashed as at the previous computation; nothing was recorded or counted"
  })
}).annotations({ identifier: "TeamReputationRecomputed" })

export const TeamMemberScore = Schema.Struct({
  agent_id: AgentId,
  score: Score,
  eligible: Schema.Boolean,
  status: AgentStatus
}).annotations({ identifier: "TeamMemberScore" })

export const TeamAssessment = Schema.Struct({
  assessment_id: Schema.String.annotations({ description: "`tas-` + a UUID" }),
  team_id: TeamId,
  org_id: Identifier,
  assessed_at: DateTimeString,
  member_coherence: Coherence,
  card_coherence: Coherence,
  risk_level: RiskLevel,
  member_scores: Schema.Array(TeamMemberScore).annotations({ description: "By agent id" }),
  inputs_hash: Hex32.annotations({ description: "SHA-256 of the JCS text of the inputs" }),
  source: Schema.String.annotations({ description: "`computation`: recorded by a team reputation computation" })
}).annotations({ identifier: "TeamAssessment" })
export type TeamAssessment = typeof TeamAssessment.Type

export const TeamAssessmentList = Schema.Struct({
  team_id: TeamId,
  assessments: Schema.Array(TeamAssessment).annotations({ description: "Oldest first (the order core reads them in)" }),
  total: Schema.NonNegativeInt,
  limit: Schema.Int,
  offset: Schema.NonNegativeInt
}).annotations({ identifier: "TeamAssessmentList" })

export const TeamReputationQuota = Schema.Struct({
  org_id: Identifier,
  period: Schema.String.annotations({ description: "The calendar month, UTC: YYYY-MM" }),
  plan_id: Identifier,
  included: Schema.NullOr(Schema.NonNegativeInt).annotations({ description: "null: unlimited" }),
  used: Schema.NonNegativeInt,
  overage: Schema.NonNegativeInt.annotations({ description: "Computations beyond the included ones" }),
  overage_cost: Schema.NonNegative.annotations({ description: "US dollars" }),
  unlimited: Schema.Boolean
}).annotations({ identifier: "TeamReputationQuota" })
export type TeamReputationQuota = typeof TeamReputationQuota.Type
