/**
 * The card update (service-role key only) and the conscience values PUT. Each stores the new state
 * in one transaction, then pushes it to the gateways through `AgentState` (the actors re-read the
 * store within their context TTL).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import { AccessControl } from "../../../adapters/auth/AccessControl.js"
import { CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { AgentState } from "../../../adapters/bus/AgentState.js"
import { BadRequest } from "../../../adapters/http/ApiErrors.js"
import { Store, StoreError } from "../../../adapters/store/Store.js"
import type { ConscienceValue } from "../../../core/schema/Conscience.js"
import { CandorApi } from "../Api.js"
import { writeAgent } from "./AgentAccess.js"
import { gatewaysUnreachable, internal } from "./Access.js"
import { transaction } from "../../../adapters/store/Transaction.js"

/** No values of its own: the gateway and the judge fall back to the defaults. */
const inForce = (values: ReadonlyArray<ConscienceValue>) => (values.length > 0 ? values : undefined)

export const CardsLive = HttpApiBuilder.group(CandorApi, "cards", (handlers) =>
  handlers
    .handle("updateCard", ({ path, payload }) =>
      Effect.gen(function* () {
        yield* (yield* AccessControl).serviceRole(yield* CurrentPrincipal)
        const card = payload.card_json
        if (card.agent_id !== path.agent_id) {
          return yield* new BadRequest({
            error: `card_json.agent_id: must be the agent of the path (${path.agent_id}), got ${card.agent_id}`
          })
        }
        const store = yield* Store
        const sql = yield* SqlClient.SqlClient
        yield* transaction(
          sql,
          Effect.zipRight(
            store.putCard(path.agent_id, card),
            store.putConscienceValues(path.agent_id, payload.conscience_values)
          )
        ).pipe(Effect.catchTag("SqlError", (cause) => Effect.fail(new StoreError({ operation: "updateCard", cause }))))
        yield* (yield* AgentState).update(path.agent_id, {
          card,
          cardId: card.card_id,
          conscienceValues: inForce(payload.conscience_values)
        })
        return { updated: true, card_id: card.card_id }
      }).pipe(Effect.catchTag("StoreError", internal), Effect.catchTag("BusError", gatewaysUnreachable))
    )
    .handle("putConscienceValues", ({ path, payload }) =>
      Effect.gen(function* () {
        yield* writeAgent(path.agent_id)
        yield* (yield* Store).putConscienceValues(path.agent_id, payload.conscience_values)
        yield* (yield* AgentState).update(path.agent_id, { conscienceValues: inForce(payload.conscience_values) })
        return { agent_id: path.agent_id, conscience_values: payload.conscience_values, updated: true }
      }).pipe(Effect.catchTag("StoreError", internal), Effect.catchTag("BusError", gatewaysUnreachable))
    )
)
