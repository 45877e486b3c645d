/**
 * The card update (service-role key only) and the conscience values PUT (whoever may write the
 * agent), through the Cards service (services/Cards.ts). A gateway that cannot be told makes a 503
 * (the change is stored: the client sends it again).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { AccessControl } from "../../../adapters/auth/AccessControl.js"
import { actorOf, CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { Cards } from "../../../services/Cards.js"
import { CandorApi } from "../Api.js"
import { writeAgent } from "./AgentAccess.js"
import { gatewaysUnreachable } from "./Access.js"

export const CardsLive = HttpApiBuilder.group(CandorApi, "cards", (handlers) =>
  Effect.map(Cards, (cards) =>
    handlers
      .handle("updateCard", ({ path, payload }) =>
        Effect.gen(function* () {
          const principal = yield* CurrentPrincipal
          yield* (yield* AccessControl).serviceRole(principal)
          return yield* cards.updateCard(
            path.agent_id,
            payload.card_json,
            payload.conscience_values,
            actorOf(principal)
          )
        }).pipe(Effect.catchTag("BusError", gatewaysUnreachable))
      )
      .handle("putConscienceValues", ({ path, payload }) =>
        Effect.gen(function* () {
          yield* writeAgent(path.agent_id)
          const actor = actorOf(yield* CurrentPrincipal)
          return yield* cards.putConscienceValues(path.agent_id, payload.conscience_values, actor)
        }).pipe(Effect.catchTag("BusError", gatewaysUnreachable))
      )
  )
)
