/**
 * The AP-Trace `action` of one response, from its tool calls (AAP §5).
 *
 * - A tool call is the model acting: `{type: "execute", name: <tool>}`. With parallel calls the
 *   first one names the action (AP-Trace has one action per trace); the gateway may emit one trace
 *   per call instead.
 * - No tool call is a plain answer: `{type: "recommend", name: "respond"}`.
 *
 * The category starts as `bounded`; the card checks that raise it to `escalation_trigger` or
 * `forbidden` (the card's `autonomy_envelope`) run later, against the card, not here.
 */
import type { ExtractedToolCall } from "./Provider.js"

export type TraceActionType = "recommend" | "execute" | "escalate" | "deny"
export type TraceActionCategory = "bounded" | "escalation_trigger" | "forbidden"

export interface TraceAction {
  readonly type: TraceActionType
  readonly name: string
  readonly category: TraceActionCategory
}

export const RESPOND_ACTION: TraceAction = { type: "recommend", name: "respond", category: "bounded" }

export const traceActionOf = (toolCalls: ReadonlyArray<ExtractedToolCall>): TraceAction => {
  const first = toolCalls[0]
  return first === undefined ? RESPOND_ACTION : { type: "execute", name: first.name === "" ? "unknown_tool" : first.name, category: "bounded" }
}
