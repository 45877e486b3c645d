/**
 * Re-verification of an agent's checkpoints (POST /v1/agents/{agent_id}/reverify…): the AIP and AAP answers.
 */
import * as Schema from "effect/Schema"
import { Disclaimer } from "./Disclaimer.js"
import { AgentId, CardId, CheckpointId } from "./Ids.js"
import { Verdict } from "./Verdict.js"

const Count = Schema.NonNegativeInt

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
