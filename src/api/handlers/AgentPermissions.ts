/**
 * GET /v1/agents/{agent_id}/permissions: each action asked of `AccessControl` exactly as its own
 * route asks it, so the answer cannot drift from what the routes enforce. Writes and containment also
 * need a principal that may write at all (not an impersonation session, not a Member key).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { AccessControl, type AgentAction } from "../../../adapters/auth/AccessControl.js"
import { CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { CandorApi } from "../Api.js"
import { readAgent } from "./AgentAccess.js"

const ACTIONS = ["write", "pause", "resume", "kill", "reactivate"] as const satisfies ReadonlyArray<AgentAction>

export const AgentPermissionsLive = HttpApiBuilder.group(CandorApi, "agentPermissions", (handlers) =>
  handlers.handle("getAgentPermissions", ({ path }) =>
    Effect.gen(function* () {
      yield* readAgent(path.agent_id)
      const principal = yield* CurrentPrincipal
      const access = yield* AccessControl
      const writes = yield* Effect.isSuccess(access.write(principal))
      const allowed = (action: AgentAction) =>
        writes
          ? access
              .agent(principal, path.agent_id, action)
              .pipe(
                Effect.as(true),
                Effect.catchTags({ Forbidden: () => Effect.succeed(false), NotFound: () => Effect.succeed(false) })
              )
          : Effect.succeed(false)
      const [write, pause, resume, kill, reactivate] = yield* Effect.all(ACTIONS.map(allowed))
      const role =
        principal.kind === "service" ? "service" : kill ? "owner" : pause || write ? "admin" : ("member" as const)
      return {
        agent_id: path.agent_id,
        role,
        may: { read: true, write: write!, pause: pause!, resume: resume!, kill: kill!, reactivate: reactivate! }
      } as const
    })
  )
)
