/**
 * The judge: reads an agent's reasoning against its Alignment Card and conscience values and
 * returns concerns. Layers: `rules` (offline, deterministic, the default) and an LLM judge
 * (`anthropic:<model>` / `openai:<model>`). The verdict is never the judge's: the gateway derives it
 * with `core/Verdict.ts`; the judge's own verdict is kept only as a cross-check.
 */
import { Context, type Effect, Schema } from "effect"
import type { JudgeConsultation } from "../../core/ConscienceContext.js"
import type { AlignmentCard } from "../../core/schema/Card.js"
import type { Concern } from "../../core/schema/Concern.js"
import type { ConscienceValue } from "../../core/schema/Conscience.js"
import type { Verdict } from "../../core/schema/Verdict.js"

export interface AnalysisRequest {
  /** The extracted reasoning. It lives only in memory for the call and is never logged. */
  readonly thinking: string
  readonly card: typeof AlignmentCard.Type | undefined
  readonly conscienceValues: ReadonlyArray<typeof ConscienceValue.Type>
  /** Recent verdicts of the session (AIP window), oldest first. */
  readonly window: ReadonlyArray<{ readonly verdict: Verdict; readonly reasoning_summary: string }>
  readonly provider: string
  readonly model: string | undefined
  /**
   * Whose share of the judge this call uses (the gateway's fairness key: the agent's organization,
   * else its credential's hash). An LLM judge keeps one circuit breaker per tenant, so one tenant's
   * failing or hanging calls never open the circuit for the others. Absent: one shared tenant.
   */
  readonly tenant?: string | undefined
  /**
   * What `thinking` holds: the agent's reasoning (absent, the usual), or the text of a tool's result
   * the agent is about to read (`tool_result`, issue 28), judged for injected instructions, not intent.
   */
  readonly scope?: "tool_result" | undefined
}

export interface AnalysisResult {
  /** Evidence is at most 200 characters (and redacted when configured). */
  readonly concerns: ReadonlyArray<typeof Concern.Type>
  readonly reasoning_summary: string
  /** The judge's own verdict, if it gave one: a cross-check, never the verdict. */
  readonly llm_verdict: Verdict | undefined
  /** Which judge: `rules` or `anthropic:<model>` / `openai:<model>`. */
  readonly analysis_model: string
  readonly analysis_duration_ms: number
  readonly thinking_tokens_original: number
  readonly thinking_tokens_analyzed: number
  readonly truncated: boolean
  /** The judge's raw output (or the rules engine's JSON), whose hash becomes `analysis_hash`. */
  readonly raw_analysis: string
  readonly cross_validation_warnings: ReadonlyArray<string>
  /**
   * The declared values (`values.declared`) of the card the judge read the reasoning against; empty
   * without a card or when no judge read it. The AP-Trace's `decision.values_applied`.
   */
  readonly values_checked: ReadonlyArray<string>
  /**
   * Which conscience values the judge applied and what it reported about them: the checkpoint's
   * `conscience_context` (core/ConscienceContext.ts). Absent when no judge weighed any value.
   */
  readonly conscience?: JudgeConsultation
  /**
   * Set when no judge looked at the text (added, optional): the LLM judge returns a clear with
   * `below_evidence_threshold` for reasoning under 100 estimated tokens, as AIP does.
   */
  readonly synthetic_reason?: "below_evidence_threshold"
}

export class AnalysisFailed extends Schema.TaggedError<AnalysisFailed>()("AnalysisFailed", {
  /** Human-readable and free of thinking text, keys and judge output. */
  reason: Schema.String,
  /** `timeout`: the judge did not answer within its deadline (the gateway records `judge_timeout`). */
  cause: Schema.optional(Schema.Literal("timeout"))
}) {}

export class AnalysisModel extends Context.Tag("candor/adapters/analysis/AnalysisModel")<
  AnalysisModel,
  {
    readonly name: string
    readonly analyze: (request: AnalysisRequest) => Effect.Effect<AnalysisResult, AnalysisFailed>
    /**
     * `true` when `analyze` answers in the calling fiber without waiting (the rules judge): callers
     * set no deadline on it. A deadline could not interrupt synchronous work anyway, and racing one
     * costs a fiber, a timer and a wake-up per call on the gateway's hot path.
     */
    readonly synchronous?: boolean
  }
>() {}
