/**
 * Team intelligence (docs/intelligence.md): the request and the answers of the fault-line,
 * forecast and policy-recommendation routes. Computed by core/FaultLines.ts, core/Forecast.ts and
 * core/PolicyRecommendation.ts.
 */
import { Schema } from "effect"
import { FAILURE_MODES } from "../Forecast.js"
import { FAULT_LINE_CLASSIFICATIONS, FAULT_LINE_SEVERITIES } from "../FaultLines.js"
import { AgentId, DateTimeString } from "./Ids.js"
import { literalUnion } from "./Literals.js"
import { Policy } from "./Policy.js"
import { TeamId } from "./Team.js"

const Share = Schema.Number.pipe(Schema.between(0, 1))

export const TeamIntelligenceRequest = Schema.Struct({ team_id: TeamId }).annotations({
  identifier: "TeamIntelligenceRequest"
})

export const FaultLine = Schema.Struct({
  value: Schema.String,
  classification: literalUnion(FAULT_LINE_CLASSIFICATIONS, { identifier: "FaultLineClassification" }),
  severity: literalUnion(FAULT_LINE_SEVERITIES, { identifier: "FaultLineSeverity" }),
  impact_score: Share.annotations({ description: "The share of member pairs the value divides" }),
  resolution_hint: Schema.String,
  team_requires: Schema.Boolean.annotations({
    description: "The team card declares the value or lists it in member_requirements.required_values"
  }),
  agents_declaring: Schema.Array(AgentId),
  agents_missing: Schema.Array(AgentId),
  agents_conflicting: Schema.Array(AgentId)
}).annotations({ identifier: "FaultLine" })

export const TeamFaultLines = Schema.Struct({
  team_id: TeamId,
  fault_lines: Schema.Array(FaultLine),
  member_count: Schema.NonNegativeInt,
  members_with_cards: Schema.NonNegativeInt,
  computed_at: DateTimeString
}).annotations({ identifier: "TeamFaultLines" })

export const FailureModeForecast = Schema.Struct({
  mode: literalUnion(FAILURE_MODES, { identifier: "FailureMode" }),
  probability: Share,
  evidence: Schema.Array(Schema.Struct({ input: Schema.String, weight: Schema.Number, value: Schema.Number }))
}).annotations({ identifier: "FailureModeForecast" })

/** What the model (ANALYSIS_MODEL) added to a forecast: a narrative beside the probabilities, never a change to them. */
export const ForecastModelContribution = Schema.Struct({
  narrative: Schema.String.annotations({ description: "The model's reading of the forecast, in its own words" })
}).annotations({ identifier: "ForecastModelContribution" })

export const TeamForecast = Schema.Struct({
  team_id: TeamId,
  method: Schema.Literal("deterministic", "model").annotations({
    description:
      "model: the model named by ANALYSIS_MODEL added `model_contribution`; deterministic: no model configured, or its call failed (`model_error`). The probabilities are the formulas' either way"
  }),
  model: Schema.NullOr(Schema.String).annotations({
    description: "The model asked (`<provider>:<model>`), also when it failed; null when none is configured"
  }),
  model_contribution: Schema.NullOr(ForecastModelContribution),
  model_error: Schema.NullOr(Schema.String).annotations({
    description: "Why the model's contribution is missing (timeout, HTTP status, unreadable answer); null otherwise"
  }),
  window_days: Schema.Int,
  failure_modes: Schema.Array(FailureModeForecast),
  inputs: Schema.Record({ key: Schema.String, value: Schema.Number }).annotations({
    description: "Every rate the formulas read (docs/intelligence.md)"
  }),
  member_count: Schema.NonNegativeInt,
  members_with_cards: Schema.NonNegativeInt,
  members_with_scores: Schema.NonNegativeInt,
  computed_at: DateTimeString
}).annotations({ identifier: "TeamForecast" })

export const PolicyReasoning = Schema.Struct({ rule: Schema.String, source: Schema.String }).annotations({
  identifier: "PolicyReasoning"
})

export const TeamPolicyRecommendation = Schema.Struct({
  team_id: TeamId,
  policy: Policy,
  reasoning: Schema.Array(PolicyReasoning),
  computed_at: DateTimeString
}).annotations({ identifier: "TeamPolicyRecommendation" })
