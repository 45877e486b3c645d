/** An agent's enforcement mode: stored in its settings, pushed to the gateways that enforce it. */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { AgentState } from "../../../adapters/bus/AgentState.js"
import { Store } from "../../../adapters/store/Store.js"
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
        const settings = yield* (yield* Store).putAgentSettings(path.agent_id, { mode: payload.mode })
        yield* (yield* AgentState).update(path.agent_id, { mode: settings.mode })
        return { agent_id: path.agent_id, enforcement_mode: settings.mode }
      }).pipe(Effect.catchTag("StoreError", internal), Effect.catchTag("BusError", gatewaysUnreachable))
    )
)
