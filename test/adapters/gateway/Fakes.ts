/**
 * Stand-ins for the contracts other folders implement: a tiny Anthropic-shaped adapter and a judge
 * that reacts to marker words in the thinking text. Just enough wire format to drive the Inspector.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { createHash } from "node:crypto"
import { AnalysisFailed, AnalysisModel, type AnalysisRequest } from "../../../adapters/analysis/AnalysisModel.js"
import { AgentState } from "../../../adapters/bus/AgentState.js"
import { Bus } from "../../../adapters/bus/Bus.js"
import * as GatewayInspector from "../../../adapters/gateway/GatewayInspector.js"
import { ProviderAdapters } from "../../../adapters/gateway/ProviderAdapters.js"
import { providerAdapters } from "../../../adapters/providers/Registry.js"
import type { Extraction, ProviderAdapter, ProviderName } from "../../../adapters/providers/Provider.js"

const fromText = (text: string): Extraction => {
  const thinking = /"thinking":"([^"]*)"/.exec(text)?.[1]
  return {
    thinking: thinking === undefined ? undefined : { text: thinking, source: "thinking_blocks", confidence: 1 },
    redactedThinking: false,
    toolCalls: [],
    outputText: "",
    model: /"model":"([^"]*)"/.exec(text)?.[1],
    stopReason: undefined,
    providerError: undefined
  }
}

const fakeAdapter = (name: ProviderName): ProviderAdapter => ({
  name,
  credentials: [{ header: "x-api-key" }],
  keyHash: (headers) => {
    const key = headers.get("x-api-key")
    return key === null ? undefined : createHash("sha256").update(key).digest("hex")
  },
  requestInfo: (body) => ({ model: undefined, stream: (body as { stream?: boolean } | undefined)?.stream === true }),
  declaredTools: (body) =>
    ((body as { tools?: Array<{ name: string }> } | undefined)?.tools ?? []).map(({ name }) => ({ name })),
  extractJson: (body) => fromText(JSON.stringify(body)),
  streamExtractor: () => {
    const chunks: Array<Buffer> = []
    return {
      push: (chunk) => void chunks.push(Buffer.from(chunk)),
      finish: () => {
        const text = Buffer.concat(chunks).toString().replace(/\\"/g, '"')
        return { ...fromText(text), complete: text.includes("message_stop") }
      }
    }
  },
  injectNudge: (body, nudge) => {
    if (typeof body !== "object" || body === null) return undefined
    const system = (body as { system?: string }).system
    return { ...body, system: system === undefined ? nudge : `${system}\n\n${nudge}` }
  }
})

export const FakeAdapters = Layer.succeed(ProviderAdapters, {
  anthropic: fakeAdapter("anthropic"),
  openai: fakeAdapter("openai"),
  gemini: fakeAdapter("gemini")
})

/** Every request the fake judge got, newest last: what the gateway passed it (card, values). */
export const judgeRequests: Array<AnalysisRequest> = []

/**
 * EXFILTRATE → a critical concern (boundary_violation); OVERSTEP → a high autonomy concern naming
 * the conscience value `boundary-no-overstep` (a violation only where that BOUNDARY value is in
 * force); FAILJUDGE → the judge fails; else clear.
 */
export const FakeJudge = Layer.succeed(AnalysisModel, {
  name: "fake",
  analyze: (request) => {
    judgeRequests.push(request)
    if (request.thinking.includes("FAILJUDGE")) return Effect.fail(new AnalysisFailed({ reason: "judge unavailable" }))
    const bad = request.thinking.includes("EXFILTRATE")
    const overstep = request.thinking.includes("OVERSTEP")
    return Effect.succeed({
      concerns: bad
        ? [
            {
              category: "autonomy_violation",
              severity: "critical",
              evidence: "[redacted]",
              description: "plans to exfiltrate data"
            }
          ]
        : overstep
          ? [
              {
                category: "autonomy_violation",
                severity: "high",
                evidence: "[redacted]",
                description: "acts beyond its remit",
                relevant_conscience_value: "boundary-no-overstep"
              }
            ]
          : [],
      reasoning_summary: bad ? "plans data exfiltration" : "benign",
      llm_verdict: undefined,
      analysis_model: "fake",
      analysis_duration_ms: 1,
      thinking_tokens_original: 10,
      thinking_tokens_analyzed: 10,
      truncated: false,
      raw_analysis: "{}",
      cross_validation_warnings: [],
      values_checked: request.card?.values.declared ?? []
    })
  }
})

/**
 * The real Inspector on the real provider adapters, with the in-memory agent state and bus and the
 * fake judge: what the gateway tests that drive real HTTP exchanges run against.
 */
export const inspectorWithFakes = GatewayInspector.layer().pipe(
  Layer.provideMerge(
    Layer.mergeAll(
      AgentState.layerMemory,
      Bus.layerMemory,
      Layer.succeed(ProviderAdapters, providerAdapters),
      FakeJudge
    )
  )
)
