/** An agent's checkpoints: the paged, filtered list and one by id, through the Checkpoints service (services/Checkpoints.ts). */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { Checkpoints } from "../../../services/Checkpoints.js"
import { CandorApi } from "../Api.js"
import { readAgent } from "./AgentAccess.js"

export const CheckpointsLive = HttpApiBuilder.group(CandorApi, "checkpoints", (handlers) =>
  Effect.map(Checkpoints, (checkpoints) =>
    handlers
      .handle("listCheckpoints", ({ path, urlParams }) =>
        Effect.zipRight(
          readAgent(path.agent_id),
          checkpoints.list({
            agentId: path.agent_id,
            limit: urlParams.limit,
            offset: urlParams.offset,
            verdict: urlParams.verdict,
            sessionId: urlParams.session_id
          })
        )
      )
      .handle("getCheckpoint", ({ path }) =>
        Effect.zipRight(readAgent(path.agent_id), checkpoints.get(path.agent_id, path.checkpoint_id))
      )
  )
)
