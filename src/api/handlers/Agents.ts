/**
 * GET /v1/agents: the agents `AccessControl` lets the caller see, summarised from the store; GET
 * /v1/agents/{agent_id}: one of them; PATCH /v1/agents/{agent_id}: its display name (Owner or Admin
 * of its organization, the claimer of a personal agent, the service-role key: the agent writes of
 * `writeAgent`). An unclaimed agent can be named by the service-role key only, which alone sees it.
 * The reads and the rename are the Agents service's (services/Agents.ts).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { AccessControl } from "../../../adapters/auth/AccessControl.js"
import { actorOf, CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { Agents } from "../../../services/Agents.js"
import { CandorApi } from "../Api.js"
import { readAgent, writeAgent } from "./AgentAccess.js"

export const AgentsLive = HttpApiBuilder.group(CandorApi, "agents", (handlers) =>
  Effect.map(Agents, (agents) =>
    handlers
      .handle("listAgents", () =>
        Effect.gen(function* () {
          const principal = yield* CurrentPrincipal
          const ids = yield* (yield* AccessControl).visibleAgents(principal)
          return { agents: yield* agents.list(ids) }
        })
      )
      .handle("getAgent", ({ path }) => Effect.zipRight(readAgent(path.agent_id), agents.get(path.agent_id)))
      .handle("updateAgent", ({ path, payload }) =>
        Effect.gen(function* () {
          yield* writeAgent(path.agent_id)
          const actor = actorOf(yield* CurrentPrincipal)
          return yield* agents.rename(path.agent_id, payload.display_name, actor)
        })
      )
  )
)
