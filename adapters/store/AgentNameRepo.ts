/**
 * An agent's display name (migrations/0029_agent_names.ts), set under the agent's row lock so that
 * the governance entry's `previous_state` is what the change replaced, never a concurrent change's
 * snapshot. The default name (the `x-candor-agent` label) is written by the commit path
 * (./SqlCommit.ts) with the agent's first checkpoint, or by a claim that names the label before any
 * traffic; both are read with the agents list (./AgentQueries.ts).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type StoreError, storeError } from "./Store.js"

export class AgentNameRepo extends Context.Tag("candor/adapters/store/AgentNameRepo")<
  AgentNameRepo,
  {
    /**
     * The agent's display name (null: none), holding its row lock until the caller's transaction
     * ends; the row is created for an agent named before its first request.
     */
    readonly lock: (agentId: string) => Effect.Effect<string | null, StoreError>
    /** Sets the display name; null removes it (the default name shows again). */
    readonly set: (agentId: string, displayName: string | null) => Effect.Effect<void, StoreError>
    /**
     * The agent's default name, when it has none yet: the label is part of the agent id's derivation,
     * so whoever names it (a claim, the commit path) names the same one.
     */
    readonly setDefault: (agentId: string, label: string) => Effect.Effect<void, StoreError>
  }
>() {}

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  return AgentNameRepo.of({
    lock: (agentId) =>
      Effect.gen(function* () {
        yield* sql`insert into agents (agent_id) values (${agentId}) on conflict do nothing`
        const [row] = yield* sql<{ display_name: string | null }>`
          select display_name from agents where agent_id = ${agentId} for update`
        return row?.display_name ?? null
      }).pipe(storeError("lockAgentName")),
    set: (agentId, displayName) =>
      sql`update agents set display_name = ${displayName} where agent_id = ${agentId}`.pipe(
        Effect.asVoid,
        storeError("setAgentName")
      ),
    setDefault: (agentId, label) =>
      sql`
        insert into agents (agent_id, default_name) values (${agentId}, ${label})
        on conflict (agent_id) do update set default_name = excluded.default_name
        where agents.default_name is null`.pipe(Effect.asVoid, storeError("setAgentDefaultName"))
  })
})

export const layer: Layer.Layer<AgentNameRepo, never, SqlClient.SqlClient> = Layer.effect(AgentNameRepo, make)
