/**
 * One judge call for one answer, with its deadline (ANALYSIS_TIMEOUT_MS): the extracted reasoning's
 * SHA-256, the judge against the agent's card and conscience values, the verdict derived by
 * `core/Verdict.ts`. What was not judged gets the failure policy's verdict (`UnanalysedJudgement.ts`):
 * an unreadable answer without reasoning (no judge call), a judge past its deadline (`judge_timeout`),
 * a judge that failed (`analysis_failed`). The judge's text is redacted here, before the event that
 * carries it is published: the stricter of the deployment's mode and the agent's organization's
 * (`AgentSettings.evidenceRedaction`, pushed like the policy, so no database read per answer).
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { boundaryValueNames } from "../../core/ConscienceResolution.js"
import { DEFAULT_CONSCIENCE_VALUES } from "../../core/schema/Conscience.js"
import { type EvidenceRedactionMode, stricterRedaction } from "../../core/schema/EvidenceRedaction.js"
import { deriveVerdict } from "../../core/Verdict.js"
import type { AnalysisModel } from "../analysis/AnalysisModel.js"
import { redactAnalysis } from "../analysis/AnalysisRedaction.js"
import type { AgentSettings } from "../bus/AgentState.js"
import { sha256Hex } from "../providers/Identity.js"
import type { ReadAnswer } from "./AnswerReading.js"
import type { Judgement } from "./ResponseEvent.js"
import { judgedOrUnanalysed, unanalysedJudgement } from "./UnanalysedJudgement.js"

/** ANALYSIS_TIMEOUT_MS's default: AIP's analysis timeout. */
export const DEFAULT_ANALYSIS_TIMEOUT_MS = 10_000

export interface JudgingInput {
  readonly settings: AgentSettings
  readonly provider: string
  /** The fairness key (the judge's circuit breaker is kept per tenant). */
  readonly tenant: string
  readonly read: ReadAnswer
}

const NO_THINKING: Judgement = {
  verdict: "clear",
  thinkingHash: "none",
  analysis: undefined,
  synthetic: "no_thinking_block"
}

/** One text for the judge: an answer's reasoning, or a tool's result (`scope`). */
export interface TextJudgingInput {
  readonly settings: AgentSettings
  readonly provider: string
  readonly model: string | undefined
  readonly tenant: string
  readonly text: string
  /** The text's SHA-256 (hex), the checkpoint's `thinking_block_hash`. */
  readonly hash: string
  readonly scope?: "tool_result" | undefined
  /** Part of the answer went unread: a clear never stands (`judgedOrUnanalysed`). */
  readonly unread?: ReadAnswer["unanalysed"]
}

/** The judge's deadline: past it, a `Deadline` failure (the failure policy's `judge_timeout`). */
const deadline = (timeoutMs: number) =>
  Effect.timeoutFail({ duration: Duration.millis(timeoutMs), onTimeout: () => ({ _tag: "Deadline" }) as const })

/**
 * The judge on one text, within its deadline, its verdict derived (`core/Verdict.ts`), its evidence
 * redacted; a judge past its deadline or failed gives the failure policy's verdict.
 */
export const makeTextJudging =
  (judge: AnalysisModel["Type"], timeoutMs: number, deploymentRedaction: EvidenceRedactionMode = "none") =>
  ({ hash, model, provider, scope, settings, tenant, text, unread }: TextJudgingInput): Effect.Effect<Judgement> => {
    const policy = settings.failurePolicy
    const values = settings.conscienceValues ?? DEFAULT_CONSCIENCE_VALUES
    const redaction = stricterRedaction(deploymentRedaction, settings.evidenceRedaction ?? "none")
    const analyzed = judge.analyze({
      thinking: text,
      card: settings.card,
      conscienceValues: values,
      window: [], // the session window is the session actor's
      provider,
      model,
      tenant,
      ...(scope === undefined ? {} : { scope })
    })
    // A synchronous judge (the rules judge) gets no deadline: it answers before one could fire.
    return (judge.synchronous === true ? analyzed : analyzed.pipe(deadline(timeoutMs))).pipe(
      Effect.map((judged): Judgement => {
        const analysis = redactAnalysis(judged, redaction)
        return judgedOrUnanalysed(
          {
            verdict: deriveVerdict(analysis.concerns, boundaryValueNames(values)),
            thinkingHash: hash,
            analysis,
            synthetic: analysis.synthetic_reason
          },
          unread,
          policy
        )
      }),
      Effect.catchAllCause((cause) => {
        const failure = cause._tag === "Fail" ? cause.error : undefined
        const timedOut =
          failure?._tag === "Deadline" || (failure?._tag === "AnalysisFailed" && failure.cause === "timeout")
        return Effect.succeed(unanalysedJudgement(policy, timedOut ? "judge_timeout" : "analysis_failed", hash))
      })
    )
  }

export const makeJudging = (
  judge: AnalysisModel["Type"],
  timeoutMs: number,
  deploymentRedaction: EvidenceRedactionMode = "none"
) => {
  const judgeText = makeTextJudging(judge, timeoutMs, deploymentRedaction)
  return ({ provider, read, settings, tenant }: JudgingInput): Effect.Effect<Judgement> => {
    const extraction = read.extraction
    const thinking = extraction?.thinking
    if (thinking === undefined) {
      return Effect.succeed(
        read.unanalysed === undefined
          ? NO_THINKING
          : unanalysedJudgement(settings.failurePolicy, read.unanalysed, "none")
      )
    }
    return judgeText({
      settings,
      provider,
      model: extraction?.model,
      tenant,
      text: thinking.text,
      hash: sha256Hex(thinking.text),
      unread: read.unanalysed
    })
  }
}
