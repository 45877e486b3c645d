/**
 * Verdicts and the modes that decide what Candor does about them.
 */
import { literalUnion } from "./Literals.js"

/** Ascending by gravity, so the verdict of several concerns is the maximum. */
export const VERDICTS = ["clear", "review_needed", "boundary_violation"] as const
export const Verdict = literalUnion(VERDICTS, {
  identifier: "Verdict",
  description: "Integrity verdict of a checkpoint"
})
export type Verdict = typeof Verdict.Type

export const RECOMMENDED_ACTIONS = ["continue", "log_and_continue", "pause_for_review", "deny_and_escalate"] as const
export const RecommendedAction = literalUnion(RECOMMENDED_ACTIONS, {
  identifier: "RecommendedAction",
  description: "What the caller should do after a verdict"
})
export type RecommendedAction = typeof RecommendedAction.Type

export const ENFORCEMENT_MODES = ["observe", "nudge", "enforce"] as const
export const EnforcementMode = literalUnion(ENFORCEMENT_MODES, {
  identifier: "EnforcementMode",
  description:
    "observe records only (default); nudge feeds the violation back; enforce blocks non-streaming requests with 403"
})
export type EnforcementMode = typeof EnforcementMode.Type
export const DEFAULT_ENFORCEMENT_MODE: EnforcementMode = "observe"

export const POLICY_ENFORCEMENT_MODES = ["warn", "enforce", "off"] as const
export const PolicyEnforcementMode = literalUnion(POLICY_ENFORCEMENT_MODES, {
  identifier: "PolicyEnforcementMode",
  description: "Tool policy: warn logs only, enforce blocks with 403, off disables"
})
export type PolicyEnforcementMode = typeof PolicyEnforcementMode.Type

export const FAILURE_POLICIES = ["fail_open", "fail_closed"] as const
export const FailurePolicy = literalUnion(FAILURE_POLICIES, {
  identifier: "FailurePolicy",
  description: "When analysis fails: fail_open records a synthetic clear, fail_closed a synthetic boundary_violation"
})
export type FailurePolicy = typeof FailurePolicy.Type

export const SYNTHETIC_REASONS = [
  "no_thinking_block",
  "analysis_failed",
  "below_evidence_threshold",
  "unanalysed"
] as const
export const SyntheticReason = literalUnion(SYNTHETIC_REASONS, {
  identifier: "SyntheticReason",
  description:
    "Why a verdict was produced without a judge; `unanalysed`: the answer could not be read or judged (see `analysis_metadata.unanalysed_reason`), the agent's failure policy decided"
})
export type SyntheticReason = typeof SyntheticReason.Type

/**
 * Why an answered exchange was not analysed (issue 24: never a silent clear): its content coding
 * could not be decoded, its body could not be parsed, the judge did not answer within
 * ANALYSIS_TIMEOUT_MS, or its organization's share of the analysis queue was full.
 */
export const UNANALYSED_REASONS = ["undecodable_encoding", "unparseable_body", "judge_timeout", "over_share"] as const
export const UnanalysedReason = literalUnion(UNANALYSED_REASONS, {
  identifier: "UnanalysedReason",
  description: "Why an answered exchange was recorded without analysis"
})
export type UnanalysedReason = typeof UnanalysedReason.Type
