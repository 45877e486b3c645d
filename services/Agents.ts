/**
 * Agents: their summaries as the API lists them, and their display name, set with an
 * `agent.display_name` entry on the agent's governance log in one transaction. Which agents the
 * caller may see or name is the caller's to check; the actor it names is the one recorded.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { AgentNameRepo } from "../adapters/store/AgentNameRepo.js"
import { type AgentSummary, AgentQueries } from "../adapters/store/AgentQueries.js"
import { GovernanceLog } from "../adapters/store/GovernanceLog.js"
import { StoreError } from "../adapters/store/Store.js"
import { transaction } from "../adapters/store/Transaction.js"
import { agentGovernanceLog } from "../core/Governance.js"

const listItem = (agent: AgentSummary) => ({
  ...agent,
  total_checkpoints:
    agent.checkpoint_counts.clear + agent.checkpoint_counts.review_needed + agent.checkpoint_counts.boundary_violation
})

export const make = Effect.gen(function* () {
  const queries = yield* AgentQueries
  const names = yield* AgentNameRepo
  const governance = yield* GovernanceLog
  const sql = yield* SqlClient.SqlClient

  /** The agents' rows of the list. */
  const list = (agentIds: ReadonlyArray<string>) =>
    Effect.map(queries.agentSummaries(agentIds), (summaries) => summaries.map(listItem))

  /** The agent's row of the list (the caller has checked that it may see the agent). */
  const get = (agentId: string) =>
    Effect.flatMap(queries.agentSummaries([agentId]), (summaries) =>
      summaries[0] === undefined
        ? Effect.fail(new StoreError({ operation: "agentSummaries", cause: `no summary of ${agentId}` }))
        : Effect.succeed(listItem(summaries[0]))
    )

  /** Sets the agent's display name; its row after. */
  const rename = (agentId: string, displayName: string | null, actor: string) =>
    Effect.gen(function* () {
      yield* transaction(
        sql,
        Effect.gen(function* () {
          const before = yield* names.lock(agentId)
          yield* names.set(agentId, displayName)
          yield* governance.append(agentGovernanceLog(agentId), {
            action: "agent.display_name",
            actor,
            previous_state: { display_name: before },
            new_state: { display_name: displayName }
          })
        })
      ).pipe(Effect.catchTag("SqlError", (cause) => Effect.fail(new StoreError({ operation: "renameAgent", cause }))))
      return yield* get(agentId)
    })

  return { list, get, rename }
})

export class Agents extends Context.Tag("candor/services/Agents")<Agents, Effect.Effect.Success<typeof make>>() {}

export const layer = Layer.effect(Agents, make)
