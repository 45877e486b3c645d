/**
 * The gateway's spans of one exchange (docs/tracing.md), built once its event is ready, from the
 * timestamps the Inspector noted on the way (`ExchangeTrace`), and only when the process exports
 * traces: on the synchronous fast path nothing but those readings happens while the request is in
 * flight. One trace per request, continuing the agent's own when its request carried a
 * `traceparent`:
 *
 *     candor.gateway.request      (server)  body received → answer finished
 *       candor.gateway.decision             body received → forwarded (admission, containment, policy, nudge)
 *       candor.gateway.upstream   (client)  forwarded → upstream body ended; GenAI attributes
 *       candor.gateway.extraction           reading the answer's copy (thinking, tool calls, model)
 *       candor.gateway.judge                the judge, within ANALYSIS_TIMEOUT_MS
 *       candor.gateway.publish    (producer) the event handed to the bus; its traceparent travels with it
 *
 * Attributes are identifiers, counts, kinds and the verdict: never a prompt, thinking, answer text,
 * key or header value. The GenAI ones follow the OpenTelemetry semantic conventions
 * (`gen_ai.provider.name`, `gen_ai.request.model`, `gen_ai.usage.*`), the rest are `candor.*`.
 */
import type * as Tracer from "effect/Tracer"
import type { IncomingHttpHeaders } from "node:http"
import type { GatewayEvent } from "../../core/schema/Event.js"
import type { ProviderAdapter, ProviderName } from "../providers/Provider.js"
import type { SpanRecorder } from "../tracing/Tracing.js"
import type { ReadAnswer } from "./AnswerReading.js"
import type { ExchangeOutcome } from "./ExchangeOutcome.js"
import { parseJsonBodyOnce } from "./RequestBody.js"
import { parseTraceParent } from "../tracing/TraceParent.js"

/** What the Inspector notes of an exchange while tracing (`process.hrtime.bigint()` readings; 0n: never happened). */
export interface ExchangeTrace {
  /** The agent's `traceparent`, when it sent a valid one. */
  readonly parent: Tracer.ExternalSpan | undefined
  readonly url: URL
  /** The request's bytes, read for its model only once the spans are built (never on the request path). */
  readonly body: Uint8Array | undefined
  readonly receivedAt: bigint
  decidedAt: bigint
  respondedAt: bigint
  endedAt: bigint
  extractStart: bigint
  extractEnd: bigint
  judgeStart: bigint
  judgeEnd: bigint
}

export const newExchangeTrace = (
  parent: Tracer.ExternalSpan | undefined,
  url: URL,
  body: Uint8Array | undefined,
  receivedAt: bigint | undefined
): ExchangeTrace => {
  const now = process.hrtime.bigint()
  return {
    parent,
    url,
    body,
    receivedAt: receivedAt ?? now,
    decidedAt: now,
    respondedAt: 0n,
    endedAt: 0n,
    extractStart: 0n,
    extractEnd: 0n,
    judgeStart: 0n,
    judgeEnd: 0n
  }
}

/** `gen_ai.provider.name` of each upstream, as the semantic conventions spell them. */
const GEN_AI_PROVIDER: Readonly<Record<ProviderName, string>> = {
  anthropic: "anthropic",
  openai: "openai",
  gemini: "gcp.gemini"
}

export interface ExchangeSpanInput {
  readonly trace: ExchangeTrace
  readonly adapter: ProviderAdapter
  readonly agentId: string
  readonly outcome: ExchangeOutcome
  readonly read: ReadAnswer | undefined
  readonly event: GatewayEvent
  /** `X-Policy-Verdict` of the request, when a policy applied. */
  readonly policyVerdict: string | undefined
  readonly held: boolean
}

const FAILED_OUTCOMES: ReadonlySet<string> = new Set(["upstream_error", "timeout"])

/**
 * Records every span of the exchange but `publish`, ended; returns the request's span, the parent
 * of `publish` (started by the caller around the hand-off to the bus).
 */
export const recordExchangeSpans = (tracing: SpanRecorder, input: ExchangeSpanInput): Tracer.Span => {
  const { adapter, event, outcome, read, trace } = input
  const at = tracing.epochNs
  const now = process.hrtime.bigint()
  const endedAt = trace.endedAt === 0n ? now : trace.endedAt
  const requestModel = requestModelOf(adapter, trace)
  const usage = read?.extraction?.usage
  const genAi = {
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": GEN_AI_PROVIDER[adapter.name],
    "gen_ai.request.model": requestModel,
    "gen_ai.response.model": read?.extraction?.model,
    "gen_ai.usage.input_tokens": usage?.inputTokens,
    "gen_ai.usage.output_tokens": usage?.outputTokens
  }
  const { checkpoint } = event
  const root = tracing.start("candor.gateway.request", {
    parent: trace.parent,
    kind: "server",
    startNs: at(trace.receivedAt),
    attributes: {
      ...genAi,
      "candor.agent_id": input.agentId,
      "candor.checkpoint_id": checkpoint.checkpoint_id,
      "candor.verdict": checkpoint.verdict,
      "candor.outcome": outcome.kind,
      "http.response.status_code": outcome.status
    }
  })
  tracing.record("candor.gateway.decision", {
    parent: root,
    startNs: at(trace.receivedAt),
    endNs: at(trace.decidedAt),
    attributes: {
      "candor.decision": "forward",
      "candor.policy_verdict": input.policyVerdict,
      "candor.held": input.held
    }
  })
  tracing.record("candor.gateway.upstream", {
    parent: root,
    kind: "client",
    startNs: at(trace.decidedAt),
    endNs: at(endedAt),
    failure: FAILED_OUTCOMES.has(outcome.kind) ? outcome.kind : undefined,
    attributes: {
      ...genAi,
      "server.address": trace.url.hostname,
      "http.response.status_code": outcome.status,
      "candor.outcome": outcome.kind,
      "candor.response_bytes": outcome.bytes
    }
  })
  if (trace.extractEnd !== 0n)
    tracing.record("candor.gateway.extraction", {
      parent: root,
      startNs: at(trace.extractStart),
      endNs: at(trace.extractEnd),
      attributes: {
        "candor.thinking_found": read?.extraction?.thinking !== undefined,
        "candor.tool_calls": read?.extraction?.toolCalls.length ?? 0,
        "candor.unreadable": read?.unanalysed
      }
    })
  if (trace.judgeEnd !== 0n)
    tracing.record("candor.gateway.judge", {
      parent: root,
      startNs: at(trace.judgeStart),
      endNs: at(trace.judgeEnd),
      attributes: {
        "candor.verdict": checkpoint.verdict,
        "candor.synthetic": checkpoint.synthetic_reason,
        "candor.analysis_model": checkpoint.analysis_metadata.analysis_model
      }
    })
  tracing.end(root, at(endedAt))
  return root
}

/** The request's model (Gemini's is in the path): its body parsed now, off the request path, once. */
const requestModelOf = (adapter: ProviderAdapter, trace: ExchangeTrace): string | undefined => {
  try {
    return adapter.requestInfo(trace.body === undefined ? undefined : parseJsonBodyOnce(trace.body), trace.url).model
  } catch {
    return undefined
  }
}

/**
 * A request the gateway answered itself, before the provider (malformed Candor headers, a contained
 * agent, the tool policy, limits): its request span and the decision that refused it.
 */
export const recordRefusalSpans = (
  tracing: SpanRecorder,
  request: { readonly headers: IncomingHttpHeaders; readonly startedAt?: bigint | undefined },
  status: number
): void => {
  const at = tracing.epochNs
  const now = process.hrtime.bigint()
  const startNs = at(request.startedAt ?? now)
  const attributes = { "candor.decision": "refused", "http.response.status_code": status }
  const root = tracing.start("candor.gateway.request", {
    parent: parseTraceParent(request.headers.traceparent),
    kind: "server",
    startNs,
    attributes
  })
  tracing.record("candor.gateway.decision", { parent: root, startNs, endNs: at(now), attributes })
  tracing.end(root, at(now))
}

/**
 * An exchange the provider refused (401 or 403: it refused the key, so no answer and no record): its
 * request, decision and upstream spans, without analysis.
 */
export const recordProviderRefusalSpans = (
  tracing: SpanRecorder,
  trace: ExchangeTrace,
  adapter: ProviderAdapter,
  status: number
): void => {
  const at = tracing.epochNs
  const now = process.hrtime.bigint()
  const genAi = {
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": GEN_AI_PROVIDER[adapter.name],
    "gen_ai.request.model": requestModelOf(adapter, trace),
    "http.response.status_code": status,
    "candor.provider_refused": true
  }
  const root = tracing.start("candor.gateway.request", {
    parent: trace.parent,
    kind: "server",
    startNs: at(trace.receivedAt),
    attributes: genAi
  })
  tracing.record("candor.gateway.decision", {
    parent: root,
    startNs: at(trace.receivedAt),
    endNs: at(trace.decidedAt),
    attributes: { "candor.decision": "forward" }
  })
  tracing.record("candor.gateway.upstream", {
    parent: root,
    kind: "client",
    startNs: at(trace.decidedAt),
    endNs: at(now),
    failure: "provider_refused",
    attributes: { ...genAi, "server.address": trace.url.hostname }
  })
  tracing.end(root, at(now))
}
