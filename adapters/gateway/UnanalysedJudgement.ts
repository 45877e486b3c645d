/**
 * The judgement of an answer that was not (or not wholly) analysed: the agent's failure policy gives
 * the verdict (`core/FailurePolicy.ts`), the checkpoint says why (`synthetic_reason: "unanalysed"`
 * and `analysis_metadata.unanalysed_reason`, or `analysis_failed` when the judge failed), and a
 * `fail_closed` violation carries the failure-policy concern, so that it is certified as one.
 * Nothing here calls the judge: an over-share exchange costs a few object allocations.
 */
import {
  type FailureReason,
  failurePolicyConcerns,
  failurePolicyVerdict,
  syntheticReasonOf
} from "../../core/FailurePolicy.js"
import type { FailurePolicy, UnanalysedReason, Verdict } from "../../core/schema/Verdict.js"
import { VERDICTS } from "../../core/schema/Verdict.js"
import type { Judgement } from "./ResponseEvent.js"

/** The failure policy's judgement of an answer that was not judged for `reason`. */
export const unanalysedJudgement = (
  policy: FailurePolicy,
  reason: FailureReason,
  thinkingHash: string | "none"
): Judgement => ({
  verdict: failurePolicyVerdict(policy),
  thinkingHash,
  analysis: undefined,
  synthetic: syntheticReasonOf(reason),
  unanalysed: reason === "analysis_failed" ? undefined : reason,
  concerns: failurePolicyConcerns(policy, reason)
})

const rank = (verdict: Verdict): number => VERDICTS.indexOf(verdict)

/**
 * The judge's verdict on the part of an answer that could be read stands when it found something at
 * least as grave as the failure policy would say (a violation it read stays a violation); a clear on
 * a partly unread answer never does: the answer is then unanalysed, and the failure policy decides.
 */
export const judgedOrUnanalysed = (
  judged: Judgement,
  unread: UnanalysedReason | undefined,
  policy: FailurePolicy
): Judgement =>
  unread === undefined ||
  (judged.synthetic === undefined &&
    judged.verdict !== "clear" &&
    rank(judged.verdict) >= rank(failurePolicyVerdict(policy)))
    ? judged
    : unanalysedJudgement(policy, unread, judged.thinkingHash)
