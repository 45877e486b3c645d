/**
 * The model's part in a team forecast (docs/intelligence.md, "Forecast"): when `ANALYSIS_MODEL`
 * names an LLM (`anthropic:<model>` or `openai:<model>`, with `ANALYSIS_API_KEY` and
 * `ANALYSIS_BASE_URL` as for the judge), the deterministic forecast is sent to it and it answers a
 * short narrative. The model never changes a probability: its answer is recorded beside them, as
 * its own. One call per forecast, bounded by a timeout; any failure is the caller's to record (it
 * falls back to the deterministic forecast alone).
 *
 * Privacy: the prompt holds only the forecast (rates, probabilities, evidence terms: numbers and
 * names of inputs), never a card, trace or thinking text. No error carries the answer or the key.
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { request as undiciRequest } from "undici"
import { parseAnalysisSpec } from "./AnalysisSpec.js"
import { answerText, DEFAULT_BASE_URLS, type LlmProvider, requestHeaders } from "./Llm.js"

export class NarrationFailed extends Schema.TaggedError<NarrationFailed>()("NarrationFailed", {
  reason: Schema.String
}) {}

/** A narrative is a few sentences: longer answers are cut here. */
export const MAX_NARRATIVE_CHARS = 2000

export class ForecastNarrator extends Context.Tag("candor/adapters/analysis/ForecastNarrator")<
  ForecastNarrator,
  {
    /** `<provider>:<model>`, as recorded in the forecast. */
    readonly model: string
    /** The model's narrative of a forecast (the route's JSON without the narrative members). */
    readonly narrate: (forecast: unknown) => Effect.Effect<string, NarrationFailed>
  }
>() {}

const SYSTEM = [
  "You explain a team failure-mode forecast to the people running the team.",
  "The probabilities were computed by published formulas from the listed rates; do not recompute or change them.",
  "In at most five sentences, say which modes matter most and which inputs drive them, and what to look at first.",
  'Answer with a JSON object only: {"narrative": "<text>"}.'
].join(" ")

const requestBody = (provider: LlmProvider, model: string, forecast: unknown) =>
  provider === "anthropic"
    ? {
        model,
        max_tokens: 512,
        temperature: 0,
        system: SYSTEM,
        messages: [{ role: "user", content: JSON.stringify(forecast) }]
      }
    : {
        model,
        max_completion_tokens: 512,
        response_format: { type: "json_object" },
        messages: [
          { role: "system", content: SYSTEM },
          { role: "user", content: JSON.stringify(forecast) }
        ]
      }

const Answer = Schema.parseJson(Schema.Struct({ narrative: Schema.String.pipe(Schema.minLength(1)) }))

export interface ForecastNarratorOptions {
  readonly provider: LlmProvider
  readonly model: string
  readonly apiKey: Redacted.Redacted<string>
  readonly baseUrl?: string | undefined
  /** Default 15 s. */
  readonly timeout?: Duration.DurationInput | undefined
}

export const make = (options: ForecastNarratorOptions): ForecastNarrator["Type"] => {
  const base = (options.baseUrl ?? DEFAULT_BASE_URLS[options.provider]).replace(/\/+$/, "")
  const url = `${base}${options.provider === "anthropic" ? "/v1/messages" : "/v1/chat/completions"}`
  const timeout = options.timeout ?? Duration.seconds(15)
  const fail = (reason: string) => new NarrationFailed({ reason })
  return {
    model: `${options.provider}:${options.model}`,
    narrate: (forecast) =>
      Effect.tryPromise({
        try: async (signal) => {
          const response = await undiciRequest(url, {
            method: "POST",
            headers: requestHeaders(options),
            body: JSON.stringify(requestBody(options.provider, options.model, forecast)),
            signal
          })
          return { status: response.statusCode, text: await response.body.text() }
        },
        // Only the error code: undici messages can include request details.
        catch: (error) => fail(`model unreachable (${String((error as { code?: unknown })?.code ?? "request failed")})`)
      }).pipe(
        Effect.timeoutFail({
          duration: timeout,
          onTimeout: () => fail(`model timed out after ${Duration.format(timeout)}`)
        }),
        Effect.filterOrFail(
          ({ status }) => status >= 200 && status < 300,
          ({ status }) => fail(`model answered HTTP ${status}`)
        ),
        Effect.flatMap(({ text }) => {
          const answer = answerText(options.provider, text)
          if (answer === undefined) return Effect.fail(fail("model answer has no text"))
          return Either.match(Schema.decodeUnknownEither(Answer)(answer.trim()), {
            onLeft: () => Effect.fail(fail('model answer is not {"narrative": "<text>"}')),
            onRight: ({ narrative }) => Effect.succeed(narrative.trim().slice(0, MAX_NARRATIVE_CHARS))
          })
        })
      )
  }
}

/**
 * The narrator `ANALYSIS_MODEL` names, or none (`rules`, an invalid spec, or no key: the forecast
 * stays deterministic; the judge's own layer is what reports a bad spec at startup).
 */
export const layerFromSpec = (
  spec: string,
  options: { readonly apiKey?: Redacted.Redacted<string> | undefined; readonly baseUrl?: string | undefined }
): Layer.Layer<never> | Layer.Layer<ForecastNarrator> => {
  const parsed = parseAnalysisSpec(spec)
  if (Either.isLeft(parsed) || parsed.right.kind !== "llm" || options.apiKey === undefined) return Layer.empty
  const { provider, model } = parsed.right
  return Layer.succeed(ForecastNarrator, make({ provider, model, apiKey: options.apiKey, baseUrl: options.baseUrl }))
}
