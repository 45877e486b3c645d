/** GET /v1/agents: the agents `AccessControl` lets the caller see, summarised from the store. */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { AccessControl } from "../../../adapters/auth/AccessControl.js"
import { CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { AgentQueries } from "../../../adapters/store/AgentQueries.js"
import { CandorApi } from "../Api.js"
import { internal } from "./Access.js"

export const AgentsLive = HttpApiBuilder.group(CandorApi, "agents", (handlers) =>
  handlers.handle("listAgents", () =>
    Effect.gen(function* () {
      const principal = yield* CurrentPrincipal
      const ids = yield* (yield* AccessControl).visibleAgents(principal)
      const summaries = yield* (yield* AgentQueries).agentSummaries(ids)
      return {
        agents: summaries.map((agent) => ({
          ...agent,
          total_checkpoints:
            agent.checkpoint_counts.clear +
            agent.checkpoint_counts.review_needed +
            agent.checkpoint_counts.boundary_violation
        }))
      }
    }).pipe(Effect.catchTag("StoreError", internal))
  )
)
