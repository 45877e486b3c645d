/**
 * Re-verification's routes: whoever may write an agent re-verifies its records against its current
 * card and conscience values, through the Reverify service (services/Reverify.ts).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { actorOf, CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { Reverify } from "../../../services/Reverify.js"
import { CandorApi } from "../Api.js"
import { writeAgent } from "./AgentAccess.js"

export const ReverifyLive = HttpApiBuilder.group(CandorApi, "reverify", (handlers) =>
  Effect.map(Reverify, (reverify) =>
    handlers
      .handle("reverifyAip", ({ path, urlParams }) =>
        Effect.gen(function* () {
          yield* writeAgent(path.agent_id)
          const actor = actorOf(yield* CurrentPrincipal)
          return yield* reverify.aip(path.agent_id, urlParams.limit, urlParams.offset, actor)
        })
      )
      .handle("reverifyAap", ({ path, urlParams }) =>
        Effect.zipRight(writeAgent(path.agent_id), reverify.aap(path.agent_id, urlParams.limit, urlParams.offset))
      )
  )
)
