/**
 * Drift (docs/api.md, "Agent data"): the AAP behavioural drift of the agent's newest
 * traces, analysed on request (core/DriftAap.ts `detectAapDrift`); and the stored AIP alerts.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import { AapDrift, AipDriftAlerts } from "../../../core/schema/Drift.js"
import { AgentId } from "../../../core/schema/Ids.js"

const AgentPath = Schema.Struct({ agent_id: AgentId })

export class DriftApi extends HttpApiGroup.make("drift")
  .add(HttpApiEndpoint.get("getAapDrift", "/drift/:agent_id").setPath(AgentPath).addSuccess(AapDrift))
  .add(
    HttpApiEndpoint.get("getAipDriftAlerts", "/agents/:agent_id/drift/aip")
      .setPath(AgentPath)
      .addSuccess(AipDriftAlerts)
  )
  .addError(NotFound)
  .addError(InternalError)
  .middleware(Authentication) {}
