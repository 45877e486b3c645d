/**
 * The AP-Trace draft of one response: its action from the tool calls, its decision from what the
 * judge read (the card values it judged against, the extraction confidence of the reasoning it read).
 */
import { describe, expect, it } from "@effect/vitest"
import { analyzeWithRules } from "../../../adapters/analysis/Rules.js"
import type { ExchangeOutcome } from "../../../adapters/gateway/ExchangeOutcome.js"
import { buildResponseEvent, type EventInput, type Judgement } from "../../../adapters/gateway/ResponseEvent.js"
import type { Extraction, ExtractedThinking } from "../../../adapters/providers/Provider.js"
import { DEFAULT_CONSCIENCE_VALUES } from "../../../core/schema/Conscience.js"
import { card } from "../store/Fixtures.js"

const complete: ExchangeOutcome = { kind: "complete", status: 200, bytes: 10, cause: undefined }
const agentCard = { ...card("agt-trace", 90, "card-trace"), values: { declared: ["honesty", "transparency"] } }

const extraction = (thinking: ExtractedThinking | undefined, toolCalls: Extraction["toolCalls"] = []): Extraction => ({
  thinking,
  redactedThinking: false,
  toolCalls,
  outputText: "Done.",
  model: "m",
  stopReason: "end_turn",
  providerError: undefined
})

/** The rules judge on the extraction's reasoning, as the gateway runs it. */
const judged = (x: Extraction): Judgement => {
  if (x.thinking === undefined)
    return { verdict: "clear", thinkingHash: "none", analysis: undefined, synthetic: "no_thinking_block" }
  const analysis = analyzeWithRules({
    thinking: x.thinking.text,
    card: agentCard,
    conscienceValues: DEFAULT_CONSCIENCE_VALUES,
    window: [],
    provider: "anthropic",
    model: x.model
  })
  return { verdict: "clear", thinkingHash: "h".repeat(64), analysis, synthetic: undefined }
}

const traceOf = (x: Extraction, judgement: Judgement = judged(x)) => {
  const input: EventInput = {
    agentId: "agt-trace",
    cardId: "card-trace",
    sessionId: "s-1",
    provider: "anthropic",
    outcome: complete,
    extraction: x,
    judgement,
    policy: undefined,
    now: new Date("2026-11-01T00:00:00.000Z")
  }
  return buildResponseEvent(input).trace
}

const native: ExtractedThinking = {
  text: "Let me answer the question plainly and check the numbers.",
  source: "thinking_blocks",
  confidence: 1
}

describe("trace action", () => {
  it("a tool call executes (the first of parallel calls names it); a plain answer recommends", () => {
    expect(
      traceOf(
        extraction(native, [
          { name: "delete_file", arguments: {} },
          { name: "other", arguments: {} }
        ])
      ).action
    ).toEqual({ type: "execute", name: "delete_file", category: "bounded" })
    expect(traceOf(extraction(native)).action).toEqual({ type: "recommend", name: "respond", category: "bounded" })
  })
})

describe("trace decision", () => {
  it("values_applied: the declared values of the card the judge read against; confidence: the extraction's", () => {
    expect(traceOf(extraction(native)).decision).toMatchObject({
      selected: "respond",
      values_applied: ["honesty", "transparency"],
      confidence: 1
    })
    const explicit = traceOf(extraction({ ...native, source: "reasoning_content", confidence: 0.9 }))
    expect(explicit.decision.confidence).toBe(0.9)
    const inferred = traceOf(extraction({ ...native, source: "fallback", confidence: 0.3 }))
    expect(inferred.decision.confidence).toBe(0.3)
  })

  it("no reasoning read by a judge: no values applied, confidence 0", () => {
    expect(traceOf(extraction(undefined)).decision).toMatchObject({ values_applied: [], confidence: 0 })
    const failed: Judgement = {
      verdict: "clear",
      thinkingHash: "h".repeat(64),
      analysis: undefined,
      synthetic: "analysis_failed"
    }
    expect(traceOf(extraction(native), failed).decision).toMatchObject({ values_applied: [], confidence: 0 })
  })
})
