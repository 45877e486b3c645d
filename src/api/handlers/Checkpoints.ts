/** An agent's checkpoints: the paged, filtered list (AgentQueries: flat first pages, index-only deep offsets) and one by id. */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { NotFound } from "../../../adapters/http/ApiErrors.js"
import { AgentQueries } from "../../../adapters/store/AgentQueries.js"
import { Store } from "../../../adapters/store/Store.js"
import { CandorApi } from "../Api.js"
import { readAgent } from "./AgentAccess.js"
import { internal } from "./Access.js"

export const CheckpointsLive = HttpApiBuilder.group(CandorApi, "checkpoints", (handlers) =>
  handlers
    .handle("listCheckpoints", ({ path, urlParams }) =>
      Effect.gen(function* () {
        yield* readAgent(path.agent_id)
        const page = yield* (yield* AgentQueries).checkpointPage({
          agentId: path.agent_id,
          limit: urlParams.limit,
          offset: urlParams.offset,
          verdict: urlParams.verdict,
          sessionId: urlParams.session_id
        })
        return { checkpoints: page.items, total: page.total, limit: urlParams.limit, offset: urlParams.offset }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("getCheckpoint", ({ path }) =>
      Effect.gen(function* () {
        yield* readAgent(path.agent_id)
        const checkpoint = yield* (yield* Store).getCheckpoint(path.checkpoint_id)
        // A checkpoint of another agent is not found under this one, whoever may see it.
        if (checkpoint === undefined || checkpoint.agent_id !== path.agent_id) {
          return yield* new NotFound({ error: `checkpoint ${path.checkpoint_id} not found for agent ${path.agent_id}` })
        }
        return checkpoint
      }).pipe(Effect.catchTag("StoreError", internal))
    )
)
