/**
 * Judging one tool result's text and building its checkpoint (issue 28, items 5 and 6): the same
 * judge as an answer's reasoning (`Judging.ts`: the rules judge, the LLM judge when configured,
 * within ANALYSIS_TIMEOUT_MS, the failure policy when it fails), told that the text is a tool's
 * result (`scope: "tool_result"`: injected instructions, exfiltration, concerns against the card).
 * The LLM path (`ToolResultScreening.ts`) and the MCP proxy both call it.
 *
 * The judge reads the first `TOOL_RESULT_JUDGED_CHARS` of the text (`truncated` says when there was
 * more); the checkpoint's `thinking_block_hash` is the SHA-256 of the whole text, which is never
 * stored. The checkpoint has `analysis_metadata.analysis_scope: "tool_result"` and links an AP-Trace
 * whose action is the tool call (`type: "tool_call"`, `name` the tool, `unknown` when the request
 * does not say); it joins the agent's chain and log, and counts toward neither its reputation, AIP
 * drift nor auto-containment (the workers skip the scope).
 */
import * as Effect from "effect/Effect"
import type { GatewayEvent } from "../../core/schema/Event.js"
import type { EvidenceRedactionMode } from "../../core/schema/EvidenceRedaction.js"
import type { AnalysisModel } from "../analysis/AnalysisModel.js"
import type { AgentSettings } from "../bus/AgentState.js"
import { sha256Hex } from "../providers/Identity.js"
import { makeTextJudging } from "./Judging.js"
import { buildResponseEvent } from "./ResponseEvent.js"

/** How much of a result the judge reads (64 KiB of ASCII): the rest is hashed, not judged. */
export const TOOL_RESULT_JUDGED_CHARS = 65_536

/** The AP-Trace action type of a tool result's checkpoint: the tool call it answers. */
export const TOOL_CALL_ACTION = "tool_call"

/** The trace's action name when the request does not say which tool answered. */
export const UNKNOWN_TOOL = "unknown"

export interface ToolResultJudgingInput {
  readonly settings: AgentSettings
  readonly agentId: string
  /** `x-candor-agent`, validated, when sent. */
  readonly agentName?: string | undefined
  readonly sessionId: string
  /** The LLM provider on the LLM path, `mcp` on the MCP proxy. */
  readonly provider: string
  /** The model the request names, when it names one. */
  readonly model?: string | undefined
  /** The fairness key (the judge's circuit breaker is kept per tenant). */
  readonly tenant: string
  readonly toolName: string | undefined
  /** The result's text: judged (its first 64 KiB) and hashed here, never kept. */
  readonly text: string
  /** The text's SHA-256, when the caller already has it. */
  readonly hash?: string | undefined
}

export interface JudgedToolResult {
  /** SHA-256 (hex) of the result's text. */
  readonly hash: string
  /** The checkpoint and trace, to publish with the agent's events. */
  readonly event: GatewayEvent
}

/** Builds the function that judges one tool result and builds its event. */
export const makeToolResultJudging = (
  judge: AnalysisModel["Type"],
  timeoutMs: number,
  deploymentRedaction: EvidenceRedactionMode,
  now: () => Date
) => {
  const judgeText = makeTextJudging(judge, timeoutMs, deploymentRedaction)
  return (input: ToolResultJudgingInput): Effect.Effect<JudgedToolResult> => {
    const { settings, text } = input
    const hash = input.hash ?? sha256Hex(text)
    const truncated = text.length > TOOL_RESULT_JUDGED_CHARS
    return Effect.map(
      judgeText({
        settings,
        provider: input.provider,
        model: input.model,
        tenant: input.tenant,
        text: truncated ? text.slice(0, TOOL_RESULT_JUDGED_CHARS) : text,
        hash,
        scope: "tool_result"
      }),
      (judgement) => {
        const event = buildResponseEvent({
          agentId: input.agentId,
          agentName: input.agentName,
          cardId: settings.cardId ?? settings.card?.card_id,
          sessionId: input.sessionId,
          provider: input.provider,
          outcome: { kind: "complete", status: undefined, bytes: Buffer.byteLength(text), cause: undefined },
          extraction: undefined,
          judgement: { ...judgement, thinkingHash: hash },
          policy: undefined,
          now: now()
        })
        const name = input.toolName ?? UNKNOWN_TOOL
        const { checkpoint, trace } = event
        return {
          hash,
          event: {
            ...event,
            checkpoint: {
              ...checkpoint,
              model: input.model ?? checkpoint.model,
              analysis_metadata: {
                ...checkpoint.analysis_metadata,
                analysis_scope: "tool_result",
                truncated: truncated || checkpoint.analysis_metadata.truncated
              }
            },
            trace: {
              ...trace,
              action: { type: TOOL_CALL_ACTION, name, category: "bounded" },
              decision: { ...trace.decision, selected: name },
              context: {
                ...trace.context,
                metadata: { ...trace.context?.metadata, analysis_scope: "tool_result" }
              }
            }
          }
        }
      }
    )
  }
}
