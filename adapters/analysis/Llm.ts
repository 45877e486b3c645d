/**
 * The LLM judge: `anthropic:<model>` (Messages API) or `openai:<model>` (Chat Completions), over a
 * pooled undici `Agent`. Each call is bounded by a timeout and guarded by a circuit breaker; the
 * answer is parsed as untrusted input (`JudgeOutput.ts`) and the verdict is derived, not taken.
 *
 * Privacy: the thinking text goes only into the request body. It is never logged, and no error
 * carries it, the judge's answer or the API key (which stays `Redacted` until the header is built).
 */
import { Clock, Duration, Effect, Either, Layer, Redacted } from "effect"
import { Agent, request as undiciRequest } from "undici"
import { boundaryValueNames } from "../../core/ConscienceResolution.js"
import { deriveVerdict } from "../../core/Verdict.js"
import { AnalysisFailed, AnalysisModel, type AnalysisRequest, type AnalysisResult } from "./AnalysisModel.js"
import { type CircuitBreakerOptions, CircuitOpen, makeKeyedCircuitBreaker } from "./CircuitBreaker.js"
import { DEFAULT_MIN_EVIDENCE_TOKENS, estimateTokens, type EvidenceRedaction, redactConcerns } from "./Evidence.js"
import { crossValidate, judgedEntries, parseJudgeOutput } from "./JudgeOutput.js"
import { buildConsciencePrompt, type ConsciencePrompt } from "./Prompt.js"

export type LlmProvider = "anthropic" | "openai"

export const DEFAULT_BASE_URLS: Readonly<Record<LlmProvider, string>> = {
  anthropic: "https://api.anthropic.com",
  openai: "https://api.openai.com"
}

export interface LlmJudgeOptions {
  readonly provider: LlmProvider
  readonly model: string
  readonly apiKey: Redacted.Redacted<string>
  /** Default: the provider's public API. Paths `/v1/messages` or `/v1/chat/completions` are appended. */
  readonly baseUrl?: string
  /** Default 10 s (AIP `DEFAULT_ANALYSIS_TIMEOUT_MS`). */
  readonly timeout?: Duration.DurationInput
  /** Output token cap sent to the provider; default 1024. */
  readonly maxOutputTokens?: number
  /** Thinking token budget before head/tail truncation; default 4096. */
  readonly thinkingTokenBudget?: number
  /** Below this many estimated tokens: synthetic clear, no call; default 100. */
  readonly minEvidenceTokens?: number
  readonly evidenceRedaction?: EvidenceRedaction
  readonly circuitBreaker?: CircuitBreakerOptions
  /**
   * Connections to the judge; default 16. Each carries one call at a time (HTTP/1.1), so a gateway
   * judging N calls at once (ANALYSIS_CONCURRENCY) needs N of them, else calls queue for a connection.
   */
  readonly connections?: number
}

const MAX_RESPONSE_BYTES = 1024 * 1024

/** The breaker's key for calls that name no tenant. */
const SHARED_TENANT = ""

/** Why a call failed, before it becomes a human sentence. */
type CallError =
  | { readonly _tag: "Timeout" }
  | { readonly _tag: "Status"; readonly status: number }
  | { readonly _tag: "Network"; readonly code: string }

/** Client errors a request's content can cause say nothing about the judge's health. */
const countsForBreaker = (error: CallError): boolean =>
  !(error._tag === "Status" && [400, 413, 422].includes(error.status))

const formatDuration = (millis: number): string =>
  millis >= 1000 && millis % 1000 === 0 ? `${millis / 1000} s` : `${millis} ms`

const requestBody = (options: LlmJudgeOptions, prompt: ConsciencePrompt, maxTokens: number): unknown =>
  options.provider === "anthropic"
    ? {
        model: options.model,
        max_tokens: maxTokens,
        temperature: 0,
        // The stable block (card and values) carries the cache breakpoint: it caches the whole prefix.
        system: [
          { type: "text", text: prompt.system },
          { type: "text", text: prompt.stable, cache_control: { type: "ephemeral" } }
        ],
        messages: [{ role: "user", content: prompt.dynamic }]
      }
    : {
        model: options.model,
        max_completion_tokens: maxTokens,
        response_format: { type: "json_object" },
        // System, then the stable part first in the user turn: OpenAI caches shared prefixes itself.
        messages: [
          { role: "system", content: prompt.system },
          { role: "user", content: `${prompt.stable}\n\n${prompt.dynamic}` }
        ]
      }

export const requestHeaders = (options: Pick<LlmJudgeOptions, "provider" | "apiKey">): Record<string, string> =>
  options.provider === "anthropic"
    ? {
        "content-type": "application/json",
        "anthropic-version": "2023-06-01",
        "x-api-key": Redacted.value(options.apiKey)
      }
    : { "content-type": "application/json", authorization: `Bearer ${Redacted.value(options.apiKey)}` }

/** The judge's text answer from the provider's envelope, or undefined. */
export const answerText = (provider: LlmProvider, body: string): string | undefined => {
  let json: unknown
  try {
    json = JSON.parse(body)
  } catch {
    return undefined
  }
  if (typeof json !== "object" || json === null) return undefined
  if (provider === "anthropic") {
    const content = (json as { content?: unknown }).content
    if (!Array.isArray(content)) return undefined
    const texts = content.flatMap((block: unknown) =>
      typeof block === "object" &&
      block !== null &&
      (block as { type?: unknown }).type === "text" &&
      typeof (block as { text?: unknown }).text === "string"
        ? [(block as { text: string }).text]
        : []
    )
    return texts.length > 0 ? texts.join("") : undefined
  }
  const choices = (json as { choices?: unknown }).choices
  const content = Array.isArray(choices)
    ? (choices[0] as { message?: { content?: unknown } } | undefined)?.message?.content
    : undefined
  return typeof content === "string" ? content : undefined
}

export const makeLlmJudge = (options: LlmJudgeOptions) =>
  Effect.gen(function* () {
    const name = `${options.provider}:${options.model}`
    const base = (options.baseUrl ?? DEFAULT_BASE_URLS[options.provider]).replace(/\/+$/, "")
    const url = `${base}${options.provider === "anthropic" ? "/v1/messages" : "/v1/chat/completions"}`
    const timeoutMillis = Duration.toMillis(options.timeout ?? Duration.seconds(10))
    const maxTokens = options.maxOutputTokens ?? 1024
    const minTokens = options.minEvidenceTokens ?? DEFAULT_MIN_EVIDENCE_TOKENS
    const redaction = options.evidenceRedaction ?? "none"
    // One circuit per tenant (AnalysisRequest.tenant): a tenant whose calls fail or hang opens its own.
    const breaker = yield* makeKeyedCircuitBreaker(options.circuitBreaker)
    const dispatcher = yield* Effect.acquireRelease(
      Effect.sync(
        () =>
          new Agent({
            connections: options.connections ?? 16,
            keepAliveTimeout: 30_000,
            maxResponseSize: MAX_RESPONSE_BYTES
          })
      ),
      (agent) => Effect.promise(() => agent.close().catch(() => undefined))
    )

    const post = (body: string): Effect.Effect<string, CallError> =>
      Effect.tryPromise({
        try: async (signal) => {
          const response = await undiciRequest(url, {
            dispatcher,
            method: "POST",
            headers: requestHeaders(options),
            body,
            signal
          })
          const text = await response.body.text()
          return { status: response.statusCode, text }
        },
        // Only the error code survives: undici messages can include request details.
        catch: (error): CallError => ({
          _tag: "Network",
          code:
            typeof (error as { code?: unknown })?.code === "string"
              ? (error as { code: string }).code
              : "request failed"
        })
      }).pipe(
        Effect.timeoutFail({
          duration: Duration.millis(timeoutMillis),
          onTimeout: (): CallError => ({ _tag: "Timeout" })
        }),
        Effect.flatMap(({ status, text }) =>
          status >= 200 && status < 300 ? Effect.succeed(text) : Effect.fail<CallError>({ _tag: "Status", status })
        )
      )

    const describe = (error: CallError | CircuitOpen): string => {
      if (error instanceof CircuitOpen) return "judge circuit open"
      switch (error._tag) {
        case "Timeout":
          return `judge timed out after ${formatDuration(timeoutMillis)}`
        case "Status":
          return `judge answered ${error.status}`
        case "Network":
          return `judge unreachable (${error.code})`
      }
    }

    const analyze = (request: AnalysisRequest): Effect.Effect<AnalysisResult, AnalysisFailed> =>
      Effect.gen(function* () {
        const started = yield* Clock.currentTimeMillis
        const tokens = estimateTokens(request.thinking)
        // A tool result's injection is often one sentence: no evidence threshold for it.
        if (tokens < minTokens && request.scope !== "tool_result") return belowThreshold(name, tokens, minTokens)
        const prompt = buildConsciencePrompt(request, {
          ...(options.thinkingTokenBudget === undefined ? {} : { thinkingTokenBudget: options.thinkingTokenBudget })
        })
        const body = yield* breaker
          .protect(
            request.tenant ?? SHARED_TENANT,
            post(JSON.stringify(requestBody(options, prompt, maxTokens))),
            countsForBreaker
          )
          .pipe(
            Effect.mapError(
              (error) =>
                new AnalysisFailed({
                  reason: describe(error),
                  ...(!(error instanceof CircuitOpen) && error._tag === "Timeout" ? { cause: "timeout" as const } : {})
                })
            )
          )
        const answer = answerText(options.provider, body)
        const parsed =
          answer === undefined
            ? Either.left({ reason: "no text in judge response" })
            : parseJudgeOutput(answer, judgedEntries(request.card, request.conscienceValues))
        if (Either.isLeft(parsed))
          return yield* Effect.fail(new AnalysisFailed({ reason: `judge output unparseable (${parsed.left.reason})` }))
        const output = parsed.right
        const concerns = redactConcerns(output.concerns, redaction)
        const derived = deriveVerdict(concerns, boundaryValueNames(request.conscienceValues))
        const finished = yield* Clock.currentTimeMillis
        return {
          concerns,
          reasoning_summary: output.reasoning_summary,
          llm_verdict: output.verdict,
          analysis_model: name,
          analysis_duration_ms: finished - started,
          thinking_tokens_original: prompt.thinking.tokensOriginal,
          thinking_tokens_analyzed: prompt.thinking.tokensAnalyzed,
          truncated: prompt.thinking.truncated,
          // Normalised (aliases resolved, evidence cut and redacted), so it never holds more thinking
          // text than the evidence fields, and the strict schema decodes it for re-derivation.
          raw_analysis: JSON.stringify({
            verdict: output.verdict ?? null,
            concerns,
            reasoning_summary: output.reasoning_summary,
            supports: output.supports,
            considerations: output.considerations
          }),
          cross_validation_warnings: [...output.warnings, ...crossValidate(output.verdict, concerns, derived)],
          // The prompt's card summary lists them.
          values_checked: request.card?.values.declared ?? [],
          // Every value is in the prompt (Prompt.ts, conscienceSection), read with its meaning.
          conscience: {
            applied: request.conscienceValues,
            supports: request.conscienceValues.filter((value) => output.supports.includes(value.name)),
            considerations: output.considerations,
            depth: "standard"
          }
        }
      })

    return { name, analyze, circuitState: (tenant: string = SHARED_TENANT) => breaker.state(tenant) }
  })

const belowThreshold = (name: string, tokens: number, min: number): AnalysisResult => ({
  concerns: [],
  reasoning_summary: `Reasoning of about ${tokens} tokens is below the ${min}-token evidence threshold; not sent to the judge.`,
  llm_verdict: undefined,
  analysis_model: name,
  analysis_duration_ms: 0,
  thinking_tokens_original: tokens,
  thinking_tokens_analyzed: 0,
  truncated: false,
  raw_analysis: JSON.stringify({ concerns: [] }),
  cross_validation_warnings: [],
  values_checked: [],
  synthetic_reason: "below_evidence_threshold"
})

/** The LLM judge as the `AnalysisModel`; the connection pool lives as long as the layer. */
export const layer = (options: LlmJudgeOptions): Layer.Layer<AnalysisModel> =>
  Layer.scoped(
    AnalysisModel,
    Effect.map(makeLlmJudge(options), ({ analyze, name }) => ({ name, analyze }))
  )
