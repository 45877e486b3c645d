/**
 * Builds the one event the gateway publishes per response, a value of the `GatewayEvent` schema
 * (`core/schema/Event.ts`, which the worker decodes it with): a checkpoint draft and an AP-Trace
 * draft (linked by construction: the checkpoint's `linked_trace_id` is the trace's id), hashes and
 * metadata. Never prompt, response or thinking text: the thinking is represented by its SHA-256.
 *
 * With a tool policy in force, the trace's `context.metadata` carries `policy_verdict` (the
 * response's tool calls, evaluated; never acted on after the fact) and `policy` (mode, what
 * `X-Policy-Verdict` said for the request, findings), and a tool call the policy forbids makes the
 * trace's action category `forbidden` (an escalation trigger, `escalation_trigger`).
 */
import { randomUUID } from "node:crypto"
import { judgeConscienceContext } from "../../core/ConscienceContext.js"
import type { PolicyEvaluation, PolicyFinding, PolicyVerdict } from "../../core/Policy.js"
import type { IntegrityCheckpoint } from "../../core/schema/Checkpoint.js"
import type { GatewayEvent } from "../../core/schema/Event.js"
import type { APTraceDraft } from "../../core/schema/Trace.js"
import type { Concern } from "../../core/schema/Concern.js"
import type { PolicyEnforcementMode, SyntheticReason, UnanalysedReason, Verdict } from "../../core/schema/Verdict.js"
import { recommendedAction } from "../../core/Verdict.js"
import type { AnalysisResult } from "../analysis/AnalysisModel.js"
import type { Extraction } from "../providers/Provider.js"
import type { ExchangeOutcome } from "./ExchangeOutcome.js"

export interface Judgement {
  readonly verdict: Verdict
  readonly thinkingHash: string | "none"
  readonly analysis: AnalysisResult | undefined
  readonly synthetic: SyntheticReason | undefined
  /** With `synthetic: "unanalysed"`: why (`analysis_metadata.unanalysed_reason`). */
  readonly unanalysed?: UnanalysedReason | undefined
  /** Concerns not from a judge: a `fail_closed` verdict's failure-policy concern (core/FailurePolicy.ts). */
  readonly concerns?: ReadonlyArray<Concern> | undefined
}

/** The tool policy's part of one exchange. */
export interface PolicyRecord {
  readonly mode: PolicyEnforcementMode
  /** What `X-Policy-Verdict` said for the tools the request declared. */
  readonly requestVerdict: PolicyVerdict
  /** The request's tools could not be read (its body undecodable or not JSON): they went unchecked. */
  readonly requestUnreadable: boolean
  /** The tool calls of the response, evaluated. */
  readonly response: PolicyEvaluation
}

export interface EventInput {
  readonly agentId: string
  /** `x-candor-agent`, validated, when sent: on the event only, never in the checkpoint or trace. */
  readonly agentName?: string | undefined
  /** The agent's active card, when the gateway knows it; else the actor binds one. */
  readonly cardId: string | undefined
  readonly sessionId: string
  readonly provider: string
  readonly outcome: ExchangeOutcome
  readonly extraction: Extraction | undefined
  readonly judgement: Judgement
  readonly policy: PolicyRecord | undefined
  readonly now: Date
}

/** Before the actor binds the agent's active card. */
export const UNBOUND_CARD = "card-unbound"

export const buildResponseEvent = (input: EventInput): GatewayEvent => {
  const { agentId, extraction, judgement, now, sessionId } = input
  const timestamp = now.toISOString()
  const traceId = `tr-${randomUUID()}`
  const analysis = judgement.analysis
  const toolCall = extraction?.toolCalls[0]
  const policy = input.policy
  const cardId = input.cardId ?? UNBOUND_CARD
  const trace: APTraceDraft = {
    trace_id: traceId,
    agent_id: agentId,
    ...(input.cardId !== undefined ? { card_id: input.cardId } : {}),
    timestamp,
    action:
      toolCall !== undefined
        ? { type: "execute", name: toolCall.name, category: actionCategory(toolCall.name, policy?.response) }
        : { type: "recommend", name: "respond", category: "bounded" },
    decision: {
      selected: toolCall?.name ?? "respond",
      selection_reasoning: analysis?.reasoning_summary ?? "",
      values_applied: analysis?.values_checked ?? [],
      confidence: decisionConfidence(extraction, judgement)
    },
    context: {
      session_id: sessionId,
      metadata: {
        provider: input.provider,
        outcome: input.outcome.kind,
        verdict: judgement.verdict,
        ...(policy !== undefined ? policyMetadata(policy) : {})
      }
    }
  }
  const concerns = judgement.concerns ?? analysis?.concerns ?? []
  const checkpoint: IntegrityCheckpoint = {
    checkpoint_id: `ic-${randomUUID()}`,
    agent_id: agentId,
    card_id: cardId,
    session_id: sessionId,
    timestamp,
    thinking_block_hash: judgement.thinkingHash,
    provider: input.provider,
    model: extraction?.model ?? "unknown",
    verdict: judgement.verdict,
    concerns,
    reasoning_summary: analysis?.reasoning_summary ?? syntheticSummary(judgement),
    // The judge's part; the agent's actor adds the layers of the resolution it certifies.
    conscience_context: judgeConscienceContext(analysis?.conscience, concerns),
    // The session actor assigns the real position; the gateway does not see the window.
    window_position: { index: 0, window_size: 0 },
    analysis_metadata: {
      analysis_model: analysis?.analysis_model ?? "none",
      analysis_duration_ms: analysis?.analysis_duration_ms ?? 0,
      thinking_tokens_original: analysis?.thinking_tokens_original ?? 0,
      thinking_tokens_analyzed: analysis?.thinking_tokens_analyzed ?? 0,
      truncated: analysis?.truncated ?? false,
      extraction_confidence: extraction?.thinking?.confidence ?? null,
      ...(analysis?.llm_verdict !== undefined ? { llm_verdict: analysis.llm_verdict } : {}),
      ...(input.outcome.kind !== "complete" ? { partial: true } : {}),
      ...(judgement.unanalysed !== undefined ? { unanalysed_reason: judgement.unanalysed } : {})
    },
    linked_trace_id: trace.trace_id,
    re_evaluated_at: null,
    original_verdict: null,
    ...(judgement.synthetic !== undefined ? { synthetic: true, synthetic_reason: judgement.synthetic } : {}),
    ...(analysis !== undefined && analysis.cross_validation_warnings.length > 0
      ? { cross_validation_warnings: analysis.cross_validation_warnings }
      : {})
  }
  return {
    type: "gateway.response",
    agent_id: agentId,
    ...(input.agentName !== undefined ? { agent_name: input.agentName } : {}),
    session_id: sessionId,
    provider: input.provider,
    outcome: input.outcome,
    checkpoint,
    trace
  }
}

/**
 * How far the record can vouch for the decision: the extraction confidence of the reasoning a judge
 * read (1.0 a native thinking block, 0.9 explicit reasoning, 0.3 reasoning inferred from the answer),
 * 0 when no judge read any (no reasoning, the judge failed, or it was below the evidence threshold).
 */
const decisionConfidence = (extraction: Extraction | undefined, judgement: Judgement): number => {
  const confidence = extraction?.thinking?.confidence
  return judgement.analysis === undefined || judgement.synthetic !== undefined || confidence === undefined
    ? 0
    : confidence
}

/**
 * A call the policy forbids (a forbidden rule, an action the card forbids) is a `forbidden` action;
 * one that trips an escalation trigger (a warning, or a violation for a `deny` trigger), an `escalation_trigger`.
 */
const actionCategory = (
  tool: string,
  evaluation: PolicyEvaluation | undefined
): "bounded" | "escalation_trigger" | "forbidden" => {
  if (evaluation === undefined) return "bounded"
  if (evaluation.violations.some((v) => v.tool === tool && (v.type === "forbidden" || v.type === "card_forbidden")))
    return "forbidden"
  const escalation = (f: PolicyFinding) => f.tool === tool && f.type === "escalation"
  return evaluation.warnings.some(escalation) || evaluation.violations.some(escalation)
    ? "escalation_trigger"
    : "bounded"
}

const policyMetadata = (policy: PolicyRecord): Record<string, unknown> => ({
  policy_verdict: policy.response.verdict,
  policy: {
    mode: policy.mode,
    request_verdict: policy.requestVerdict,
    ...(policy.requestUnreadable ? { request_unreadable: true } : {}),
    tools_evaluated: policy.response.tools_evaluated,
    violations: policy.response.violations,
    warnings: policy.response.warnings
  }
})

const syntheticSummary = (judgement: Judgement): string => {
  const policy = judgement.verdict === "boundary_violation" ? " (failure policy: fail_closed)" : ""
  switch (judgement.synthetic) {
    case "analysis_failed":
      return `analysis failed${policy}`
    case "no_thinking_block":
      return "no thinking block"
    case "unanalysed":
      return `not analysed: ${judgement.unanalysed ?? "unknown"}${policy}`
    default:
      return ""
  }
}

/** The text injected into the agent's next request after a violation in `nudge` mode. */
/** The checkpoint a nudge's text names (`nudgeText`), for its enforcement record; undefined when it names none. */
export const nudgeCheckpoint = (text: string): string | undefined =>
  /\(checkpoint (\S{1,256})\) was flagged/.exec(text)?.[1]

export const nudgeText = (event: GatewayEvent): string => {
  const concern = event.checkpoint.concerns[0]
  return (
    "[INTEGRITY NOTICE — Candor]\n" +
    `Your previous response (checkpoint ${event.checkpoint.checkpoint_id}) was flagged as a boundary violation.\n` +
    (concern !== undefined ? `Concern: ${concern.category} (${concern.severity}). ` : "") +
    `Recommended action: ${recommendedAction(event.checkpoint.verdict, event.checkpoint.concerns)}.`
  )
}
