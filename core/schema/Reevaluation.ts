/**
 * The `aip.reevaluation` governance entry (docs/formats.md): what one AIP re-evaluation call
 * (POST /v1/agents/{agent_id}/reverify/aip) changed, on the agent's governance log. Its `new_state`
 * is an `AipReevaluationState`; the record's `hashes` hold the card and values hashes it ran against.
 * `candor verify` re-runs `candor-verdict/1` on each named certificate's concerns less
 * `dropped_concerns`, with `boundary_values`, and expects `to`.
 */
import { Schema } from "effect"
import { RULES_VERSION } from "../Verdict.js"
import { CardId, CheckpointId } from "./Ids.js"
import { Verdict } from "./Verdict.js"

/** Checkpoints one call re-evaluates at most (the route's `limit`). */
export const MAX_REEVALUATED_CHECKPOINTS = 40
/** Bounds on what a hostile entry may list (a verifier decodes entries from files it was handed). */
export const MAX_DROPPED_CONCERNS = 1000
export const MAX_BOUNDARY_VALUES = 1000

export const ReevaluatedCheckpoint = Schema.Struct({
  checkpoint_id: CheckpointId,
  from: Verdict.annotations({ description: "The stored verdict before this re-evaluation" }),
  to: Verdict.annotations({ description: "The verdict now" }),
  dropped_concerns: Schema.Array(Schema.NonNegativeInt).pipe(Schema.maxItems(MAX_DROPPED_CONCERNS)).annotations({
    description: "Indexes (from 0, ascending) of the concerns that no longer count, in the certificate's order"
  })
}).annotations({
  identifier: "ReevaluatedCheckpoint",
  description: "One checkpoint whose verdict a re-evaluation changed"
})
export type ReevaluatedCheckpoint = typeof ReevaluatedCheckpoint.Type

export const AipReevaluationState = Schema.Struct({
  rules_version: Schema.Literal(RULES_VERSION),
  card_id: CardId,
  boundary_values: Schema.Array(Schema.String).pipe(Schema.maxItems(MAX_BOUNDARY_VALUES)).annotations({
    description: "The names of the BOUNDARY conscience values in force, as the verdict rule read them"
  }),
  offset: Schema.NonNegativeInt,
  limit: Schema.NonNegativeInt,
  changed: Schema.Array(ReevaluatedCheckpoint).pipe(Schema.maxItems(MAX_REEVALUATED_CHECKPOINTS))
}).annotations({
  identifier: "AipReevaluationState",
  description: "The new_state of an aip.reevaluation governance entry"
})
export type AipReevaluationState = typeof AipReevaluationState.Type

/**
 * A checkpoint's verdict as re-evaluated, counted by the reputation (its integrity ratio's published
 * `reevaluated_checkpoints`), and the `aip.reevaluation` entry of the agent's governance log that set it.
 */
export const ReevaluatedVerdict = Schema.Struct({
  checkpoint_id: CheckpointId,
  verdict: Verdict,
  governance_index: Schema.NonNegativeInt
}).annotations({ identifier: "ReevaluatedVerdict", description: "A re-evaluated verdict the reputation counts" })
export type ReevaluatedVerdict = typeof ReevaluatedVerdict.Type
