/**
 * An agent's enforcement mode and failure policy: each stored in its settings with its governance
 * entry (`enforcement.mode`, `enforcement.failure_policy`) in one transaction, then pushed to the
 * gateways that enforce it before the API answers.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import { actorOf, CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { AgentState } from "../../../adapters/bus/AgentState.js"
import { GovernanceLog } from "../../../adapters/store/GovernanceLog.js"
import { type AgentSettingsRecord, Store, StoreError } from "../../../adapters/store/Store.js"
import { transaction } from "../../../adapters/store/Transaction.js"
import { agentGovernanceLog } from "../../../core/Governance.js"
import type { GovernanceAction } from "../../../core/schema/Governance.js"
import { CandorApi } from "../Api.js"
import { readAgent, writeAgent } from "./AgentAccess.js"
import { gatewaysUnreachable, internal } from "./Access.js"

/**
 * Sets one of the agent's settings with its governance entry (`action`, the setting before and
 * after), the row locked so concurrent writers are ordered; the settings after.
 */
const changeSetting = <K extends "mode" | "failure_policy">(
  agentId: string,
  key: K,
  value: AgentSettingsRecord[K],
  action: GovernanceAction
) =>
  Effect.gen(function* () {
    const actor = actorOf(yield* CurrentPrincipal)
    const store = yield* Store
    const governance = yield* GovernanceLog
    return yield* transaction(
      yield* SqlClient.SqlClient,
      Effect.gen(function* () {
        const before = (yield* store.lockAgentSettings(agentId)).settings
        const after = yield* store.putAgentSettings(agentId, { [key]: value })
        yield* governance.append(agentGovernanceLog(agentId), {
          action,
          actor,
          previous_state: { [key]: before[key] },
          new_state: { [key]: after[key] }
        })
        return after
      })
    ).pipe(Effect.catchTag("SqlError", (cause) => Effect.fail(new StoreError({ operation: action, cause }))))
  })

export const EnforcementLive = HttpApiBuilder.group(CandorApi, "enforcement", (handlers) =>
  handlers
    .handle("getEnforcement", ({ path }) =>
      Effect.gen(function* () {
        yield* readAgent(path.agent_id)
        const settings = yield* (yield* Store).agentSettings(path.agent_id)
        return { agent_id: path.agent_id, enforcement_mode: settings.mode }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("putEnforcement", ({ path, payload }) =>
      Effect.gen(function* () {
        yield* writeAgent(path.agent_id)
        const settings = yield* changeSetting(path.agent_id, "mode", payload.mode, "enforcement.mode")
        yield* (yield* AgentState).update(path.agent_id, { mode: settings.mode })
        return { agent_id: path.agent_id, enforcement_mode: settings.mode }
      }).pipe(Effect.catchTag("StoreError", internal), Effect.catchTag("BusError", gatewaysUnreachable))
    )
    .handle("putFailurePolicy", ({ path, payload }) =>
      Effect.gen(function* () {
        yield* writeAgent(path.agent_id)
        const settings = yield* changeSetting(
          path.agent_id,
          "failure_policy",
          payload.failure_policy,
          "enforcement.failure_policy"
        )
        yield* (yield* AgentState).update(path.agent_id, { failurePolicy: settings.failure_policy })
        return { agent_id: path.agent_id, failure_policy: settings.failure_policy }
      }).pipe(Effect.catchTag("StoreError", internal), Effect.catchTag("BusError", gatewaysUnreachable))
    )
)
