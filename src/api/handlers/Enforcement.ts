/**
 * An agent's enforcement mode and failure policy: whoever may read the agent reads them, whoever may
 * write it changes them, through the Enforcement service (services/Enforcement.ts). A gateway that
 * cannot be told makes a 503 (the change is stored: the client sends it again).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { actorOf, CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { Enforcement } from "../../../services/Enforcement.js"
import { CandorApi } from "../Api.js"
import { readAgent, writeAgent } from "./AgentAccess.js"
import { gatewaysUnreachable } from "./Access.js"

/** The caller may change the agent: the actor recorded. */
const writer = (agentId: string) => Effect.zipRight(writeAgent(agentId), Effect.map(CurrentPrincipal, actorOf))

export const EnforcementLive = HttpApiBuilder.group(CandorApi, "enforcement", (handlers) =>
  Effect.map(Enforcement, (enforcement) =>
    handlers
      .handle("getEnforcement", ({ path }) =>
        Effect.zipRight(readAgent(path.agent_id), enforcement.mode(path.agent_id)).pipe(
          Effect.map((mode) => ({ agent_id: path.agent_id, enforcement_mode: mode }))
        )
      )
      .handle("putEnforcement", ({ path, payload }) =>
        writer(path.agent_id).pipe(
          Effect.flatMap((actor) => enforcement.setMode(path.agent_id, payload.mode, actor)),
          Effect.map((mode) => ({ agent_id: path.agent_id, enforcement_mode: mode })),
          Effect.catchTag("BusError", gatewaysUnreachable)
        )
      )
      .handle("putFailurePolicy", ({ path, payload }) =>
        writer(path.agent_id).pipe(
          Effect.flatMap((actor) => enforcement.setFailurePolicy(path.agent_id, payload.failure_policy, actor)),
          Effect.map((policy) => ({ agent_id: path.agent_id, failure_policy: policy })),
          Effect.catchTag("BusError", gatewaysUnreachable)
        )
      )
  )
)
