/**
 * Risk assessments (docs/risk.md): assess one agent or a set of agents for a kind of action, read
 * the signed records back, an agent's history, and a record with how to check it. Every route is
 * for readers of the agents concerned (any role; an assessment records what was read, it changes
 * nothing); an agent or record the caller may not read is 404.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { BadRequest, Forbidden, InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import { AgentId, Identifier } from "../../../core/schema/Ids.js"
import {
  RiskAssessment,
  RiskAssessRequest,
  RiskHistory,
  RiskProof,
  TeamRiskAssessment,
  TeamRiskAssessRequest
} from "../../../core/schema/Risk.js"
import { IntParam } from "./Checkpoints.js"

export const RISK_HISTORY_LIMIT = { min: 1, max: 100, default: 20 } as const

const IdPath = Schema.Struct({ assessment_id: Identifier })

export const RiskHistoryParams = Schema.Struct({
  limit: Schema.optionalWith(IntParam(RISK_HISTORY_LIMIT.min, RISK_HISTORY_LIMIT.max), {
    default: () => RISK_HISTORY_LIMIT.default,
    exact: true
  }),
  offset: Schema.optionalWith(IntParam(0, Number.MAX_SAFE_INTEGER), { default: () => 0, exact: true })
})

export class RiskApi extends HttpApiGroup.make("risk")
  .add(HttpApiEndpoint.post("assessRisk", "/risk/assess").setPayload(RiskAssessRequest).addSuccess(RiskAssessment))
  .add(
    HttpApiEndpoint.post("assessTeamRisk", "/risk/assess/team")
      .setPayload(TeamRiskAssessRequest)
      .addSuccess(TeamRiskAssessment)
  )
  .add(
    HttpApiEndpoint.get("getRiskAssessment", "/risk/assessments/:assessment_id")
      .setPath(IdPath)
      .addSuccess(RiskAssessment)
  )
  .add(
    HttpApiEndpoint.get("getTeamRiskAssessment", "/risk/team-assessments/:assessment_id")
      .setPath(IdPath)
      .addSuccess(TeamRiskAssessment)
  )
  .add(
    HttpApiEndpoint.get("getRiskHistory", "/risk/history/:agent_id")
      .setPath(Schema.Struct({ agent_id: AgentId }))
      .setUrlParams(RiskHistoryParams)
      .addSuccess(RiskHistory)
  )
  .add(HttpApiEndpoint.get("getRiskProof", "/risk/proofs/:assessment_id").setPath(IdPath).addSuccess(RiskProof))
  .addError(BadRequest)
  .addError(Forbidden)
  .addError(NotFound)
  .addError(InternalError)
  .middleware(Authentication) {}
