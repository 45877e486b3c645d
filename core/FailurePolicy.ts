/**
 * The verdict of an answer Candor could not judge: the agent's failure policy decides (`fail_open`:
 * a synthetic `clear`, `fail_closed`: a synthetic `boundary_violation`), and a `fail_closed`
 * violation is certified as one (docs/formats.md, "Failure-policy verdicts").
 *
 * The verdict rule `candor-verdict/1` derives a verdict from concerns alone, and the STARK proves
 * exactly that rule; a violation with no concern would be certified `clear`. So a `fail_closed`
 * verdict carries one concern that says what happened, the *failure-policy concern*:
 * `reasoning_corruption` (the reasoning could not be verified), `critical` (the rule's first
 * clause), its description naming the reason. The rule, the certificate and the proof need no
 * exception, and a verifier sees from the certificate alone why it is a violation: the judge is
 * `none` (`claims.analysis_model`) and the only concern is this one (`failurePolicyReason`).
 */
import type { Concern, ConcernCategory } from "./schema/Concern.js"
import type { FailurePolicy, SyntheticReason, UnanalysedReason, Verdict } from "./schema/Verdict.js"

/** Why the judge's verdict is missing: an unanalysed answer's reason, or the judge failed. */
export type FailureReason = UnanalysedReason | "analysis_failed"

export const FAILURE_POLICY_CATEGORY: ConcernCategory = "reasoning_corruption"

/** The judge named in a certificate whose verdict no judge gave. */
export const NO_JUDGE = "none"

const DESCRIPTION_PREFIX = "not analysed ("
const DESCRIPTION_SUFFIX = "): the agent's failure policy is fail_closed"

/** The failure-policy concern of `reason`; its description is exactly `not analysed (<reason>): the agent's failure policy is fail_closed`. */
export const failurePolicyConcern = (reason: FailureReason): Concern => ({
  category: FAILURE_POLICY_CATEGORY,
  severity: "critical",
  evidence: "",
  description: `${DESCRIPTION_PREFIX}${reason}${DESCRIPTION_SUFFIX}`,
  relevant_conscience_value: null
})

/** The verdict the failure policy gives an answer that was not judged. */
export const failurePolicyVerdict = (policy: FailurePolicy): Verdict =>
  policy === "fail_closed" ? "boundary_violation" : "clear"

/** The concerns recorded with that verdict: the failure-policy concern under `fail_closed`, none otherwise. */
export const failurePolicyConcerns = (policy: FailurePolicy, reason: FailureReason): ReadonlyArray<Concern> =>
  policy === "fail_closed" ? [failurePolicyConcern(reason)] : []

/** The part of a certificate's claims that tells a failure-policy verdict. */
export interface FailurePolicyClaims {
  readonly analysis_model: string
  readonly concerns: ReadonlyArray<{
    readonly category: string
    readonly severity: string
    readonly description: string
    readonly relevant_conscience_value: string | null
  }>
}

const REASONS: ReadonlySet<string> = new Set<FailureReason>([
  "undecodable_encoding",
  "unparseable_body",
  "judge_timeout",
  "over_share",
  "analysis_failed"
])

/**
 * The reason of a certified failure-policy violation (no judge, exactly the failure-policy concern),
 * or `undefined` for a verdict a judge's concerns gave. Verifiers report it ("violation by the
 * failure policy: not analysed, judge_timeout"); the verdict check itself is the rule's, unchanged.
 */
export const failurePolicyReason = (claims: FailurePolicyClaims): FailureReason | undefined => {
  if (claims.analysis_model !== NO_JUDGE || claims.concerns.length !== 1) return undefined
  const [concern] = claims.concerns
  const { description } = concern!
  if (
    concern!.category !== FAILURE_POLICY_CATEGORY ||
    concern!.severity !== "critical" ||
    concern!.relevant_conscience_value !== null ||
    !description.startsWith(DESCRIPTION_PREFIX) ||
    !description.endsWith(DESCRIPTION_SUFFIX)
  )
    return undefined
  const reason = description.slice(DESCRIPTION_PREFIX.length, description.length - DESCRIPTION_SUFFIX.length)
  return REASONS.has(reason) ? (reason as FailureReason) : undefined
}

/** The synthetic reason recorded for a failure reason. */
export const syntheticReasonOf = (reason: FailureReason): SyntheticReason =>
  reason === "analysis_failed" ? "analysis_failed" : "unanalysed"
