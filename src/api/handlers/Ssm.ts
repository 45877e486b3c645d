/**
 * GET /v1/ssm/{agent_id}: the self-similarity matrix of the agent's newest traces, through the
 * SelfSimilarity service (services/SelfSimilarity.ts), to whoever may read the agent.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { SelfSimilarity } from "../../../services/SelfSimilarity.js"
import { CandorApi } from "../Api.js"
import { readAgent } from "./AgentAccess.js"

export const SsmLive = HttpApiBuilder.group(CandorApi, "ssm", (handlers) =>
  Effect.map(SelfSimilarity, (ssm) =>
    handlers.handle("getSsm", ({ path }) => Effect.zipRight(readAgent(path.agent_id), ssm.matrix(path.agent_id)))
  )
)
