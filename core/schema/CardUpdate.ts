/**
 * Updating an agent's Alignment Card and conscience values (PUT /v1/agents/{agent_id}/card, …/conscience-values):
 * the requests and their answers.
 */
import * as Schema from "effect/Schema"
import { AlignmentCard } from "./Card.js"
import { ConscienceValue } from "./Conscience.js"
import { AgentId, CardId } from "./Ids.js"

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
