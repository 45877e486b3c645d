/**
 * The card update (service-role key only) and an agent's conscience values (docs/api.md,
 * "Agent data"). Both store a new state and push it to the gateways (AgentState).
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { BadRequest, Forbidden, InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import { AlignmentCard } from "../../../core/schema/Card.js"
import { ConscienceValue } from "../../../core/schema/Conscience.js"
import { AgentId, CardId } from "../../../core/schema/Ids.js"
import { CardInvalid } from "../../../services/Cards.js"

const AgentPath = Schema.Struct({ agent_id: AgentId })

/**
 * `card_json` is the Alignment Card document (its `agent_id` must be the path's); members of the
 * card record besides these two (`card_id`, `is_active`, `issued_at`, …) are ignored: they are
 * derived from the card.
 */
export const CardUpdate = Schema.Struct({
  card_json: AlignmentCard,
  conscience_values: Schema.Array(ConscienceValue)
}).annotations({ identifier: "CardUpdate", description: "A new Alignment Card and the agent's conscience values" })

export const CardUpdated = Schema.Struct({
  updated: Schema.Boolean,
  card_id: CardId
}).annotations({ identifier: "CardUpdated" })

export const ConscienceValuesUpdate = Schema.Struct({
  conscience_values: Schema.Array(ConscienceValue).annotations({ description: "Empty: back to the defaults" })
}).annotations({ identifier: "ConscienceValuesUpdate" })

export const ConscienceValuesUpdated = Schema.Struct({
  agent_id: AgentId,
  conscience_values: Schema.Array(ConscienceValue),
  updated: Schema.Boolean
}).annotations({ identifier: "ConscienceValuesUpdated" })

export class CardsApi extends HttpApiGroup.make("cards")
  .add(
    HttpApiEndpoint.patch("updateCard", "/agents/:agent_id/card")
      .setPath(AgentPath)
      .setPayload(CardUpdate)
      .addSuccess(CardUpdated)
  )
  .add(
    HttpApiEndpoint.put("putConscienceValues", "/agents/:agent_id/conscience-values")
      .setPath(AgentPath)
      .setPayload(ConscienceValuesUpdate)
      .addSuccess(ConscienceValuesUpdated)
  )
  .addError(BadRequest)
  .addError(Forbidden)
  .addError(NotFound)
  .addError(InternalError)
  .addError(CardInvalid)
  .middleware(Authentication) {}
