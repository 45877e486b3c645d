/**
 * The Inspector with the integrity pipeline behind it (DESIGN.md, "How a response flows", 1–3).
 *
 * On the request path it does only what must happen before forwarding: identify the agent, refuse a
 * contained one, inject a pending nudge, decide whether to hold the response (enforce, non-streaming).
 * Everything else (parsing the response copy, extraction, judging, publishing) runs in a worker fiber
 * fed by a bounded queue, so analysis never delays a byte to the client; a full queue is counted and
 * logged, never waited on.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import type { IncomingHttpHeaders } from "node:http"
import type { SyntheticReason, Verdict } from "../../core/schema/verdict.js"
import { deriveVerdict } from "../../core/verdict.js"
import { AnalysisModel } from "../analysis/AnalysisModel.js"
import { Bus } from "../bus/Bus.js"
import { eventSubject } from "../bus/subjects.js"
import { sha256Hex } from "../providers/identity.js"
import type { Extraction, ProviderAdapter } from "../providers/provider.js"
import type { ExchangeOutcome } from "../proxy/ExchangeOutcome.js"
import { type AgentSettings, AgentState } from "./AgentState.js"
import { agentIdOf, derivedSessionId, headerText } from "./agentIdentity.js"
import { Inspector, jsonResponse } from "./Inspector.js"
import { ProviderAdapters } from "./ProviderAdapters.js"
import { buildResponseEvent, type Judgement, nudgeText, type ResponseEvent } from "./responseEvent.js"

/** A loggable name for an unknown failure, never its message. */
const errorKind = (error: unknown): string =>
  typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : error instanceof Error ? error.name : typeof error

/** What the request path learned, handed back on the response path. */
interface Exchange {
  readonly adapter: ProviderAdapter
  readonly agentId: string
  readonly sessionId: string
  readonly settings: AgentSettings
}

/** A finished exchange waiting for analysis. */
interface Job {
  readonly exchange: Exchange
  readonly stream: boolean
  readonly chunks: ReadonlyArray<Uint8Array>
  readonly outcome: ExchangeOutcome
}

export interface GatewayInspectorOptions {
  /** Exchanges waiting for analysis before new ones are dropped (and counted). */
  readonly queueCapacity: number
  /** Subject prefix (CANDOR_NATS_PREFIX). */
  readonly subjectPrefix: string
}

const defaults: GatewayInspectorOptions = { queueCapacity: 4096, subjectPrefix: "candor" }

const toWebHeaders = (headers: IncomingHttpHeaders): Headers => {
  const out = new Headers()
  for (const name in headers) {
    const value = headers[name]
    if (typeof value === "string") out.set(name, value)
    else if (value !== undefined) for (const v of value) out.append(name, v)
  }
  return out
}

const parseJson = (bytes: Uint8Array): unknown => {
  try {
    return JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8"))
  } catch {
    return undefined
  }
}

/** The response copy, parsed off the response path. */
const extract = (adapter: ProviderAdapter, job: Pick<Job, "stream" | "chunks">): Extraction | undefined => {
  if (job.chunks.length === 0) return undefined
  if (job.stream) {
    const extractor = adapter.streamExtractor()
    for (const chunk of job.chunks) extractor.push(chunk)
    return extractor.finish()
  }
  const body = parseJson(Buffer.concat(job.chunks))
  return body === undefined ? undefined : adapter.extractJson(body)
}

export const make = (options: Partial<GatewayInspectorOptions> = {}) =>
  Effect.gen(function*() {
    const { queueCapacity, subjectPrefix } = { ...defaults, ...options }
    const adapters = yield* ProviderAdapters
    const state = yield* AgentState
    const judge = yield* AnalysisModel
    const bus = yield* Bus
    const queue = yield* Queue.bounded<Job>(queueCapacity)
    let dropped = 0

    /** Extraction → hash → judge → verdict, with the agent's failure policy when the judge fails. */
    const judgeExtraction = (exchange: Exchange, extraction: Extraction | undefined): Effect.Effect<Judgement> => {
      const thinking = extraction?.thinking
      if (thinking === undefined) {
        return Effect.succeed({ verdict: "clear", thinkingHash: "none", analysis: undefined, synthetic: "no_thinking_block" })
      }
      const thinkingHash = sha256Hex(thinking.text)
      const failed = (): Judgement => ({
        verdict: exchange.settings.failurePolicy === "fail_closed" ? "boundary_violation" : "clear",
        thinkingHash,
        analysis: undefined,
        synthetic: "analysis_failed" satisfies SyntheticReason
      })
      return judge.analyze({
        thinking: thinking.text,
        card: undefined,
        conscienceValues: [],
        window: [],
        provider: exchange.adapter.name,
        model: extraction?.model
      }).pipe(
        Effect.map((analysis): Judgement => ({
          verdict: deriveVerdict(analysis.concerns) satisfies Verdict,
          thinkingHash,
          analysis,
          synthetic: undefined
        })),
        Effect.catchAllCause(() => Effect.succeed(failed()))
      )
    }

    /**
     * One exchange to one published event. A violation leaves a nudge for the next request in `nudge`
     * mode, and in `enforce` mode when the response was not held (streams cannot be blocked after the fact).
     */
    const analyze = (exchange: Exchange, extraction: Extraction | undefined, outcome: ExchangeOutcome, held: boolean) =>
      Effect.gen(function*() {
        const judgement = yield* judgeExtraction(exchange, extraction)
        const kind = outcome.kind === "complete" && extraction !== undefined && "complete" in extraction &&
            extraction.complete === false
          ? "partial"
          : outcome.kind
        const event = buildResponseEvent({
          agentId: exchange.agentId,
          sessionId: exchange.sessionId,
          provider: exchange.adapter.name,
          outcome: kind === outcome.kind ? outcome : { ...outcome, kind },
          extraction,
          judgement,
          now: new Date()
        })
        yield* bus.publish(eventSubject(exchange.agentId, subjectPrefix), event)
        if (judgement.verdict === "boundary_violation" && exchange.settings.mode !== "observe" && !held) {
          yield* state.setNudge(exchange.agentId, nudgeText(event))
        }
        return event
      })

    const process = (job: Job): Effect.Effect<ResponseEvent> =>
      Effect.suspend(() => analyze(job.exchange, extract(job.exchange.adapter, job), job.outcome, false))

    yield* Queue.take(queue).pipe(
      Effect.flatMap(process),
      // Only the error's kind: messages of parse errors can quote the text they failed on (thinking).
      Effect.catchAllCause((cause) =>
        Effect.logWarning("gateway analysis failed").pipe(
          Effect.annotateLogs({ error: errorKind(Cause.squash(cause)) })
        )
      ),
      Effect.forever,
      Effect.forkScoped
    )

    const enqueue = (job: Job) => {
      if (!Queue.unsafeOffer(queue, job)) {
        dropped++
        // Never the job itself in the log: it holds response bytes.
        Effect.runFork(Effect.logWarning("gateway analysis queue full: exchange dropped").pipe(
          Effect.annotateLogs({ agent_id: job.exchange.agentId, dropped })
        ))
      }
    }

    const service: Inspector["Type"] = {
      beforeRequest: (request) =>
        Effect.gen(function*() {
          const adapter = adapters[request.provider]
          const keyHash = adapter.keyHash(toWebHeaders(request.headers), request.url)
          // No key: the provider will answer 401 itself; there is no agent to attribute it to.
          if (keyHash === undefined) return { forward: request.body, context: undefined, hold: false }
          const agentId = agentIdOf(keyHash, headerText(request.headers["x-candor-agent"]))
          const sessionId = headerText(request.headers["x-candor-session"]) ?? derivedSessionId(agentId, Date.now())
          const settings = yield* state.get(agentId)
          const containment = settings.containment
          if (containment !== undefined) {
            return {
              respond: jsonResponse(403, {
                error: `agent is ${containment.status}: ${containment.reason}`,
                containment_error: { agent_id: agentId, ...containment }
              })
            }
          }
          const exchange: Exchange = { adapter, agentId, sessionId, settings }
          const nudge = yield* state.takeNudge(agentId)
          // The request body is parsed only when something depends on it.
          const body = nudge !== undefined || settings.mode === "enforce" ? parseJson(request.body) : undefined
          let forward = request.body
          if (nudge !== undefined) {
            const injected = body === undefined ? undefined : adapter.injectNudge(body, nudge)
            if (injected !== undefined) forward = Buffer.from(JSON.stringify(injected))
            else yield* state.setNudge(agentId, nudge) // not a request we can rewrite: keep it for the next
          }
          const hold = settings.mode === "enforce" && !adapter.requestInfo(body, request.url).stream
          return { forward, context: exchange, hold }
        }),

      onResponse: (context, head) => {
        if (context === undefined) return { chunk: () => {}, end: () => {} }
        const chunks: Array<Uint8Array> = []
        return {
          chunk: (bytes) => void chunks.push(bytes),
          end: (outcome) => enqueue({ exchange: context as Exchange, stream: head.stream, chunks, outcome })
        }
      },

      onFailure: (context, outcome) => {
        if (context !== undefined) enqueue({ exchange: context as Exchange, stream: false, chunks: [], outcome })
      },

      completeNonStreaming: (context, response) =>
        Effect.gen(function*() {
          if (context === undefined) return { pass: true } as const
          const exchange = context as Exchange
          const outcome: ExchangeOutcome = {
            kind: "complete",
            status: response.status,
            bytes: response.body.byteLength,
            cause: undefined
          }
          const extraction = extract(exchange.adapter, { stream: false, chunks: [response.body] })
          const event = yield* analyze(exchange, extraction, outcome, true)
          if (event.checkpoint.verdict !== "boundary_violation") return { pass: true } as const
          return {
            respond: jsonResponse(403, {
              error: "blocked by Candor: boundary violation",
              checkpoint_id: event.checkpoint.checkpoint_id
            })
          }
        })
    }
    return service
  })

/** Needs the provider adapters, agent state, the judge and the bus; the worker lives as long as the layer. */
export const layer = (options: Partial<GatewayInspectorOptions> = {}) => Layer.scoped(Inspector, make(options))
