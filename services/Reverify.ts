/**
 * Re-verification of an agent's records against its current card and conscience values. Thinking
 * text is never needed (it was never kept): AIP re-evaluates each non-clear checkpoint's stored
 * concerns (core/Reevaluation.ts: a concern whose cause is now acceptable is dropped, the verdict
 * derived again by core/Verdict.ts), AAP re-verifies each violating trace's stored decision
 * (core/TraceVerification.ts, without the card-reference check: the trace named the old card).
 * Changes are stored; a record that cannot be read is reported in `errors`, never fails the batch.
 * Who may re-verify is the caller's to check; the actor it names is the one recorded.
 *
 * Each AIP call appends one `aip.reevaluation` entry to the agent's governance log (even when it
 * changed nothing, so the call is on record), in the transaction that stores the new verdicts, listing
 * the checkpoints whose verdict it did change; certificates are never touched.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { AgentQueries, type CheckpointReevaluation } from "../adapters/store/AgentQueries.js"
import { GovernanceLog } from "../adapters/store/GovernanceLog.js"
import { resolvedConscienceOf } from "../adapters/store/OrgConscienceRepo.js"
import { Store, StoreError } from "../adapters/store/Store.js"
import { transaction } from "../adapters/store/Transaction.js"
import { cardHash, valuesHash } from "../core/Commitments.js"
import { boundaryValueNames } from "../core/ConscienceResolution.js"
import { agentGovernanceLog } from "../core/Governance.js"
import { reevaluateConcerns, type ReevaluationBasis } from "../core/Reevaluation.js"
import type { AlignmentCard } from "../core/schema/Card.js"
import type { IntegrityCheckpoint } from "../core/schema/Checkpoint.js"
import { Concern } from "../core/schema/Concern.js"
import { PROTOCOL_DISCLAIMER } from "../core/schema/Disclaimer.js"
import { AipReevaluationState, type ReevaluatedCheckpoint } from "../core/schema/Reevaluation.js"
import type { APTrace } from "../core/schema/Trace.js"
import type { Verdict } from "../core/schema/Verdict.js"
import { verifyTrace } from "../core/TraceVerification.js"
import { RULES_VERSION } from "../core/Verdict.js"
import { type RecomputationNeeds, recomputeWithTrust } from "./ReputationRecompute.js"

/** The agent has no Alignment Card yet: nothing to re-verify against. */
export class ReverifyWithoutCard extends Schema.TaggedError<ReverifyWithoutCard>()(
  "ReverifyWithoutCard",
  { error: Schema.String },
  HttpApiSchema.annotations({ status: 404 })
) {}

const isConcerns = Schema.is(Schema.Array(Concern))
const encodeReevaluation = Schema.encodeSync(AipReevaluationState)

export interface CheckpointOutcome {
  readonly checkpoint_id: string
  readonly previous_verdict: Verdict
  readonly verdict: Verdict
  readonly changed: boolean
  /** Indexes of the concerns whose cause the current card or values declare acceptable. */
  readonly dropped_concerns: ReadonlyArray<number>
  /** The checkpoint as it is to be stored, when its verdict changed. */
  readonly reevaluated: CheckpointReevaluation | undefined
}

/**
 * The verdict of a stored checkpoint against the card and values in force (`judgedBoundedActions`:
 * those of the card it was judged under, when known); a string when its concerns cannot be read.
 */
export const reevaluateCheckpoint = (
  checkpoint: IntegrityCheckpoint,
  now: ReevaluationBasis,
  judgedBoundedActions: ReadonlyArray<string> | undefined,
  at: string
): CheckpointOutcome | string => {
  if (!isConcerns(checkpoint.concerns)) return `${checkpoint.checkpoint_id}: stored concerns cannot be read`
  const { dropped, verdict } = reevaluateConcerns(checkpoint.concerns, now, {
    conscience_context: checkpoint.conscience_context,
    bounded_actions: judgedBoundedActions
  })
  const changed = verdict !== checkpoint.verdict
  return {
    checkpoint_id: checkpoint.checkpoint_id,
    previous_verdict: checkpoint.verdict,
    verdict,
    changed,
    dropped_concerns: dropped,
    reevaluated: changed
      ? {
          previous: checkpoint.verdict,
          // The first verdict is kept across several re-evaluations.
          checkpoint: {
            ...checkpoint,
            verdict,
            re_evaluated_at: at,
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
        ? Effect.fail(new ReverifyWithoutCard({ error: `agent ${agentId} has no Alignment Card to re-verify against` }))
        : Effect.succeed(active.card)
    )
  )

const sameVerification = (a: APTrace, b: APTrace) => JSON.stringify(a.verification) === JSON.stringify(b.verification)

/** What the re-verifications read and write through. */
type Needs = RecomputationNeeds | AgentQueries | GovernanceLog

export const make = Effect.gen(function* () {
  const context = yield* Effect.context<Needs>()
  const run = <A, E>(effect: Effect.Effect<A, E, Needs>) => Effect.provide(effect, context)

  /** AIP: one batch of the agent's non-clear checkpoints re-evaluated, recorded as `actor`. */
  const aip = (agentId: string, limit: number, offset: number, actor: string) =>
    run(
      Effect.gen(function* () {
        const card = yield* currentCard(agentId)
        const store = yield* Store
        const queries = yield* AgentQueries
        // The values in force now, resolved as the workers resolve them (organization layer included).
        const { values } = yield* resolvedConscienceOf(store, agentId)
        const batch = yield* queries.nonClearCheckpoints(agentId, limit, offset)
        const judgedBounded = yield* queries.judgedBoundedActions(
          agentId,
          batch.map((checkpoint) => checkpoint.card_id)
        )
        const at = new Date(yield* Clock.currentTimeMillis).toISOString()
        const basis: ReevaluationBasis = { envelope: card.autonomy_envelope, values }
        const outcomes = batch.map((checkpoint) =>
          reevaluateCheckpoint(checkpoint, basis, judgedBounded.get(checkpoint.card_id), at)
        )
        const evaluated = outcomes.filter((outcome): outcome is CheckpointOutcome => typeof outcome !== "string")
        const governance = yield* GovernanceLog
        const recorded = yield* transaction(
          yield* SqlClient.SqlClient,
          Effect.gen(function* () {
            const stored = new Set(
              yield* queries.reevaluateCheckpoints(evaluated.flatMap((outcome) => outcome.reevaluated ?? []))
            )
            // Only what this call changed: a concurrent call that changed a checkpoint first records it.
            const changed = evaluated.flatMap((outcome): ReadonlyArray<ReevaluatedCheckpoint> =>
              stored.has(outcome.checkpoint_id)
                ? [
                    {
                      checkpoint_id: outcome.checkpoint_id,
                      from: outcome.previous_verdict,
                      to: outcome.verdict,
                      dropped_concerns: outcome.dropped_concerns
                    }
                  ]
                : []
            )
            const entry = yield* governance.append(agentGovernanceLog(agentId), {
              action: "aip.reevaluation",
              actor,
              previous_state: null,
              new_state: encodeReevaluation({
                rules_version: RULES_VERSION,
                card_id: card.card_id,
                boundary_values: boundaryValueNames(values),
                offset: offset,
                limit: limit,
                changed
              }),
              hashes: { card_hash: cardHash(card), values_hash: valuesHash(values) }
            })
            return { index: entry.index, changed: changed.length }
          })
        ).pipe(Effect.catchTag("SqlError", (cause) => Effect.fail(new StoreError({ operation: "reverifyAip", cause }))))
        // The reputation counts the re-evaluated verdicts (core/Reevaluation.ts): recomputed now, not at the next commit.
        if (recorded.changed > 0) yield* recomputeWithTrust(agentId)
        const resolved = evaluated.filter((outcome) => outcome.verdict === "clear").length
        return {
          agent_id: agentId,
          card_id: card.card_id,
          total_in_batch: batch.length,
          offset: offset,
          limit: limit,
          re_evaluated: evaluated.length,
          resolved_to_clear: resolved,
          kept_non_clear: evaluated.length - resolved,
          results: evaluated.map(({ reevaluated: _, ...result }) => result),
          errors: outcomes.filter((outcome): outcome is string => typeof outcome === "string"),
          governance_index: recorded.index,
          disclaimer: PROTOCOL_DISCLAIMER
        }
      })
    )

  /** AAP: one batch of the agent's violating traces re-verified. */
  const aap = (agentId: string, limit: number, offset: number) =>
    run(
      Effect.gen(function* () {
        const card = yield* currentCard(agentId)
        const queries = yield* AgentQueries
        const batch = yield* queries.violatingTraces(agentId, limit, offset)
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
          agent_id: agentId,
          card_id: card.card_id,
          total_traces_in_batch: batch.length,
          offset: offset,
          limit: limit,
          reverified: reverified.length,
          still_violating: reverified.length - clean,
          now_clean: clean,
          errors: errors.length > 0 ? errors : null,
          disclaimer: PROTOCOL_DISCLAIMER
        }
      })
    )

  return { aip, aap }
})

export class Reverify extends Context.Tag("candor/services/Reverify")<Reverify, Effect.Effect.Success<typeof make>>() {}

export const layer = Layer.effect(Reverify, make)
