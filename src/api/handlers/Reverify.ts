/**
 * Re-verification of an agent's records against its current card and conscience values. Thinking
 * text is never needed (it was never kept): AIP re-derives each non-clear checkpoint's verdict from
 * its stored concerns (core/Verdict.ts), AAP re-verifies each violating trace's stored decision
 * (core/TraceVerification.ts, without the card-reference check: the trace named the old card).
 * Changes are stored; a record that cannot be read is reported in `errors`, never fails the batch.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { NotFound } from "../../../adapters/http/ApiErrors.js"
import { AgentQueries, type CheckpointReevaluation } from "../../../adapters/store/AgentQueries.js"
import { resolvedConscienceOf } from "../../../adapters/store/OrgConscienceRepo.js"
import { Store } from "../../../adapters/store/Store.js"
import { boundaryValueNames } from "../../../core/ConscienceResolution.js"
import type { AlignmentCard } from "../../../core/schema/Card.js"
import type { IntegrityCheckpoint } from "../../../core/schema/Checkpoint.js"
import { Concern } from "../../../core/schema/Concern.js"
import { PROTOCOL_DISCLAIMER } from "../../../core/schema/Disclaimer.js"
import type { APTrace } from "../../../core/schema/Trace.js"
import type { Verdict } from "../../../core/schema/Verdict.js"
import { verifyTrace } from "../../../core/TraceVerification.js"
import { deriveVerdict } from "../../../core/Verdict.js"
import { CandorApi } from "../Api.js"
import { writeAgent } from "./AgentAccess.js"
import { internal } from "./Access.js"

const isConcerns = Schema.is(Schema.Array(Concern))

export interface CheckpointOutcome {
  readonly checkpoint_id: string
  readonly previous_verdict: Verdict
  readonly verdict: Verdict
  readonly changed: boolean
  /** The checkpoint as it is to be stored, when its verdict changed. */
  readonly reevaluated: CheckpointReevaluation | undefined
}

/** The verdict of a stored checkpoint under these BOUNDARY values; a string when its concerns cannot be read. */
export const reevaluateCheckpoint = (
  checkpoint: IntegrityCheckpoint,
  boundaryValues: ReadonlyArray<string>,
  now: string
): CheckpointOutcome | string => {
  if (!isConcerns(checkpoint.concerns)) return `${checkpoint.checkpoint_id}: stored concerns cannot be read`
  const verdict = deriveVerdict(checkpoint.concerns, boundaryValues)
  const changed = verdict !== checkpoint.verdict
  return {
    checkpoint_id: checkpoint.checkpoint_id,
    previous_verdict: checkpoint.verdict,
    verdict,
    changed,
    reevaluated: changed
      ? {
          previous: checkpoint.verdict,
          // The first verdict is kept across several re-evaluations.
          checkpoint: {
            ...checkpoint,
            verdict,
            re_evaluated_at: now,
            original_verdict: checkpoint.original_verdict ?? checkpoint.verdict
          }
        }
      : undefined
  }
}

/** A violating trace re-verified against `card`; a string when verification cannot run on it. */
export const reverifyTrace = (trace: APTrace, card: AlignmentCard): APTrace | string => {
  try {
    return { ...trace, verification: verifyTrace(trace, card, { checkCardReference: false }).verification }
  } catch {
    return `${trace.trace_id}: the stored trace cannot be verified`
  }
}

/** The card re-verification is against; 404 when the agent has none yet. */
const currentCard = (agentId: string) =>
  Effect.flatMap(Store, (store) => store.activeCard(agentId)).pipe(
    Effect.flatMap((active) =>
      active === undefined
        ? Effect.fail(new NotFound({ error: `agent ${agentId} has no Alignment Card to re-verify against` }))
        : Effect.succeed(active.card)
    )
  )

const sameVerification = (a: APTrace, b: APTrace) => JSON.stringify(a.verification) === JSON.stringify(b.verification)

export const ReverifyLive = HttpApiBuilder.group(CandorApi, "reverify", (handlers) =>
  handlers
    .handle("reverifyAip", ({ path, urlParams }) =>
      Effect.gen(function* () {
        yield* writeAgent(path.agent_id)
        const card = yield* currentCard(path.agent_id)
        const store = yield* Store
        const queries = yield* AgentQueries
        // The values in force now, resolved as the workers resolve them (organization layer included).
        const boundary = boundaryValueNames((yield* resolvedConscienceOf(store, path.agent_id)).values)
        const batch = yield* queries.nonClearCheckpoints(path.agent_id, urlParams.limit, urlParams.offset)
        const now = new Date(yield* Clock.currentTimeMillis).toISOString()
        const outcomes = batch.map((checkpoint) => reevaluateCheckpoint(checkpoint, boundary, now))
        const evaluated = outcomes.filter((outcome): outcome is CheckpointOutcome => typeof outcome !== "string")
        yield* queries.reevaluateCheckpoints(evaluated.flatMap((outcome) => outcome.reevaluated ?? []))
        const resolved = evaluated.filter((outcome) => outcome.verdict === "clear").length
        return {
          agent_id: path.agent_id,
          card_id: card.card_id,
          total_in_batch: batch.length,
          offset: urlParams.offset,
          limit: urlParams.limit,
          re_evaluated: evaluated.length,
          resolved_to_clear: resolved,
          kept_non_clear: evaluated.length - resolved,
          results: evaluated.map(({ reevaluated: _, ...result }) => result),
          errors: outcomes.filter((outcome): outcome is string => typeof outcome === "string"),
          disclaimer: PROTOCOL_DISCLAIMER
        }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("reverifyAap", ({ path, urlParams }) =>
      Effect.gen(function* () {
        yield* writeAgent(path.agent_id)
        const card = yield* currentCard(path.agent_id)
        const queries = yield* AgentQueries
        const batch = yield* queries.violatingTraces(path.agent_id, urlParams.limit, urlParams.offset)
        const outcomes = batch.map((trace) => ({ before: trace, after: reverifyTrace(trace, card) }))
        const reverified = outcomes.flatMap(({ after, before }) =>
          typeof after === "string" ? [] : [{ before, after }]
        )
        const errors = outcomes.flatMap(({ after }) => (typeof after === "string" ? [after] : []))
        yield* queries.updateTraces(
          reverified.filter(({ after, before }) => !sameVerification(before, after)).map(({ after }) => after)
        )
        const clean = reverified.filter(({ after }) => after.verification.verified).length
        return {
          agent_id: path.agent_id,
          card_id: card.card_id,
          total_traces_in_batch: batch.length,
          offset: urlParams.offset,
          limit: urlParams.limit,
          reverified: reverified.length,
          still_violating: reverified.length - clean,
          now_clean: clean,
          errors: errors.length > 0 ? errors : null,
          disclaimer: PROTOCOL_DISCLAIMER
        }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
)
