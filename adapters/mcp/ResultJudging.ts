/**
 * A `tools/call` result judged (docs/mcp.md "Tool results"): the LLM path's judge and memory
 * (../gateway/ToolResultJudging.ts, ../gateway/ToolResultMemory.ts), a `tool_result` checkpoint
 * published with the agent's events; and the JSON-RPC error a withheld result is replaced by (a
 * violation, or a message Candor cannot read), which the caller sends in `enforce`.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type { AnalysisModel } from "../analysis/AnalysisModel.js"
import { makeToolResultJudging } from "../gateway/ToolResultJudging.js"
import { ToolResultMemory } from "../gateway/ToolResultMemory.js"
import { countMcpUnreadable, countToolResultJudged } from "../metrics/GatewayMetrics.js"
import { sha256Hex } from "../providers/Identity.js"
import { callResultText } from "./CallResultText.js"
import { errorMessage, serverAnswerOf, TOOL_RESULT_WITHHELD } from "./JsonRpc.js"
import { type Caller, type CallWatch, errorKind, PROVIDER, type ProxyContext } from "./ProxyContext.js"

/** How a `tools/call` result came out of judging: passed, or withheld (in `enforce`) with why. */
type ResultJudgement =
  | { readonly _tag: "pass" }
  | { readonly _tag: "withhold"; readonly reason: string; readonly checkpointId: string | null }

const PASS: ResultJudgement = { _tag: "pass" }

export type ResultJudging = ReturnType<typeof makeResultJudging>

export const makeResultJudging = ({ blocked, now, record, settings }: ProxyContext, judge: AnalysisModel["Type"]) => {
  const judgeToolResult = makeToolResultJudging(judge, settings.analysisTimeoutMs, settings.evidenceRedaction, now)
  /** The tool results each agent already had judged (ToolResultMemory.ts): each is judged once. */
  const toolResults = new ToolResultMemory(settings.toolResultMemory)

  /**
   * A `tools/call` result (docs/mcp.md "Tool results"): its text judged, unless this agent had it
   * judged already, and its checkpoint published with the agent's events; `withhold` when it is a
   * boundary violation (now or when first judged). The caller decides what that means in its mode.
   */
  const judgeResult = (caller: Caller, tool: string, result: unknown): Effect.Effect<ResultJudgement> =>
    Effect.suspend(() => {
      const text = callResultText(result)
      if (text === undefined)
        return Effect.succeed<ResultJudgement>({
          _tag: "withhold",
          reason: "the result is not a tool result Candor can read",
          checkpointId: null
        })
      if (text === "") return Effect.succeed(PASS)
      const hash = sha256Hex(text)
      const remembered = toolResults.recall(caller.agentId, hash)
      if (remembered === null) return Effect.succeed(PASS)
      if (remembered !== undefined)
        return Effect.succeed<ResultJudgement>({
          _tag: "withhold",
          reason: "it was judged a boundary violation before",
          checkpointId: remembered
        })
      return Effect.map(
        judgeToolResult({
          settings: caller.settings,
          agentId: caller.agentId,
          sessionId: caller.sessionId,
          provider: PROVIDER,
          tenant: caller.orgId,
          toolName: tool,
          text,
          hash
        }),
        ({ event }): ResultJudgement => {
          const { checkpoint } = event
          countToolResultJudged(checkpoint.verdict)
          const violates = checkpoint.verdict === "boundary_violation"
          toolResults.remember(caller.agentId, hash, violates ? checkpoint.checkpoint_id : null)
          record(caller, event)
          if (!violates) return PASS
          const categories = [...new Set(checkpoint.concerns.map((c) => c.category))].join(", ")
          return {
            _tag: "withhold",
            reason: `judged a boundary violation${categories === "" ? "" : ` (${categories})`}`,
            checkpointId: checkpoint.checkpoint_id
          }
        }
      )
    })

  /** The JSON-RPC error a withheld result is replaced by: the same id, the reason, the checkpoint. */
  const withheldMessage = (caller: Caller, watch: CallWatch, reason: string, checkpointId: string | null) => {
    const text = `the result of tool ${watch.tool} was withheld by Candor: ${reason}`
    blocked(caller, "enforce", text, checkpointId)
    return errorMessage(watch.id, TOOL_RESULT_WITHHELD, text, {
      candor: { rule: "tool_result", reason, tool_name: watch.tool, checkpoint_id: checkpointId }
    })
  }

  /**
   * One message of a held answer (the JSON body, or one SSE event's data), once complete: the bytes
   * to send the client. The answer to the call is judged and replaced when withheld; any other
   * message (a notification, an error answer, another id) passes as it is.
   */
  const settleMessage = (
    caller: Caller,
    watch: CallWatch,
    message: unknown
  ): Effect.Effect<{ readonly replacement: Buffer | undefined }> => {
    const answer = serverAnswerOf(message)
    if (answer === undefined || answer.id !== watch.id) return Effect.succeed({ replacement: undefined })
    return judgeResult(caller, watch.tool, answer.result).pipe(
      // A defect in judging never lets the result through unjudged, nor leaves the call unanswered.
      Effect.catchAllCause((cause) =>
        Effect.as(
          Effect.logWarning("MCP tool result not judged").pipe(
            Effect.annotateLogs({ error: errorKind(Cause.squash(cause)) })
          ),
          { _tag: "withhold", reason: "the result could not be judged", checkpointId: null } as const
        )
      ),
      Effect.map((judgement) => ({
        replacement:
          judgement._tag === "pass"
            ? undefined
            : withheldMessage(caller, watch, judgement.reason, judgement.checkpointId)
      }))
    )
  }

  /** The JSON-RPC error withholding a result Candor could not read (over the bound, not JSON): never passed unjudged. */
  const unreadableMessage = (caller: Caller, watch: CallWatch, reason: "too_large" | "not_json") => {
    countMcpUnreadable()
    return withheldMessage(
      caller,
      watch,
      reason === "too_large"
        ? `the result is larger than Candor judges (${settings.maxMessageBytes} bytes)`
        : "the result could not be read to be judged",
      null
    )
  }

  return { judgeResult, settleMessage, unreadableMessage }
}
