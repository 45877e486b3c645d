/**
 * The card update (service-role key only) and the conscience values PUT. Each stores the new state
 * and its governance entry on the agent's log (`card.update`, `conscience.agent_values`) in one
 * transaction, then pushes the card and the resolved conscience values (core/ConscienceResolution.ts:
 * the agent's values add to the defaults and its organization's, they no longer replace the
 * defaults) to the gateways and workers through `AgentState`.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import { AccessControl } from "../../../adapters/auth/AccessControl.js"
import { actorOf, CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { AgentState } from "../../../adapters/bus/AgentState.js"
import { BadRequest } from "../../../adapters/http/ApiErrors.js"
import { GovernanceLog } from "../../../adapters/store/GovernanceLog.js"
import { resolvedConscienceOf } from "../../../adapters/store/OrgConscienceRepo.js"
import { Store, StoreError } from "../../../adapters/store/Store.js"
import { transaction } from "../../../adapters/store/Transaction.js"
import { cardHash } from "../../../core/Commitments.js"
import { agentGovernanceLog } from "../../../core/Governance.js"
import { CandorApi } from "../Api.js"
import { writeAgent } from "./AgentAccess.js"
import { gatewaysUnreachable, internal } from "./Access.js"

export const CardsLive = HttpApiBuilder.group(CandorApi, "cards", (handlers) =>
  handlers
    .handle("updateCard", ({ path, payload }) =>
      Effect.gen(function* () {
        const principal = yield* CurrentPrincipal
        yield* (yield* AccessControl).serviceRole(principal)
        const card = payload.card_json
        if (card.agent_id !== path.agent_id) {
          return yield* new BadRequest({
            error: `card_json.agent_id: must be the agent of the path (${path.agent_id}), got ${card.agent_id}`
          })
        }
        const store = yield* Store
        const governance = yield* GovernanceLog
        const sql = yield* SqlClient.SqlClient
        const resolved = yield* transaction(
          sql,
          Effect.gen(function* () {
            const previousCard = yield* store.activeCard(path.agent_id)
            const previousValues = yield* resolvedConscienceOf(store, path.agent_id)
            const version = yield* store.putCard(path.agent_id, card)
            yield* store.putConscienceValues(path.agent_id, payload.conscience_values)
            const resolved = yield* resolvedConscienceOf(store, path.agent_id)
            yield* governance.append(agentGovernanceLog(path.agent_id), {
              action: "card.update",
              actor: actorOf(principal),
              previous_state: {
                card_id: previousCard?.card.card_id ?? null,
                version: previousCard?.version ?? null,
                card_hash: cardHash(previousCard?.card),
                values_hash: previousValues.valuesHash
              },
              new_state: {
                card_id: card.card_id,
                version,
                card_hash: cardHash(card),
                values_hash: resolved.valuesHash
              },
              hashes: { card_hash: cardHash(card), values_hash: resolved.valuesHash }
            })
            return resolved
          })
        ).pipe(Effect.catchTag("SqlError", (cause) => Effect.fail(new StoreError({ operation: "updateCard", cause }))))
        yield* (yield* AgentState).update(path.agent_id, {
          card,
          cardId: card.card_id,
          conscienceValues: resolved.values
        })
        return { updated: true, card_id: card.card_id }
      }).pipe(Effect.catchTag("StoreError", internal), Effect.catchTag("BusError", gatewaysUnreachable))
    )
    .handle("putConscienceValues", ({ path, payload }) =>
      Effect.gen(function* () {
        yield* writeAgent(path.agent_id)
        const actor = actorOf(yield* CurrentPrincipal)
        const store = yield* Store
        const governance = yield* GovernanceLog
        const sql = yield* SqlClient.SqlClient
        const resolved = yield* transaction(
          sql,
          Effect.gen(function* () {
            const previous = yield* resolvedConscienceOf(store, path.agent_id)
            yield* store.putConscienceValues(path.agent_id, payload.conscience_values)
            const resolved = yield* resolvedConscienceOf(store, path.agent_id)
            yield* governance.append(agentGovernanceLog(path.agent_id), {
              action: "conscience.agent_values",
              actor,
              previous_state: { values_hash: previous.valuesHash },
              new_state: {
                values_hash: resolved.valuesHash,
                agent_values: payload.conscience_values.map((value) => value.name)
              },
              hashes: { values_hash: resolved.valuesHash }
            })
            return resolved
          })
        ).pipe(
          Effect.catchTag("SqlError", (cause) =>
            Effect.fail(new StoreError({ operation: "putConscienceValues", cause }))
          )
        )
        yield* (yield* AgentState).update(path.agent_id, { conscienceValues: resolved.values })
        return { agent_id: path.agent_id, conscience_values: payload.conscience_values, updated: true }
      }).pipe(Effect.catchTag("StoreError", internal), Effect.catchTag("BusError", gatewaysUnreachable))
    )
)
