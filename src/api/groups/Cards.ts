/**
 * The card update (service-role key only) and an agent's conscience values (docs/api.md,
 * "Agent data"). Both store a new state and push it to the gateways (AgentState).
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { BadRequest, Forbidden, InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import { AgentId } from "../../../core/schema/Ids.js"
import {
  CardUpdate,
  CardUpdated,
  ConscienceValuesUpdate,
  ConscienceValuesUpdated
} from "../../../core/schema/CardUpdate.js"
import { CardInvalid } from "../../../services/Cards.js"

const AgentPath = Schema.Struct({ agent_id: AgentId })

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
