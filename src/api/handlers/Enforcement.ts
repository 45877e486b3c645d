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
import { Store, StoreError } from "../../../adapters/store/Store.js"
import { transaction } from "../../../adapters/store/Transaction.js"
import { agentGovernanceLog } from "../../../core/Governance.js"
import { CandorApi } from "../Api.js"
import { readAgent, writeAgent } from "./AgentAccess.js"
import { gatewaysUnreachable, internal } from "./Access.js"

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
        const actor = actorOf(yield* CurrentPrincipal)
        const store = yield* Store
        const governance = yield* GovernanceLog
        const settings = yield* transaction(
          yield* SqlClient.SqlClient,
          Effect.gen(function* () {
            const before = (yield* store.lockAgentSettings(path.agent_id)).settings
            const after = yield* store.putAgentSettings(path.agent_id, { mode: payload.mode })
            yield* governance.append(agentGovernanceLog(path.agent_id), {
              action: "enforcement.mode",
              actor,
              previous_state: { mode: before.mode },
              new_state: { mode: after.mode }
            })
            return after
          })
        ).pipe(
          Effect.catchTag("SqlError", (cause) => Effect.fail(new StoreError({ operation: "putEnforcement", cause })))
        )
        yield* (yield* AgentState).update(path.agent_id, { mode: settings.mode })
        return { agent_id: path.agent_id, enforcement_mode: settings.mode }
      }).pipe(Effect.catchTag("StoreError", internal), Effect.catchTag("BusError", gatewaysUnreachable))
    )
    .handle("putFailurePolicy", ({ path, payload }) =>
      Effect.gen(function* () {
        yield* writeAgent(path.agent_id)
        const actor = actorOf(yield* CurrentPrincipal)
        const store = yield* Store
        const governance = yield* GovernanceLog
        const settings = yield* transaction(
          yield* SqlClient.SqlClient,
          Effect.gen(function* () {
            const before = (yield* store.lockAgentSettings(path.agent_id)).settings
            const after = yield* store.putAgentSettings(path.agent_id, { failure_policy: payload.failure_policy })
            yield* governance.append(agentGovernanceLog(path.agent_id), {
              action: "enforcement.failure_policy",
              actor,
              previous_state: { failure_policy: before.failure_policy },
              new_state: { failure_policy: after.failure_policy }
            })
            return after
          })
        ).pipe(
          Effect.catchTag("SqlError", (cause) => Effect.fail(new StoreError({ operation: "putFailurePolicy", cause })))
        )
        yield* (yield* AgentState).update(path.agent_id, { failurePolicy: settings.failure_policy })
        return { agent_id: path.agent_id, failure_policy: settings.failure_policy }
      }).pipe(Effect.catchTag("StoreError", internal), Effect.catchTag("BusError", gatewaysUnreachable))
    )
)
