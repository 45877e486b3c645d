/**
 * The risk routes (groups/Risk.ts), through the Risk service (services/Risk.ts): it assesses, signs
 * and stores; the handler says which agents the caller may read. The caller must be able to read
 * every agent named (an unknown agent, or one it may not read, is "agent … not found"); a stored
 * record is readable by whoever may read all its agents, and is otherwise "not found" like an
 * unknown id.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { Risk } from "../../../services/Risk.js"
import { CandorApi } from "../Api.js"
import { readAgent } from "./AgentAccess.js"

/** Whether the caller may read the agent (one it may not is no refusal here: the record is then "not found"). */
const readable = (agentId: string) =>
  readAgent(agentId).pipe(
    Effect.as(true),
    Effect.catchTag("NotFound", () => Effect.succeed(false))
  )

export const RiskLive = HttpApiBuilder.group(CandorApi, "risk", (handlers) =>
  Effect.map(Risk, (risk) =>
    handlers
      .handle("assessRisk", ({ payload }) => risk.assess(payload.agent_id, payload.context, readAgent))
      .handle("assessTeamRisk", ({ payload }) => risk.assessTeam(payload.agent_ids, payload.context, readAgent))
      .handle("getRiskAssessment", ({ path }) => risk.get(path.assessment_id, readable))
      .handle("getTeamRiskAssessment", ({ path }) => risk.getTeam(path.assessment_id, readable))
      .handle("getRiskHistory", ({ path, urlParams }) => risk.history(path.agent_id, urlParams, readAgent))
      .handle("getRiskProof", ({ path }) => risk.proof(path.assessment_id, readable))
  )
)
