/**
 * Re-verification against the agent's current card (docs/api.md, "Agent data"):
 *
 * - AIP: non-clear checkpoints re-evaluated (core/Reevaluation.ts): the concerns whose cause the
 *   card or values in force now declare acceptable dropped, the verdict derived again (core/Verdict.ts);
 *   a changed one keeps its `original_verdict`. Each call appends an `aip.reevaluation` entry to the
 *   agent's governance log.
 * - AAP: traces with violations re-verified (core/TraceVerification.ts) against the current card.
 *
 * Batches of `limit` (1..40, default 40) from `offset` (default 0), newest first.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { Forbidden, InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import { AgentId } from "../../../core/schema/Ids.js"
import { IntParam } from "./Checkpoints.js"
import { AipReverification, AapReverification } from "../../../core/schema/Reverification.js"
import { ReverifyWithoutCard } from "../../../services/Reverify.js"

export const REVERIFY_LIMIT = { min: 1, max: 40, default: 40 } as const

const AgentPath = Schema.Struct({ agent_id: AgentId })

export const ReverifyParams = Schema.Struct({
  limit: Schema.optionalWith(IntParam(REVERIFY_LIMIT.min, REVERIFY_LIMIT.max), {
    default: () => REVERIFY_LIMIT.default,
    exact: true
  }),
  offset: Schema.optionalWith(IntParam(0, Number.MAX_SAFE_INTEGER), { default: () => 0, exact: true })
})

export class ReverifyApi extends HttpApiGroup.make("reverify")
  .add(
    HttpApiEndpoint.post("reverifyAip", "/agents/:agent_id/reverify/aip")
      .setPath(AgentPath)
      .setUrlParams(ReverifyParams)
      .addSuccess(AipReverification)
  )
  .add(
    HttpApiEndpoint.post("reverifyAap", "/agents/:agent_id/reverify")
      .setPath(AgentPath)
      .setUrlParams(ReverifyParams)
      .addSuccess(AapReverification)
  )
  .addError(Forbidden)
  .addError(NotFound)
  .addError(InternalError)
  .addError(ReverifyWithoutCard)
  .middleware(Authentication) {}
