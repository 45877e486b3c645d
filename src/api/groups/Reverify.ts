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
import { Disclaimer } from "../../../core/schema/Disclaimer.js"
import { AgentId, CardId, CheckpointId } from "../../../core/schema/Ids.js"
import { Verdict } from "../../../core/schema/Verdict.js"
import { IntParam } from "./Checkpoints.js"
import { ReverifyWithoutCard } from "../../../services/Reverify.js"

export const REVERIFY_LIMIT = { min: 1, max: 40, default: 40 } as const

const AgentPath = Schema.Struct({ agent_id: AgentId })
const Count = Schema.NonNegativeInt

export const ReverifyParams = Schema.Struct({
  limit: Schema.optionalWith(IntParam(REVERIFY_LIMIT.min, REVERIFY_LIMIT.max), {
    default: () => REVERIFY_LIMIT.default,
    exact: true
  }),
  offset: Schema.optionalWith(IntParam(0, Number.MAX_SAFE_INTEGER), { default: () => 0, exact: true })
})

export const AipReverifyResult = Schema.Struct({
  checkpoint_id: CheckpointId,
  previous_verdict: Verdict.annotations({ description: "The stored verdict before this re-evaluation" }),
  verdict: Verdict.annotations({ description: "The verdict now" }),
  changed: Schema.Boolean,
  dropped_concerns: Schema.Array(Schema.NonNegativeInt).annotations({
    description: "Indexes (from 0) of the concerns whose cause is now acceptable: they no longer count"
  })
}).annotations({ identifier: "AipReverifyResult" })

export const AipReverification = Schema.Struct({
  agent_id: AgentId,
  card_id: CardId,
  total_in_batch: Count.annotations({ description: "Non-clear checkpoints taken into this batch" }),
  offset: Count,
  limit: Count,
  re_evaluated: Count.annotations({ description: "Checkpoints of the batch re-evaluated (the others are in errors)" }),
  resolved_to_clear: Count,
  kept_non_clear: Count,
  results: Schema.Array(AipReverifyResult),
  errors: Schema.Array(Schema.String),
  governance_index: Count.annotations({
    description: "The index of this call's aip.reevaluation entry in the agent's governance log"
  }),
  disclaimer: Disclaimer
}).annotations({ identifier: "AipReverification" })

export const AapReverification = Schema.Struct({
  agent_id: AgentId,
  card_id: CardId,
  total_traces_in_batch: Count.annotations({ description: "Traces with violations taken into this batch" }),
  offset: Count,
  limit: Count,
  reverified: Count,
  still_violating: Count,
  now_clean: Count,
  errors: Schema.NullOr(Schema.Array(Schema.String)).annotations({
    description: "null when every trace was re-verified"
  }),
  disclaimer: Disclaimer
}).annotations({ identifier: "AapReverification" })

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
