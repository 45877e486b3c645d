/**
 * AIP re-evaluation (POST /v1/agents/{agent_id}/reverify/aip, docs/api.md): a checkpoint's concerns
 * weighed again against the card and the conscience values in force now. Pure.
 *
 * A concern whose cause (`ConcernCause`, docs/formats.md) the current card or values now declare
 * acceptable is dropped; the verdict is derived again by `candor-verdict/1` from the concerns left
 * and the BOUNDARY values in force. A cause is acceptable when what it named changed in the agent's
 * favour since the checkpoint was judged, never merely because it is there: re-evaluating against
 * what the judge was shown drops nothing.
 * - `conscience_values`: the value's standing fell: a BOUNDARY value that is no longer one, or a
 *   value no longer in force at all. The standing it had is read from the checkpoint's
 *   `conscience_context` (`layers`, or on older checkpoints the types of `values_checked`); a value
 *   found in neither was in force (the judges keep only causes naming a value they were shown).
 * - `autonomy_envelope.forbidden_actions`: the action is no longer forbidden.
 * - `autonomy_envelope.escalation_triggers`: no trigger has that condition any more.
 * - `autonomy_envelope.bounded_actions`: the action is within `bounded_actions` now (and not
 *   forbidden) and was not in the card it was judged under. When that card is not known the
 *   concern keeps counting: without it, "now within" cannot be told from "always was".
 * A concern without a cause always keeps counting.
 */
import { boundaryValueNames, isBoundaryValue } from "./ConscienceResolution.js"
import type { AutonomyEnvelope } from "./schema/Card.js"
import type { ConscienceContext } from "./schema/Checkpoint.js"
import type { Concern, ConcernCause } from "./schema/Concern.js"
import type { ConscienceValue } from "./schema/Conscience.js"
import { withSessionViolations } from "./Reclassification.js"
import type { ReputationTally } from "./Reputation.js"
import type { AipReevaluationState, ReevaluatedVerdict } from "./schema/Reevaluation.js"
import type { Verdict } from "./schema/Verdict.js"
import { deriveVerdict, type VerdictConcern } from "./Verdict.js"

/** What the causes are weighed against: the card's envelope and the conscience values in force now. */
export interface ReevaluationBasis {
  readonly envelope: Pick<typeof AutonomyEnvelope.Type, "bounded_actions" | "forbidden_actions" | "escalation_triggers">
  readonly values: ReadonlyArray<ConscienceValue>
}

/** What is known of how the checkpoint was judged. */
export interface JudgedBasis {
  readonly conscience_context?: Pick<ConscienceContext, "values_checked" | "layers"> | undefined
  /** `bounded_actions` of the card the checkpoint was judged under; undefined when that card is not known. */
  readonly bounded_actions?: ReadonlyArray<string> | undefined
}

export interface ConcernReevaluation {
  /** Indexes (from 0) of the concerns whose cause is now acceptable, ascending: in the certificate's order too. */
  readonly dropped: ReadonlyArray<number>
  /** `candor-verdict/1` over the concerns left and the BOUNDARY values in force. */
  readonly verdict: Verdict
}

/** How a conscience value stands: not in force, in force, in force as a BOUNDARY. */
const ABSENT = 0
const IN_FORCE = 1
const BOUNDARY = 2

const standingNow = (name: string, values: ReevaluationBasis["values"]): number => {
  const value = values.find((v) => v.name === name)
  return value === undefined ? ABSENT : isBoundaryValue(value) ? BOUNDARY : IN_FORCE
}

const standingJudged = (name: string, context: JudgedBasis["conscience_context"]): number => {
  const layers = context?.layers
  if (layers !== undefined) {
    const value = [...layers.defaults, ...layers.organization, ...layers.agent].find((v) => v.name === name)
    return value !== undefined && isBoundaryValue(value) ? BOUNDARY : IN_FORCE
  }
  return context?.values_checked.includes(`BOUNDARY:${name}`) === true ? BOUNDARY : IN_FORCE
}

/** Whether the card and values in force now declare what this cause named acceptable (see the module comment). */
export const causeAcceptable = (cause: ConcernCause, now: ReevaluationBasis, judged: JudgedBasis): boolean => {
  const forbidden = now.envelope.forbidden_actions ?? []
  switch (cause.relevant_card_field) {
    case "conscience_values":
      return standingNow(cause.value, now.values) < standingJudged(cause.value, judged.conscience_context)
    case "autonomy_envelope.forbidden_actions":
      return !forbidden.includes(cause.action)
    case "autonomy_envelope.escalation_triggers":
      return !now.envelope.escalation_triggers.some((trigger) => trigger.condition === cause.trigger)
    case "autonomy_envelope.bounded_actions":
      return (
        judged.bounded_actions !== undefined &&
        !judged.bounded_actions.includes(cause.action) &&
        now.envelope.bounded_actions.includes(cause.action) &&
        !forbidden.includes(cause.action)
      )
  }
}

/** Which of a checkpoint's concerns no longer count, and its verdict without them. */
export const reevaluateConcerns = (
  concerns: ReadonlyArray<Pick<Concern, "category" | "severity" | "relevant_conscience_value" | "cause">>,
  now: ReevaluationBasis,
  judged: JudgedBasis
): ConcernReevaluation => {
  const dropped = concerns.flatMap((concern, index) =>
    concern.cause !== undefined && causeAcceptable(concern.cause, now, judged) ? [index] : []
  )
  return { dropped, verdict: verdictWithout(concerns, dropped, boundaryValueNames(now.values)) }
}

/**
 * `candor-verdict/1` over `concerns` less the ones at `dropped`: what `candor verify` re-runs on a
 * certificate's concerns with an `aip.reevaluation` entry's `dropped_concerns` and `boundary_values`.
 */
export const verdictWithout = (
  concerns: ReadonlyArray<VerdictConcern>,
  dropped: ReadonlyArray<number>,
  boundaryValues: Iterable<string>
): Verdict => {
  const gone = new Set(dropped)
  return deriveVerdict(
    concerns.filter((_, index) => !gone.has(index)),
    boundaryValues
  )
}

/** What the check reads of a certificate (already verified by the caller). */
export interface ReevaluatedCertificate {
  readonly claims: { readonly concerns: ReadonlyArray<VerdictConcern> }
}

/**
 * An `aip.reevaluation` entry checked against the certificates of the checkpoints it changed, by
 * checkpoint id: for each, `candor-verdict/1` over the certified concerns less `dropped_concerns`,
 * with the entry's `boundary_values`, must give `to`. The errors; none when the entry holds.
 */
export const checkReevaluation = (
  state: AipReevaluationState,
  certificates: ReadonlyMap<string, ReevaluatedCertificate>
): ReadonlyArray<string> =>
  state.changed.flatMap(({ checkpoint_id, dropped_concerns, to }) => {
    const certificate = certificates.get(checkpoint_id)
    if (certificate === undefined) return [`${checkpoint_id}: its certificate was not given`]
    const { concerns } = certificate.claims
    if (
      dropped_concerns.some((index) => index >= concerns.length) ||
      new Set(dropped_concerns).size !== dropped_concerns.length
    )
      return [
        `${checkpoint_id}: dropped_concerns names concerns the certificate does not hold (${concerns.length} concerns)`
      ]
    const derived = verdictWithout(concerns, dropped_concerns, state.boundary_values)
    return derived === to
      ? []
      : [
          `${checkpoint_id}: ${state.rules_version} over the certified concerns less [${dropped_concerns.join(", ")}] gives ${derived}, the entry says ${to}`
        ]
  })

/** What the store knows of a checkpoint of the tally's prefix whose stored verdict a re-evaluation changed. */
export interface ReevaluatedInPrefix extends ReevaluatedVerdict {
  readonly certified: Verdict
  /** A judge read its reasoning (the integrity ratio counts it). */
  readonly analysed: boolean
}

/**
 * The workers' tally with the re-evaluated verdicts counted instead of the certified ones, as
 * `tallyCertificates` counts them for a verifier: the clear ones among the analysed, and the
 * violation sessions. `sessions` are those holding a re-evaluated checkpoint, each with its newest
 * violation by the verdicts counted, card gaps left out (apply after `excludeCardGaps`). Drift stays
 * as certified: alerts already raised stay.
 */
export const countReevaluations = (
  tally: ReputationTally,
  reevaluated: ReadonlyArray<ReevaluatedInPrefix>,
  sessions: ReadonlyArray<{ readonly session_id: string; readonly last_violation_at: string | null }>,
  since: string
): ReputationTally => {
  if (reevaluated.length === 0) return tally
  const clearDelta = reevaluated
    .filter((r) => r.analysed)
    .reduce((sum, r) => sum + (r.verdict === "clear" ? 1 : 0) - (r.certified === "clear" ? 1 : 0), 0)
  return {
    ...tally,
    analysed_clear: tally.analysed_clear + clearDelta,
    violation_sessions: withSessionViolations(tally.violation_sessions, sessions, since),
    reevaluated_checkpoints: reevaluated
      .map(({ checkpoint_id, governance_index, verdict }) => ({ checkpoint_id, verdict, governance_index }))
      .sort((a, b) => (a.checkpoint_id < b.checkpoint_id ? -1 : a.checkpoint_id > b.checkpoint_id ? 1 : 0))
  }
}
