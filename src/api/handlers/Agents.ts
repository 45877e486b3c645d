/**
 * GET /v1/agents: the agents `AccessControl` lets the caller see, summarised from the store; GET
 * /v1/agents/{agent_id}: one of them; PATCH /v1/agents/{agent_id}: its display name, set with an
 * `agent.display_name` entry on its governance log in one transaction (Owner or Admin of its
 * organization, the claimer of a personal agent, the service-role key: the agent writes of
 * `writeAgent`). An unclaimed agent can be named by the service-role key only, which alone sees it.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import { AccessControl } from "../../../adapters/auth/AccessControl.js"
import { actorOf, CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { AgentNameRepo } from "../../../adapters/store/AgentNameRepo.js"
import { type AgentSummary, AgentQueries } from "../../../adapters/store/AgentQueries.js"
import { GovernanceLog } from "../../../adapters/store/GovernanceLog.js"
import { StoreError } from "../../../adapters/store/Store.js"
import { transaction } from "../../../adapters/store/Transaction.js"
import { agentGovernanceLog } from "../../../core/Governance.js"
import { CandorApi } from "../Api.js"
import { internal } from "./Access.js"
import { readAgent, writeAgent } from "./AgentAccess.js"

const listItem = (agent: AgentSummary) => ({
  ...agent,
  total_checkpoints:
    agent.checkpoint_counts.clear + agent.checkpoint_counts.review_needed + agent.checkpoint_counts.boundary_violation
})

/** The agent's row of the list; the caller has been let through `readAgent` or `writeAgent`. */
const agentItem = (agentId: string) =>
  Effect.flatMap(AgentQueries, (queries) => queries.agentSummaries([agentId])).pipe(
    Effect.flatMap((summaries) =>
      summaries[0] === undefined
        ? Effect.fail(new StoreError({ operation: "agentSummaries", cause: `no summary of ${agentId}` }))
        : Effect.succeed(listItem(summaries[0]))
    )
  )

export const AgentsLive = HttpApiBuilder.group(CandorApi, "agents", (handlers) =>
  handlers
    .handle("listAgents", () =>
      Effect.gen(function* () {
        const principal = yield* CurrentPrincipal
        const ids = yield* (yield* AccessControl).visibleAgents(principal)
        const summaries = yield* (yield* AgentQueries).agentSummaries(ids)
        return { agents: summaries.map(listItem) }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("getAgent", ({ path }) =>
      Effect.gen(function* () {
        yield* readAgent(path.agent_id)
        return yield* agentItem(path.agent_id)
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("updateAgent", ({ path, payload }) =>
      Effect.gen(function* () {
        yield* writeAgent(path.agent_id)
        const actor = actorOf(yield* CurrentPrincipal)
        const names = yield* AgentNameRepo
        const governance = yield* GovernanceLog
        yield* transaction(
          yield* SqlClient.SqlClient,
          Effect.gen(function* () {
            const before = yield* names.lock(path.agent_id)
            yield* names.set(path.agent_id, payload.display_name)
            yield* governance.append(agentGovernanceLog(path.agent_id), {
              action: "agent.display_name",
              actor,
              previous_state: { display_name: before },
              new_state: { display_name: payload.display_name }
            })
          })
        ).pipe(Effect.catchTag("SqlError", (cause) => Effect.fail(new StoreError({ operation: "renameAgent", cause }))))
        return yield* agentItem(path.agent_id)
      }).pipe(Effect.catchTag("StoreError", internal))
    )
)
