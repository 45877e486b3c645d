/**
 * An agent's Alignment Card and its own conscience values. Each change stores the new state and its
 * governance entry on the agent's log (`card.update`, `conscience.agent_values`) in one transaction,
 * then pushes the card and the resolved conscience values (core/ConscienceResolution.ts: the agent's
 * values add to the defaults and its organization's, they no longer replace the defaults) to the
 * gateways and workers through `AgentState` (a `BusError` then leaves the change stored). Who may
 * change them is the caller's to check; the actor it names is the one recorded.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { AgentState } from "../adapters/bus/AgentState.js"
import { GovernanceLog } from "../adapters/store/GovernanceLog.js"
import { resolvedConscienceOf } from "../adapters/store/OrgConscienceRepo.js"
import { Store, StoreError } from "../adapters/store/Store.js"
import { transaction } from "../adapters/store/Transaction.js"
import { cardHash } from "../core/Commitments.js"
import { agentGovernanceLog } from "../core/Governance.js"
import type { AlignmentCard } from "../core/schema/Card.js"
import type { ConscienceValue } from "../core/schema/Conscience.js"

/** A card that is not the agent's. */
export class CardInvalid extends Schema.TaggedError<CardInvalid>()(
  "CardInvalid",
  { error: Schema.String },
  HttpApiSchema.annotations({ status: 400 })
) {}

export const make = Effect.gen(function* () {
  const store = yield* Store
  const governance = yield* GovernanceLog
  const sql = yield* SqlClient.SqlClient
  const state = yield* AgentState

  /** Puts the agent's card and its conscience values, then tells the gateways and workers. */
  const updateCard = (
    agentId: string,
    card: AlignmentCard,
    conscienceValues: ReadonlyArray<ConscienceValue>,
    actor: string
  ) =>
    Effect.gen(function* () {
      if (card.agent_id !== agentId) {
        return yield* new CardInvalid({
          error: `card_json.agent_id: must be the agent of the path (${agentId}), got ${card.agent_id}`
        })
      }
      const resolved = yield* transaction(
        sql,
        Effect.gen(function* () {
          const previousCard = yield* store.activeCard(agentId)
          const previousValues = yield* resolvedConscienceOf(store, agentId)
          const version = yield* store.putCard(agentId, card)
          yield* store.putConscienceValues(agentId, conscienceValues)
          const resolved = yield* resolvedConscienceOf(store, agentId)
          yield* governance.append(agentGovernanceLog(agentId), {
            action: "card.update",
            actor,
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
      yield* state.update(agentId, { card, cardId: card.card_id, conscienceValues: resolved.values })
      return { updated: true, card_id: card.card_id }
    })

  /** Replaces the agent's own conscience values, then tells the gateways and workers. */
  const putConscienceValues = (agentId: string, values: ReadonlyArray<ConscienceValue>, actor: string) =>
    Effect.gen(function* () {
      const resolved = yield* transaction(
        sql,
        Effect.gen(function* () {
          const previous = yield* resolvedConscienceOf(store, agentId)
          yield* store.putConscienceValues(agentId, values)
          const resolved = yield* resolvedConscienceOf(store, agentId)
          yield* governance.append(agentGovernanceLog(agentId), {
            action: "conscience.agent_values",
            actor,
            previous_state: { values_hash: previous.valuesHash },
            new_state: {
              values_hash: resolved.valuesHash,
              agent_values: values.map((value) => value.name)
            },
            hashes: { values_hash: resolved.valuesHash }
          })
          return resolved
        })
      ).pipe(
        Effect.catchTag("SqlError", (cause) => Effect.fail(new StoreError({ operation: "putConscienceValues", cause })))
      )
      yield* state.update(agentId, { conscienceValues: resolved.values })
      return { agent_id: agentId, conscience_values: values, updated: true }
    })

  return { updateCard, putConscienceValues }
})

export class Cards extends Context.Tag("candor/services/Cards")<Cards, Effect.Effect.Success<typeof make>>() {}

export const layer = Layer.effect(Cards, make)
