/**
 * Choosing the judge from `ANALYSIS_MODEL`: `rules` (default), `anthropic:<model>` or
 * `openai:<model>`. A bad spec or a missing key fails the layer with a sentence an operator can act
 * on, at startup rather than on the first response.
 */
import { Duration, Either, Layer, Redacted, Schema } from "effect"
import type { AnalysisModel } from "./AnalysisModel.js"
import type { CircuitBreakerOptions } from "./CircuitBreaker.js"
import type { EvidenceRedaction } from "./Evidence.js"
import * as Llm from "./Llm.js"
import type { LlmProvider } from "./Llm.js"
import * as Rules from "./Rules.js"

export class InvalidAnalysisSpec extends Schema.TaggedError<InvalidAnalysisSpec>()("InvalidAnalysisSpec", {
  reason: Schema.String
}) {}

export type AnalysisSpec =
  { readonly kind: "rules" } | { readonly kind: "llm"; readonly provider: LlmProvider; readonly model: string }

export interface AnalysisLayerOptions {
  /** Required for LLM judges (`ANALYSIS_API_KEY`). */
  readonly apiKey?: Redacted.Redacted<string> | string | undefined
  /** `ANALYSIS_BASE_URL`; default the provider's public API. */
  readonly baseUrl?: string | undefined
  readonly timeout?: Duration.DurationInput | undefined
  readonly maxOutputTokens?: number | undefined
  readonly thinkingTokenBudget?: number | undefined
  readonly evidenceRedaction?: EvidenceRedaction | undefined
  readonly circuitBreaker?: CircuitBreakerOptions | undefined
  /** Connections to an LLM judge: as many as the judge calls a gateway makes at once (ANALYSIS_CONCURRENCY). */
  readonly connections?: number | undefined
}

export const parseAnalysisSpec = (spec: string): Either.Either<AnalysisSpec, InvalidAnalysisSpec> => {
  const trimmed = spec.trim()
  if (trimmed === "" || trimmed.toLowerCase() === "rules") return Either.right({ kind: "rules" })
  const colon = trimmed.indexOf(":")
  const provider = colon < 0 ? trimmed.toLowerCase() : trimmed.slice(0, colon).toLowerCase()
  const model = colon < 0 ? "" : trimmed.slice(colon + 1).trim()
  if (provider !== "anthropic" && provider !== "openai") {
    return Either.left(
      new InvalidAnalysisSpec({
        reason: `ANALYSIS_MODEL must be rules, anthropic:<model> or openai:<model>; got ${JSON.stringify(trimmed.slice(0, 60))}`
      })
    )
  }
  if (model === "")
    return Either.left(
      new InvalidAnalysisSpec({ reason: `ANALYSIS_MODEL ${provider}: needs a model name, e.g. ${provider}:<model>` })
    )
  return Either.right({ kind: "llm", provider, model })
}

const defined = <K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } =>
  (value === undefined ? {} : { [key]: value }) as { [P in K]?: V }

export const layerFromSpec = (
  spec: string,
  options: AnalysisLayerOptions = {}
): Layer.Layer<AnalysisModel, InvalidAnalysisSpec> => {
  const parsed = parseAnalysisSpec(spec)
  if (Either.isLeft(parsed)) return Layer.fail(parsed.left)
  const choice = parsed.right
  if (choice.kind === "rules") return Rules.layer(defined("evidenceRedaction", options.evidenceRedaction))
  const key = typeof options.apiKey === "string" ? Redacted.make(options.apiKey) : options.apiKey
  if (key === undefined || Redacted.value(key).trim() === "") {
    return Layer.fail(
      new InvalidAnalysisSpec({ reason: `ANALYSIS_MODEL ${choice.provider}:${choice.model} needs ANALYSIS_API_KEY` })
    )
  }
  if (options.baseUrl !== undefined && !/^https?:\/\/[^/\s]+/i.test(options.baseUrl)) {
    return Layer.fail(new InvalidAnalysisSpec({ reason: "ANALYSIS_BASE_URL must be an http(s) URL" }))
  }
  return Llm.layer({
    provider: choice.provider,
    model: choice.model,
    apiKey: key,
    ...defined("baseUrl", options.baseUrl),
    ...defined("timeout", options.timeout),
    ...defined("maxOutputTokens", options.maxOutputTokens),
    ...defined("thinkingTokenBudget", options.thinkingTokenBudget),
    ...defined("evidenceRedaction", options.evidenceRedaction),
    ...defined("circuitBreaker", options.circuitBreaker),
    ...defined("connections", options.connections)
  })
}
