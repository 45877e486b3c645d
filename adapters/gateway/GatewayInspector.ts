/**
 * The Inspector with the integrity pipeline behind it (docs/architecture.md, "How a response flows", 1–3):
 * the composition of its parts.
 *
 * - The request path (`RequestPath.ts`), deciding each request from the agent's state
 *   (`RequestDecision.ts`): synchronously for the usual request, on the effectful path otherwise.
 * - The response path (`ResponsePath.ts`): the observer of each answer's copy, and a held answer
 *   released or refused once its verdict is known.
 * - The analysis (`Analysis.ts`): finished exchanges read, judged and published in each agent's
 *   order, off a bounded queue shared fairly by tenant.
 * - Publication (`Publication.ts`): each enforcement record with the agent's events, and the
 *   gateway's announcements on the `EventFeed`.
 *
 * Time comes from the Effect `Clock` the layer is built with, so tests can drive the grace period.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { isPolicyActive } from "../../core/Policy.js"
import type { EvidenceRedactionMode } from "../../core/schema/EvidenceRedaction.js"
import { AnalysisModel } from "../analysis/AnalysisModel.js"
import { AgentState } from "../bus/AgentState.js"
import { DEFAULT_PREFIX } from "../bus/Subjects.js"
import { noTrustedProxies, type TrustedProxies } from "../http/ClientAddress.js"
import { tracingOption } from "../tracing/Tracing.js"
import { makeAdmission } from "./Admission.js"
import { makeAnalysis } from "./Analysis.js"
import { TRANSACTION_HEADER } from "./CandorHeaders.js"
import { ContainedRefusals, type ContainedRefusalLimits, defaultContainedRefusalLimits } from "./ContainedRefusals.js"
import { makeEventPublisher, UNSETTLED } from "./EventPublisher.js"
import { recordRefusalSpans } from "./ExchangeSpans.js"
import { type InspectedRequest, Inspector, type RequestDecision } from "./Inspector.js"
import { DEFAULT_ANALYSIS_TIMEOUT_MS, makeJudging } from "./Judging.js"
import { PolicySlices } from "./PolicySlices.js"
import { ProviderAdapters } from "./ProviderAdapters.js"
import { makePublication } from "./Publication.js"
import { makeRequestPath } from "./RequestPath.js"
import { makeResponsePath } from "./ResponsePath.js"
import { DEFAULT_TOOL_CAPS, screenTools, type ToolCaps } from "./ToolCaps.js"
import { makeToolResultJudging } from "./ToolResultJudging.js"
import { defaultToolResultMemoryLimits, ToolResultMemory, type ToolResultMemoryLimits } from "./ToolResultMemory.js"
import { defaultUnknownKeyLimits, type UnknownKeyLimits } from "./UnknownKeys.js"

/** The response header carrying the tool policy's verdict for the request (Refusals.ts). */
export { POLICY_VERDICT_HEADER } from "./Refusals.js"

export interface GatewayInspectorOptions {
  /**
   * Exchanges waiting for analysis, across tenants; past it the tenant with the most waiting gives
   * up its oldest, recorded unanalysed (`over_share`), never dropped (FairQueue.ts).
   */
  readonly queueCapacity: number
  /** Judge calls in flight at once, across all agents (ANALYSIS_CONCURRENCY), shared fairly by tenant. */
  readonly concurrency: number
  /** Deadline of one judge call (ANALYSIS_TIMEOUT_MS); past it the exchange is unanalysed (`judge_timeout`). */
  readonly analysisTimeoutMs: number
  /**
   * Events the publisher holds unsettled (in flight, or held through a bus outage) before new
   * requests are refused with 503: an exchange that could not be recorded is never answered.
   */
  readonly publisherCapacity: number
  /** Subject prefix (CANDOR_NATS_PREFIX). */
  readonly subjectPrefix: string
  /** The per-client limit on requests with keys the gateway does not know (`UnknownKeys.ts`). */
  readonly unknownKeys: UnknownKeyLimits
  /** Tools and tool-name length a request may have when its tools are read (413 above: ToolCaps.ts). */
  readonly toolCaps: ToolCaps
  /** The proxies whose `X-Forwarded-For` names an unattributed request's client (CANDOR_TRUSTED_PROXIES). */
  readonly trustedProxies: TrustedProxies
  /** The deployment's evidence redaction (CANDOR_EVIDENCE_REDACTION); an organization may only tighten it. */
  readonly evidenceRedaction: EvidenceRedactionMode
  /** A contained agent's refusals a second that are answered 403 and recorded; 429 beyond (ContainedRefusals.ts). */
  readonly containedRefusals: ContainedRefusalLimits
  /** The tool results remembered as judged, per agent and overall (ToolResultMemory.ts). */
  readonly toolResultMemory: ToolResultMemoryLimits
}

const defaults: GatewayInspectorOptions = {
  queueCapacity: 4096,
  concurrency: 32,
  analysisTimeoutMs: DEFAULT_ANALYSIS_TIMEOUT_MS,
  publisherCapacity: UNSETTLED,
  subjectPrefix: DEFAULT_PREFIX,
  toolCaps: DEFAULT_TOOL_CAPS,
  unknownKeys: defaultUnknownKeyLimits,
  trustedProxies: noTrustedProxies,
  evidenceRedaction: "none",
  containedRefusals: defaultContainedRefusalLimits,
  toolResultMemory: defaultToolResultMemoryLimits
}

export const make = (options: Partial<GatewayInspectorOptions> = {}) =>
  Effect.gen(function* () {
    const {
      analysisTimeoutMs,
      concurrency,
      containedRefusals,
      evidenceRedaction,
      publisherCapacity,
      queueCapacity,
      subjectPrefix,
      toolCaps,
      toolResultMemory,
      trustedProxies,
      unknownKeys
    } = { ...defaults, ...options }
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      return yield* Effect.dieMessage("analysis concurrency must be a positive integer")
    }
    const adapters = yield* ProviderAdapters
    const state = yield* AgentState
    const judge = yield* AnalysisModel
    const judging = makeJudging(judge, analysisTimeoutMs, evidenceRedaction)
    const clock = yield* Effect.clock
    const judgeToolResult = makeToolResultJudging(
      judge,
      analysisTimeoutMs,
      evidenceRedaction,
      () => new Date(clock.unsafeCurrentTimeMillis())
    )
    /** The tool results each agent already had judged (ToolResultMemory.ts). */
    const toolResults = new ToolResultMemory(toolResultMemory)
    /** Read once: without it no exchange notes a timestamp or builds a span. */
    const tracing = yield* tracingOption
    const refusalsRecorded = new ContainedRefusals(containedRefusals)
    /** Costly policy evaluations, a slice per turn of the event loop (PolicySlices.ts). */
    const slices = new PolicySlices()
    const publisher = yield* makeEventPublisher(subjectPrefix, { capacity: publisherCapacity })
    const { publish } = publisher
    const { enqueue } = yield* makeAnalysis({ state, judging, clock, tracing, publish, queueCapacity, concurrency })
    const { announce, blocked } = yield* makePublication(publish, clock)

    const admission = makeAdmission({
      adapters,
      state,
      limits: unknownKeys,
      trustedProxies,
      now: () => clock.unsafeCurrentTimeMillis()
    })
    const { beforeRequest, beforeRequestSync } = makeRequestPath({
      admission,
      announce,
      blocked,
      clock,
      judgeToolResult,
      publisher,
      refusalsRecorded,
      slices,
      state,
      toolCaps,
      toolResults,
      tracing
    })

    const service: Inspector["Type"] = {
      beforeBody: (provider, url, headers, rawHeaders) => {
        const who = admission.identifyBeforeBody(provider, url, headers, rawHeaders)
        const credential = who?.keyHash
        const peek = state.peek
        if (who === undefined || peek === undefined) return { holder: { credential, org: undefined } }
        const settings = peek(who.agentId)
        // The tools will be read (an active policy, or a transaction's; a contained agent is refused
        // first): a flood of them is refused from its first bytes, before the rest is read.
        const reads =
          settings.containment === undefined &&
          (isPolicyActive(settings.policy) || headers[TRANSACTION_HEADER] !== undefined)
        return {
          holder: { credential, org: settings.orgId },
          screen: reads ? (partial) => screenTools(provider, partial, toolCaps) : undefined
        }
      },
      beforeRequestSync,
      beforeRequest,
      ...makeResponsePath({ noteAnswer: admission.noteAnswer, tracing, enqueue, blocked })
    }
    if (tracing === undefined) return service
    // Tracing: a request answered by the gateway itself gets its spans here, where every such answer passes.
    const refused = (request: InspectedRequest, decision: RequestDecision | undefined) => {
      if (decision !== undefined && "respond" in decision) recordRefusalSpans(tracing, request, decision.respond.status)
      return decision
    }
    return {
      ...service,
      beforeRequestSync: (request) => refused(request, beforeRequestSync(request)),
      beforeRequest: (request) =>
        Effect.map(service.beforeRequest(request), (decision) => refused(request, decision) ?? decision)
    } satisfies Inspector["Type"]
  })

/**
 * Needs the provider adapters, agent state, the judge and the bus, and uses the `EventFeed` when the
 * process provides one; the worker lives as long as the layer.
 */
export const layer = (options: Partial<GatewayInspectorOptions> = {}) => Layer.scoped(Inspector, make(options))
