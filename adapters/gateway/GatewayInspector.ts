/**
 * The Inspector with the integrity pipeline behind it (docs/architecture.md, "How a response flows", 1–3).
 *
 * The usual request is decided synchronously (`beforeRequestSync`: the agent's settings are a local
 * copy, so no fiber and no promise per request); a contained agent, a pending nudge or a policy
 * finding go through the effectful `beforeRequest`. Finished exchanges join the analysis queue after
 * a short turn (`ANALYSIS_DELAY_MS`), in slices, so that requests waiting are served before analysis.
 *
 * On the request path it does only what must happen before forwarding: admit the request
 * (`Admission.ts`: its Candor headers, exactly one credential, the unknown-key limit) and identify the
 * agent, refuse a contained one (its own containment or its key's), refuse a request naming a scoped transaction (`X-Transaction-Id`) the agent has not
 * open, evaluate the tool policy (the agent's, or the agent's narrowed by the open transaction the
 * request names) against the tools the request declares (403 in `enforce` on a violation, else
 * `X-Policy-Verdict` on the response), inject a pending nudge, decide whether
 * to hold the response (non-streaming, with the agent's or the policy's mode `enforce`), and judge
 * the tool results the request hands the model that the agent has not had judged (issue 28:
 * `ToolResultScreening.ts`; each recorded as a `tool_result` checkpoint, a violation refused with 403
 * in `enforce`). The request body is read (`RequestBody.ts`: decoded, parsed) only when one of these
 * needs it; a body whose bytes name no tool result is not parsed for them. Everything else (reading the response copy, extraction,
 * judging against the agent's card and conscience values, the policy on the response's tool calls,
 * publishing) runs off a bounded queue shared fairly by tenant (`FairQueue.ts`), so analysis never
 * delays a byte to the client and nothing answered leaves the record: a full queue makes its longest
 * tenant give up its oldest exchange, recorded unanalysed (`over_share`, counted), never dropped or
 * waited on; an exchange that cannot be recorded at all is refused before the provider (503).
 *
 * Judging is concurrent: up to `concurrency` judge calls are in flight at once, across agents and
 * within one (an LLM judge answers in about a second; one call at a time would analyse one response
 * per round trip), each within ANALYSIS_TIMEOUT_MS (`Judging.ts`). Each agent's exchanges take their
 * place in response order when they finish and leave their tenant's queue in that order (the
 * tools' first sightings are noted then), and each waits for the agent's previous event to be
 * published before publishing its own, so an agent's events reach the bus in response order
 * whichever judge call finishes first. A held response (enforce, non-streaming) is decoded as the
 * observed copy is, queued and judged the same way, and answers as soon as its verdict is known.
 *
 * Every act of enforcement is an enforcement record (core/EnforcementRecords.ts): each 403 and each
 * nudge injected is published with the agent's events (`GatewayEnforcement`, EventPublisher.ts), so
 * it is stored at least once, held through a bus outage like a checkpoint. A contained agent's
 * refusals past 10 a second are answered 429 and counted instead (ContainedRefusals.ts).
 *
 * The gateway announces what it decides on its own: `enforcement.blocked` for every 403 it answers
 * (containment, tool policy, an enforce-mode boundary violation) and `policy.violation` when the
 * request's declared tools break the policy (warn or fail). Each is published to the `EventFeed`
 * on a fiber of its own, never on the client's path: a feed that is slow or down delays and fails
 * no answer (a failed publish is logged, without content). A process built without a feed announces nothing.
 *
 * Time comes from the Effect `Clock` the layer is built with, so tests can drive the grace period.
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import { randomUUID } from "node:crypto"
import {
  blockedEvent,
  type GatewayBlock,
  policyBlockReason,
  policyViolationEvent,
  UNREADABLE_REQUEST_REASON
} from "../../core/EventData.js"
import { blockedRecord, nudgedRecord } from "../../core/EnforcementRecords.js"
import { type EventOccurrence, newEnvelope } from "../../core/Events.js"
import { evaluateToolCalls } from "../../core/ToolCallPolicy.js"
import {
  appliedVerdict,
  isPolicyActive,
  type PolicyEvaluation,
  policyEvaluator,
  type PolicyEvaluator,
  type PolicyVerdict
} from "../../core/Policy.js"
import { containmentErrorBody, containmentInForce } from "../../core/Containment.js"
import {
  lookupTransaction,
  type TransactionLookup,
  transactionErrorBody,
  transactionPolicy
} from "../../core/ScopedTransaction.js"
import type { EvidenceRedactionMode } from "../../core/schema/EvidenceRedaction.js"
import type { GatewayTransaction } from "../../core/schema/ScopedTransaction.js"
import type { GatewayEvent } from "../../core/schema/Event.js"
import type { Policy } from "../../core/schema/Policy.js"
import { AnalysisModel } from "../analysis/AnalysisModel.js"
import type { ProviderAdapter } from "../providers/Provider.js"
import { type Answer, readAnswer, type ReadAnswer, recordedOutcome } from "./AnswerReading.js"
import { codingOf, decodeBody, encodeBody } from "./ContentCoding.js"
import { noopObserver, type ExchangeOutcome } from "./ExchangeOutcome.js"
import { FairQueue } from "./FairQueue.js"
import { DEFAULT_ANALYSIS_TIMEOUT_MS, makeJudging } from "./Judging.js"
import { countUnanalysed, isProviderRefusal, providerRefused, unrecordableRefusal } from "./Recording.js"
import { isEncoded, parseJsonBodyOnce, RequestBody } from "./RequestBody.js"
import { unanalysedJudgement } from "./UnanalysedJudgement.js"
import { countContainedThrottled, countOverCap } from "../metrics/GatewayMetrics.js"
import { ContainedRefusals, type ContainedRefusalLimits, defaultContainedRefusalLimits } from "./ContainedRefusals.js"
import { type AgentSettings, AgentState } from "../bus/AgentState.js"
import { EventFeed } from "../bus/EventFeed.js"
import { DEFAULT_PREFIX } from "../bus/Subjects.js"
import { noTrustedProxies, type TrustedProxies } from "../http/ClientAddress.js"
import { makeAdmission } from "./Admission.js"
import { headerText } from "./AgentIdentity.js"
import { TRANSACTION_HEADER } from "./CandorHeaders.js"
import { makeEventPublisher, UNSETTLED } from "./EventPublisher.js"
import { type InspectedRequest, Inspector, jsonResponse, type RequestDecision } from "./Inspector.js"
import { PolicySlices, SYNC_STEPS } from "./PolicySlices.js"
import { ProviderAdapters } from "./ProviderAdapters.js"
import { DEFAULT_TOOL_CAPS, screenTools, type ToolCaps, toolsOverCap, toolsOverCapBeforeParse } from "./ToolCaps.js"
import { buildResponseEvent, nudgeCheckpoint, nudgeText, type PolicyRecord } from "./ResponseEvent.js"
import { makeToolResultJudging } from "./ToolResultJudging.js"
import { defaultToolResultMemoryLimits, ToolResultMemory, type ToolResultMemoryLimits } from "./ToolResultMemory.js"
import {
  hashedResults,
  judgePending,
  MAX_JUDGED_PER_REQUEST,
  type Screened,
  screenResults
} from "./ToolResultScreening.js"
import { defaultUnknownKeyLimits, type UnknownKeyLimits } from "./UnknownKeys.js"
import {
  type ExchangeTrace,
  newExchangeTrace,
  recordExchangeSpans,
  recordProviderRefusalSpans,
  recordRefusalSpans
} from "./ExchangeSpans.js"
import { tracingOption } from "../tracing/Tracing.js"
import { formatTraceParent, parseTraceParent } from "../tracing/TraceParent.js"

/** The response header carrying the tool policy's verdict for the request. */
export const POLICY_VERDICT_HEADER = "x-policy-verdict"

/**
 * Each transaction's merged policy, computed once per settings object (the settings change, a new
 * object comes; the old one and its entries are collected with it).
 */
const transactionPolicies = new WeakMap<AgentSettings, Map<string, Policy>>()

const policyOfTransaction = (settings: AgentSettings, transaction: GatewayTransaction): Policy => {
  let policies = transactionPolicies.get(settings)
  if (policies === undefined) transactionPolicies.set(settings, (policies = new Map()))
  let policy = policies.get(transaction.transaction_id)
  if (policy === undefined) {
    policy = transactionPolicy(settings.policy, transaction.tools, transaction.policy)
    policies.set(transaction.transaction_id, policy)
  }
  return policy
}

/** The policy a request is evaluated against: the agent's, or the agent's narrowed by an open transaction. */
const policyFor = (settings: AgentSettings, lookup: TransactionLookup | undefined): Policy | undefined => {
  if (lookup === undefined) return isPolicyActive(settings.policy) ? settings.policy : undefined
  return lookup.kind === "open" ? policyOfTransaction(settings, lookup.transaction) : undefined
}

/** `X-Policy-Verdict` of a request whose declared tools pass (in any mode). */
const POLICY_PASSED: Readonly<Record<string, string>> = { [POLICY_VERDICT_HEADER]: "pass" }

/** A loggable name for an unknown failure, never its message. */
const errorKind = (error: unknown): string =>
  typeof error === "object" && error !== null && "_tag" in error
    ? String(error._tag)
    : error instanceof Error
      ? error.name
      : typeof error

/** What the request path learned, handed back on the response path. */
interface Exchange {
  readonly adapter: ProviderAdapter
  readonly agentId: string
  /** `x-candor-agent`, validated, when sent. */
  readonly agentName: string | undefined
  readonly sessionId: string
  /**
   * The provider credential's SHA-256: the provider's answer to it tells whether the key is known
   * (`Admission.ts`), and it is the fairness key of an agent outside any organization.
   */
  readonly keyHash: string
  readonly settings: AgentSettings
  /** The active policy and what `X-Policy-Verdict` said; undefined without an active policy. */
  readonly policy:
    | {
        readonly policy: Policy
        readonly requestVerdict: PolicyVerdict
        /** The request's tools could not be read (a body undecodable or not JSON): forwarded unchecked. */
        readonly requestUnreadable: boolean
      }
    | undefined
  /** What tracing notes of the exchange (ExchangeSpans.ts); undefined when the process exports no traces. */
  readonly trace: ExchangeTrace | undefined
}

/**
 * An exchange's "published" signal for the agent's next one. Most exchanges have no successor
 * waiting while they are in flight, so the deferred is made only when one waits.
 */
class Published {
  private done = false
  private signal: Deferred.Deferred<void> | undefined

  /** Returns at once once finished; else waits for `finish`. Call it inside `Effect.suspend`. */
  wait(): Effect.Effect<void> {
    if (this.done) return Effect.void
    this.signal ??= Deferred.unsafeMake<void>(FiberId.none)
    return Deferred.await(this.signal)
  }

  finish(): void {
    this.done = true
    if (this.signal !== undefined) Deferred.unsafeDone(this.signal, Exit.void)
  }
}

/** A finished exchange waiting for analysis, with its place in its agent's order (taken when it finished). */
interface Job {
  readonly exchange: Exchange
  readonly answer: Answer
  readonly outcome: ExchangeOutcome
  /** The client is waiting for this verdict (enforce, non-streaming): no nudge, it is blocked instead. */
  readonly verdict: Deferred.Deferred<GatewayEvent> | undefined
  /** Finished once this job's event is published (or given up): the agent's next job waits for it. */
  readonly published: Published
  readonly previous: Published | undefined
}

/** A job read and decided in response order, waiting only for its judge. */
interface Prepared {
  readonly read: ReadAnswer
  readonly outcome: ExchangeOutcome
  readonly policy: PolicyRecord | undefined
}

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

/**
 * How long a finished exchange may wait for its analysis to start, so that requests are served first
 * (see `enqueue`). Measured at one request at a time: 1 ms halved what analysis adds to the median, 4 ms
 * brought it to that of a bare proxy. Against a judge call of about a second, nothing.
 */
const ANALYSIS_DELAY_MS = 4

/** Finished exchanges handed to analysis per turn of the event loop, at least (see `analyseFinished`). */
const ANALYSIS_SLICE = 2

/** Exchanges in flight per judge slot: the judged ones wait for a slower predecessor without a slot. */
const IN_FLIGHT_PER_SLOT = 2

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

/** The plain request body parsed on first use, once for both paths (most requests never need it). */
const lazyJson =
  (bytes: Uint8Array): (() => unknown) =>
  () =>
    parseJsonBodyOnce(bytes)

/**
 * A request's policy evaluation in progress, by the request's bytes: the effectful path goes on from
 * where the synchronous path's budget ran out, for the same policy object.
 */
const evaluations = new WeakMap<Uint8Array, { readonly policy: Policy; readonly evaluator: PolicyEvaluator }>()

/** The 403 of a request whose tools the policy forbids, in `enforce` mode. */
const policyBlocked = (evaluation: PolicyEvaluation) => {
  const tools = [...new Set(evaluation.violations.map((v) => v.tool))]
  const response = jsonResponse(403, {
    error: `blocked by Candor tool policy: ${tools.join(", ")}`,
    policy_verdict: { mode: "enforce", ...evaluation }
  })
  return { ...response, headers: { ...response.headers, [POLICY_VERDICT_HEADER]: "fail" } }
}

/** The 403 of a request whose body is not JSON, so its tools cannot be checked, under `fail_open: false` in `enforce`. */
const policyUnreadable = (() => {
  const response = jsonResponse(403, {
    error:
      "blocked by Candor tool policy: the request's tools cannot be read (not JSON) and the policy does not fail open",
    policy_verdict: { mode: "enforce", verdict: "fail", violations: [], warnings: [], tools_evaluated: 0 }
  })
  return { ...response, headers: { ...response.headers, [POLICY_VERDICT_HEADER]: "fail" } }
})()

const NOTHING_LEFT: Screened = { kind: "pass", left: 0 }

/**
 * A non-streaming answer is held for its verdict when the agent's mode or its policy's is `enforce`:
 * the judge's violation blocks it in the first case, a tool call the policy forbids in the second.
 */
const holds = (settings: AgentSettings, policy: Policy | undefined): boolean =>
  settings.mode === "enforce" || policy?.defaults.enforcement_mode === "enforce"

/** The tools of the answer's calls an enforcing policy forbids, or undefined when it forbids none (or does not enforce). */
const forbiddenCalls = (policy: PolicyRecord | undefined): ReadonlyArray<string> | undefined => {
  if (policy === undefined || policy.mode !== "enforce" || policy.response.verdict !== "fail") return undefined
  return [...new Set(policy.response.violations.map((v) => v.tool))]
}

/** The same, for a held answer, from its exchange's policy and its trace's record (ResponseEvent.ts `policyMetadata`). */
const forbiddenByPolicy = (exchange: Exchange, event: GatewayEvent): ReadonlyArray<string> | undefined => {
  if (exchange.policy?.policy.defaults.enforcement_mode !== "enforce") return undefined
  const metadata = event.trace.context?.metadata
  if (metadata?.["policy_verdict"] !== "fail") return undefined
  const record = metadata["policy"]
  const violations =
    typeof record === "object" && record !== null && "violations" in record && Array.isArray(record.violations)
      ? (record.violations as ReadonlyArray<unknown>)
      : []
  const tools = violations.flatMap((v) =>
    typeof v === "object" && v !== null && "tool" in v && typeof v.tool === "string" ? [v.tool] : []
  )
  return [...new Set(tools)]
}

/** The 403 of a held answer calling a tool the enforcing policy forbids: the client never gets the call. */
const answerPolicyBlocked = (tools: ReadonlyArray<string>, checkpointId: string) =>
  jsonResponse(403, {
    error: `blocked by Candor tool policy: the answer calls ${tools.join(", ")}`,
    checkpoint_id: checkpointId
  })

/** The nudge after a streamed answer called tools the enforcing policy forbids (names the checkpoint, as `nudgeText`). */
const policyNudgeText = (event: GatewayEvent, tools: ReadonlyArray<string>): string =>
  "[INTEGRITY NOTICE — Candor]\n" +
  `Your previous response (checkpoint ${event.checkpoint.checkpoint_id}) was flagged: it called tools the tool policy forbids (${tools.join(", ")}).\n` +
  "Do not call them; ask the user instead."

/** The enforcement record's reason for a request refused for one of its tool results. */
const TOOL_RESULT_BLOCK_REASON = "tool_result_violation"

/** The 403 of a request carrying a tool result judged a boundary violation, in `enforce`. */
const toolResultBlocked = (checkpointId: string) =>
  jsonResponse(403, {
    error: "blocked by Candor: a tool result in the request was judged a boundary violation (prompt injection)",
    checkpoint_id: checkpointId
  })

/** More tool results not yet judged than one request may have judged, in `enforce`: retried, the next ones are judged. */
const toolResultsOverCap = (left: number) => {
  const response = jsonResponse(429, {
    error: `the request carries ${left} more tool results not yet judged than the ${MAX_JUDGED_PER_REQUEST} Candor judges per request; retry to have the next ones judged`
  })
  return { ...response, headers: { ...response.headers, "retry-after": "1" } }
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
    /** The exchange's trace notes, continuing the agent's `traceparent` (its body kept for the model, unless encoded). */
    const traceOf = (request: InspectedRequest): ExchangeTrace =>
      newExchangeTrace(
        parseTraceParent(request.headers.traceparent),
        request.url,
        request.headers["content-encoding"] === undefined ? request.body : undefined,
        request.startedAt
      )
    const refusalsRecorded = new ContainedRefusals(containedRefusals)
    /** Costly policy evaluations, a slice per turn of the event loop (PolicySlices.ts). */
    const slices = new PolicySlices()
    const publisher = yield* makeEventPublisher(subjectPrefix, { capacity: publisherCapacity })
    const { publish } = publisher
    // Made after the publisher, so closed before it: analysis stops, then publishing drains.
    const runAnalysis = yield* FiberSet.makeRuntime<never, void, never>()
    const feed = yield* Effect.serviceOption(EventFeed)
    /** Catalogue events on their way to the feed, each on its own fiber. */
    const announcements = yield* FiberSet.make<void>()
    /** Finished exchanges waiting for a judge slot, per tenant; the slots, shared fairly (FairQueue.ts). */
    const queue = new FairQueue<Job>({ capacity: queueCapacity, concurrency })
    /** Jobs given up by the queue (over share), to be recorded unanalysed by the next pump. */
    const shed: Array<Job> = []
    /**
     * Judged exchanges not yet published: judging, or judged and waiting for the agent's previous
     * event (whose judge is slower). They hold no judge slot while they wait, and this bounds how
     * many can; beyond it jobs stay queued, as when the judge is slow.
     */
    let inFlight = 0
    const inFlightLimit = IN_FLIGHT_PER_SLOT * concurrency
    /** Per agent, the latest exchange's "published" signal; an agent without one in flight has no entry. */
    const lastOfAgent = new Map<string, Published>()
    // The layer's runtime, so the log from this synchronous callback goes through the configured logger and level.
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())

    /**
     * The response's tool calls against the policy, their arguments included (argument conditions):
     * recorded in the trace; a held answer whose calls an enforcing policy forbids is refused.
     */
    const responsePolicy = (exchange: Exchange, read: ReadAnswer, now: number): PolicyRecord | undefined => {
      if (exchange.policy === undefined) return undefined
      const calls = read.extraction?.toolCalls ?? []
      const { policy, requestUnreadable, requestVerdict } = exchange.policy
      const response = evaluateToolCalls(
        policy,
        exchange.settings.card,
        calls,
        state.toolsFirstSeen(exchange.agentId),
        new Date(now)
      )
      state.noteTools(exchange.agentId, calls, now)
      return { mode: policy.defaults.enforcement_mode, requestVerdict, requestUnreadable, response }
    }

    /** Read and decided in response order, before the judge: the answer, the outcome's kind, the policy on the tool calls. */
    const prepare = (job: Job): Prepared => {
      const trace = job.exchange.trace
      if (trace !== undefined) trace.extractStart = process.hrtime.bigint()
      const read = readAnswer(job.exchange.adapter, job.answer)
      if (trace !== undefined) trace.extractEnd = process.hrtime.bigint()
      return {
        read,
        outcome: recordedOutcome(job.outcome, read),
        policy: responsePolicy(job.exchange, read, clock.unsafeCurrentTimeMillis())
      }
    }

    const logFailure = (cause: Cause.Cause<unknown>) =>
      // Only the error's kind: messages of parse errors can quote the text they failed on (thinking).
      Effect.logWarning("gateway analysis failed").pipe(Effect.annotateLogs({ error: errorKind(Cause.squash(cause)) }))

    /** Publishes an event off the caller's path: never waited on, a failure only logged (its kind, not the event). */
    const announce = (occurrence: EventOccurrence | undefined): Effect.Effect<void> =>
      Option.isNone(feed) || occurrence === undefined
        ? Effect.void
        : FiberSet.run(
            announcements,
            feed.value.publish(newEnvelope(occurrence)).pipe(
              Effect.catchAllCause((cause) =>
                Effect.logWarning("gateway event not published").pipe(
                  Effect.annotateLogs({
                    type: occurrence.type,
                    agent_id: occurrence.agent_id,
                    error: errorKind(Cause.squash(cause))
                  })
                )
              )
            )
          ).pipe(Effect.asVoid)

    /** A 403: its enforcement record, published with the agent's events (at least once), then announced. */
    const blocked = (settings: AgentSettings, block: GatewayBlock) =>
      Effect.suspend(() => {
        const uuid = randomUUID()
        const at = new Date(clock.unsafeCurrentTimeMillis())
        return Effect.zipRight(
          publish(block.agentId, {
            type: "gateway.enforcement",
            mode: settings.mode,
            record: blockedRecord(block, uuid, at)
          }),
          announce(blockedEvent(block, uuid, settings.orgId ?? null, at))
        )
      })

    /**
     * One job's analysis, on its own fiber: judged (its tenant holds a judge slot, given back once
     * judged) or, without `prepared`, recorded unanalysed over share (no judge, no reading). It
     * completes the held client's deferred with the event, then waits for the agent's previous event
     * to be published before publishing its own. A violation then leaves a nudge for the next request
     * in `nudge` mode, and in `enforce` mode when the response was not held (streams cannot be blocked
     * after the fact).
     */
    const analyse = (job: Job, judged: { readonly prepared: Prepared; readonly tenant: string } | undefined) => {
      const { exchange, verdict } = job
      const { agentId, settings } = exchange
      const judgement =
        judged === undefined
          ? Effect.succeed(unanalysedJudgement(settings.failurePolicy, "over_share", "none"))
          : Effect.ensuring(
              exchange.trace === undefined
                ? judging({
                    settings,
                    provider: exchange.adapter.name,
                    tenant: judged.tenant,
                    read: judged.prepared.read
                  })
                : timedJudging(exchange.trace, judged.prepared.read, exchange, judged.tenant),
              Effect.sync(() => {
                queue.release(judged.tenant)
                schedule(false)
              })
            )
      return Effect.gen(function* () {
        const decided = yield* judgement
        if (decided.unanalysed !== undefined) countUnanalysed(decided.unanalysed)
        const event = yield* Effect.sync(() =>
          buildResponseEvent({
            agentId,
            agentName: exchange.agentName,
            cardId: settings.cardId ?? settings.card?.card_id,
            sessionId: exchange.sessionId,
            provider: exchange.adapter.name,
            outcome: judged?.prepared.outcome ?? job.outcome,
            extraction: judged?.prepared.read.extraction,
            judgement: decided,
            policy: judged?.prepared.policy,
            now: new Date(clock.unsafeCurrentTimeMillis())
          })
        ).pipe(Effect.onExit((exit) => (verdict === undefined ? Effect.void : Deferred.done(verdict, exit))))
        const previous = job.previous
        if (previous !== undefined) yield* Effect.suspend(() => previous.wait())
        if (exchange.trace === undefined || tracing === undefined) yield* publish(agentId, event)
        else {
          // The exchange's spans, then `publish` around the hand-off: its context travels with the event.
          const root = recordExchangeSpans(tracing, {
            trace: exchange.trace,
            adapter: exchange.adapter,
            agentId,
            outcome: judged?.prepared.outcome ?? job.outcome,
            read: judged?.prepared.read,
            event,
            policyVerdict: exchange.policy?.requestVerdict,
            held: verdict !== undefined
          })
          const span = tracing.start("candor.gateway.publish", {
            parent: root,
            kind: "producer",
            startNs: tracing.nowNs(),
            attributes: { "candor.checkpoint_id": event.checkpoint.checkpoint_id, "messaging.operation.type": "send" }
          })
          yield* publish(agentId, event, formatTraceParent(span))
          tracing.end(span, tracing.nowNs())
        }
        // Held in `enforce`, a violation is blocked; held for the policy alone (`nudge` mode), it is nudged.
        const nudges = settings.mode === "nudge" || (settings.mode === "enforce" && verdict === undefined)
        if (decided.verdict === "boundary_violation" && nudges) {
          yield* state.setNudge(agentId, nudgeText(event))
        } else if (verdict === undefined) {
          // A streamed call the enforcing policy forbids cannot be withheld: the next request is nudged.
          const forbidden = forbiddenCalls(judged?.prepared.policy)
          if (forbidden !== undefined) yield* state.setNudge(agentId, policyNudgeText(event, forbidden))
        }
      }).pipe(
        Effect.catchAllCause(logFailure),
        Effect.ensuring(
          Effect.suspend(() => {
            if (lastOfAgent.get(agentId) === job.published) lastOfAgent.delete(agentId)
            job.published.finish()
            if (judged !== undefined) {
              inFlight--
              schedule(false)
            }
            // A held response never waits for a verdict that will not come (interrupted at shutdown).
            return verdict === undefined ? Effect.void : Deferred.interrupt(verdict)
          })
        )
      )
    }

    /** The judge call with its start and end noted (tracing only). */
    const timedJudging = (trace: ExchangeTrace, read: ReadAnswer, exchange: Exchange, tenant: string) =>
      Effect.suspend(() => {
        trace.judgeStart = process.hrtime.bigint()
        return judging({ settings: exchange.settings, provider: exchange.adapter.name, tenant, read }).pipe(
          Effect.ensuring(Effect.sync(() => void (trace.judgeEnd = process.hrtime.bigint())))
        )
      })

    /**
     * Starts what may start now: the jobs given up over share (no judge), then queued jobs as judge
     * slots allow, round robin by tenant. At least a quarter of what waits per turn of the event loop,
     * so a request arriving meanwhile waits for one slice's analysis, not the whole backlog's; the
     * rest on the next turn. Each job is read (parsed, extracted) here, in its tenant's order.
     */
    const pump = () => {
      clearTimeout(turn)
      clearImmediate(step)
      turn = undefined
      step = undefined
      for (const job of shed.splice(0)) runAnalysis(analyse(job, undefined))
      let budget = Math.max(ANALYSIS_SLICE, Math.ceil(queue.size / 4))
      while (budget-- > 0 && inFlight < inFlightLimit) {
        const next = queue.take()
        if (next === undefined) return
        inFlight++
        try {
          runAnalysis(analyse(next.job, { prepared: prepare(next.job), tenant: next.tenant }))
        } catch (error) {
          // A parser's bug must not stop the queue: the job is recorded unanalysed instead, its slot given back.
          inFlight--
          queue.release(next.tenant)
          runFork(logFailure(Cause.die(error)))
          runAnalysis(analyse(next.job, undefined))
        }
      }
      if (queue.size > 0 && inFlight < inFlightLimit) step = setImmediate(pump)
    }

    let turn: ReturnType<typeof setTimeout> | undefined
    let step: ReturnType<typeof setImmediate> | undefined
    /**
     * A pump soon. A finished exchange waits up to ANALYSIS_DELAY_MS (`delayed`): Node has no
     * priorities, and analysing an exchange in the tick its response ended (a few hundred µs with
     * publishing) delays the next request that arrives meanwhile; after a timer, the requests already
     * waiting are served first. A freed slot or a held client pumps on the next turn.
     */
    const schedule = (delayed: boolean) => {
      if (step !== undefined) return
      if (!delayed) {
        clearTimeout(turn)
        turn = undefined
        step = setImmediate(pump)
      } else if (turn === undefined) turn = setTimeout(pump, ANALYSIS_DELAY_MS)
    }
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        clearTimeout(turn)
        clearImmediate(step)
      })
    )

    /**
     * The fairness key (FairQueue.ts): the agent's organization, else its provider credential's hash.
     * Neither needs a prefix: organization ids are `org_<uuid>`, key hashes 64 hex characters.
     */
    const tenantOf = (exchange: Exchange): string => exchange.settings.orgId ?? exchange.keyHash

    const admission = makeAdmission({
      adapters,
      state,
      limits: unknownKeys,
      trustedProxies,
      now: () => clock.unsafeCurrentTimeMillis()
    })

    /** A finished exchange joins its tenant's queue, its place in the agent's order taken now (response order). */
    const enqueue = (
      exchange: Exchange,
      answer: Answer,
      outcome: ExchangeOutcome,
      verdict: Deferred.Deferred<GatewayEvent> | undefined
    ) => {
      const published = new Published()
      const previous = lastOfAgent.get(exchange.agentId)
      lastOfAgent.set(exchange.agentId, published)
      const given = queue.offer(tenantOf(exchange), { exchange, answer, outcome, verdict, published, previous })
      if (given !== undefined) shed.push(given)
      schedule(verdict === undefined && given === undefined)
    }

    /**
     * The request's policy evaluation: the one a previous call started for these bytes and this
     * policy object, or a new one. Its own tenant's turn in `slices`: the organization, else the credential.
     */
    const evaluatorFor = (request: InspectedRequest, policy: Policy, make: () => PolicyEvaluator) => {
      const started = evaluations.get(request.body)
      // Already given the request path's budget once: whatever is left goes to the slices.
      if (started !== undefined && started.policy === policy) return { evaluator: started.evaluator, budget: 0 }
      const evaluator = make()
      evaluations.set(request.body, { policy, evaluator })
      return { evaluator, budget: SYNC_STEPS }
    }
    const unattributed = (request: InspectedRequest): RequestDecision => ({
      forward: request.body,
      context: undefined,
      hold: false
    })
    /**
     * An attributed request when its exchange could not be recorded: the publisher holds as many
     * events as it may (the bus down past its buffer). Refused before the provider, 503 with
     * `Retry-After`: never an answer without its checkpoint.
     */
    const unrecordable = (): RequestDecision | undefined =>
      publisher.saturated() ? { respond: unrecordableRefusal() } : undefined

    /**
     * Whether a plain request carries tool results not yet judged for the agent (or one judged a
     * violation, in `enforce`): then the effectful path judges them. A body whose bytes name no
     * tool result is not parsed for them (a few byte searches).
     */
    const unjudged = (
      adapter: ProviderAdapter,
      bytes: Uint8Array,
      json: () => unknown,
      agentId: string,
      settings: AgentSettings
    ): boolean =>
      adapter.mayCarryToolResults?.(bytes) === true &&
      screenResults(toolResults, agentId, hashedResults(adapter, json()), settings.mode === "enforce").kind !== "pass"

    /**
     * `beforeRequest` for the usual request, synchronously: the agent's settings from the local copy,
     * no containment, no pending nudge, no policy finding to announce. Anything else returns
     * `undefined` before changing any state, and `beforeRequest` decides it (with the same result
     * for the same state). The tools' first sightings are noted only once the request is known to pass.
     */
    const beforeRequestSync = (request: InspectedRequest): RequestDecision | undefined => {
      const { nudgePending, peek } = state
      if (peek === undefined || nudgePending === undefined) return undefined
      const who = admission.admit(request)
      if (who._tag === "refused") return { respond: who.response }
      if (who._tag === "unattributed") return unattributed(request)
      const refused = unrecordable()
      if (refused !== undefined) return refused
      const { adapter, agentId, now, transactionId } = who
      const settings = peek(agentId)
      if (settings.containment !== undefined || who.keyContainment !== undefined || nudgePending(agentId)) {
        return undefined
      }
      const transaction =
        transactionId === undefined ? undefined : lookupTransaction(settings.transactions, transactionId, now)
      // A transaction the copy cannot apply is refused (or looked up again) on the effectful path.
      if (transaction !== undefined && transaction.kind !== "open") return undefined
      // An encoded body (Content-Encoding) is decoded, off the thread, on the effectful path.
      if (request.headers["content-encoding"] !== undefined && isEncoded(request.headers)) return undefined
      const requestBody = lazyJson(request.body)
      const policy = policyFor(settings, transaction)
      let headers: Readonly<Record<string, string>> | undefined
      if (policy !== undefined) {
        const tooMany = toolsOverCapBeforeParse(adapter.name, request.body, toolCaps)
        if (tooMany !== undefined) return { respond: tooMany }
        if (requestBody() === undefined && request.body.length > 0) return undefined
        const tools = adapter.declaredTools(requestBody())
        const overCap = toolsOverCap(adapter.name, requestBody(), tools, toolCaps)
        if (overCap !== undefined) return { respond: overCap }
        const { budget, evaluator } = evaluatorFor(request, policy, () =>
          policyEvaluator(policy, settings.card, tools, state.toolsFirstSeen(agentId), new Date(now))
        )
        const evaluation = evaluator.run(budget)
        // Not done within the request path's budget: the effectful path goes on in slices.
        if (evaluation === undefined || evaluation.verdict !== "pass") return undefined
        if (unjudged(adapter, request.body, requestBody, agentId, settings)) return undefined
        state.noteTools(agentId, tools, now)
        headers = POLICY_PASSED
      }
      if (policy === undefined && unjudged(adapter, request.body, requestBody, agentId, settings)) return undefined
      const exchange: Exchange = {
        adapter,
        agentId,
        agentName: who.agentName,
        sessionId: who.sessionId,
        keyHash: who.keyHash,
        settings,
        policy: policy === undefined ? undefined : { policy, requestVerdict: "pass", requestUnreadable: false },
        trace: tracing === undefined ? undefined : traceOf(request)
      }
      const hold = holds(settings, policy) && !adapter.requestInfo(requestBody(), request.url).stream
      return { forward: request.body, context: exchange, hold, headers }
    }

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
      beforeRequest: (request) =>
        Effect.gen(function* () {
          const fast = beforeRequestSync(request)
          if (fast !== undefined) return fast
          const who = admission.admit(request)
          if (who._tag === "refused") return { respond: who.response }
          if (who._tag === "unattributed") return unattributed(request)
          const refused = unrecordable()
          if (refused !== undefined) return refused
          const { adapter, agentId, now, sessionId, transactionId } = who
          let settings = yield* state.get(agentId)
          let transaction =
            transactionId === undefined ? undefined : lookupTransaction(settings.transactions, transactionId, now)
          // The copy may not have the transaction yet (opened a moment ago, the watch not there yet):
          // the shared store is asked once before refusing. Unknown ids cost one KV read each.
          if (transactionId !== undefined && transaction?.kind === "unknown" && state.refresh !== undefined) {
            settings = yield* state.refresh(agentId)
            transaction = lookupTransaction(settings.transactions, transactionId, now)
          }
          const containment = containmentInForce(settings.containment, who.keyContainment)
          const block = (rule: GatewayBlock["rule"], reason: string) =>
            blocked(settings, {
              agentId,
              sessionId,
              provider: adapter.name,
              rule,
              reason,
              checkpointId: null
            })
          if (containment !== undefined) {
            // Past its refusals recorded a second, a contained agent is answered 429, counted, not recorded.
            const wait = refusalsRecorded.take(agentId, now)
            if (wait !== undefined) {
              countContainedThrottled()
              const response = jsonResponse(429, {
                error: `agent ${agentId} is contained and calling too often; retry later`
              })
              return { respond: { ...response, headers: { ...response.headers, "retry-after": String(wait) } } }
            }
            const body = containmentErrorBody(agentId, containment.containment, containment.scope)
            yield* block("containment", body.reason)
            return { respond: jsonResponse(403, body) }
          }
          if (transactionId !== undefined && transaction !== undefined && transaction.kind !== "open") {
            const body = transactionErrorBody(agentId, transactionId, transaction)
            yield* block("transaction", body.reason)
            return { respond: jsonResponse(403, body) }
          }
          // The request body is read (decoded, parsed) only when something depends on it (the fast path never does).
          const body = new RequestBody(request.body, request.headers)
          const policy = policyFor(settings, transaction)
          let headers: Record<string, string> | undefined
          let requestVerdict: PolicyVerdict = "pass"
          let requestUnreadable = false
          if (policy !== undefined) {
            // A flood of tools is refused from the plain bytes before any parse (an encoded body is
            // counted once decoded, below).
            if (body.coding === "identity") {
              const tooMany = toolsOverCapBeforeParse(adapter.name, request.body, toolCaps)
              if (tooMany !== undefined) return { respond: tooMany }
            }
            // Tools that cannot be read (a body undecodable or not JSON) cannot be checked: refused in
            // `enforce` under `fail_open: false`; else forwarded, never as a pass (below).
            requestUnreadable = yield* body.unreadable
            if (requestUnreadable && !policy.defaults.fail_open && policy.defaults.enforcement_mode === "enforce") {
              yield* block("policy", UNREADABLE_REQUEST_REASON)
              return { respond: policyUnreadable }
            }
            const json = yield* body.json
            const tools = adapter.declaredTools(json)
            const overCap = toolsOverCap(adapter.name, json, tools, toolCaps)
            if (overCap !== undefined) return { respond: overCap }
            const { budget, evaluator } = evaluatorFor(request, policy, () =>
              policyEvaluator(policy, settings.card, tools, state.toolsFirstSeen(agentId), new Date(now))
            )
            const evaluation =
              evaluator.run(budget) ?? (yield* slices.evaluate(settings.orgId ?? who.keyHash, evaluator.run))
            state.noteTools(agentId, tools, now)
            const mode = policy.defaults.enforcement_mode
            requestVerdict = appliedVerdict(evaluation.verdict, mode)
            // A passing request (the usual case) builds no event: no id, no date on the request path.
            if (evaluation.verdict !== "pass") {
              yield* announce(
                policyViolationEvent(
                  { agentId, checkpointId: null, phase: "request", mode, evaluation },
                  randomUUID(),
                  settings.orgId ?? null,
                  new Date(now)
                )
              )
            }
            // Blocked before the nudge is taken: a pending nudge waits for a request that goes out.
            if (requestVerdict === "fail") {
              yield* block("policy", policyBlockReason(evaluation))
              return { respond: policyBlocked(evaluation) }
            }
            if (evaluation.verdict === "fail") {
              yield* Effect.logWarning("tool policy violated (warn mode: forwarded)").pipe(
                Effect.annotateLogs({ agent_id: agentId, tools: evaluation.violations.map((v) => v.tool) })
              )
            }
            if (requestUnreadable) {
              // Forwarded under `fail_open`, but never as a pass: the client's header and the record say
              // the tools went unchecked.
              requestVerdict = "warn"
              yield* Effect.logWarning("request tools unreadable (policy fails open: forwarded unchecked)").pipe(
                Effect.annotateLogs({ agent_id: agentId })
              )
            }
            headers = { [POLICY_VERDICT_HEADER]: requestVerdict }
          }
          const plain = yield* body.plain
          if (plain !== undefined && adapter.mayCarryToolResults?.(plain) === true) {
            const json = yield* body.json
            const enforce = settings.mode === "enforce"
            const screen = screenResults(toolResults, agentId, hashedResults(adapter, json), enforce)
            const screened =
              screen.kind === "judge"
                ? yield* judgePending(
                    toolResults,
                    judgeToolResult,
                    publish,
                    {
                      settings,
                      agentId,
                      agentName: who.agentName,
                      sessionId,
                      provider: adapter.name,
                      model: adapter.requestInfo(json, request.url).model,
                      tenant: settings.orgId ?? who.keyHash
                    },
                    screen
                  )
                : screen.kind === "refuse"
                  ? screen
                  : NOTHING_LEFT
            if (screened.kind === "refuse") {
              yield* blocked(settings, {
                agentId,
                sessionId,
                provider: adapter.name,
                rule: "enforce",
                reason: TOOL_RESULT_BLOCK_REASON,
                checkpointId: screened.checkpointId
              })
              return { respond: toolResultBlocked(screened.checkpointId) }
            }
            if (screened.kind === "pass" && screened.left > 0) {
              // More results than one request may have judged: in `enforce` the client is asked to
              // retry (those judged are remembered, so each retry judges the next ones); else the
              // rest are judged when a later request carries them again.
              if (enforce) {
                countOverCap("tool_results")
                return { respond: toolResultsOverCap(screened.left) }
              }
              yield* Effect.logWarning("tool results left unjudged for a later request").pipe(
                Effect.annotateLogs({ agent_id: agentId, left: screened.left })
              )
            }
          }
          const exchange: Exchange = {
            adapter,
            agentId,
            agentName: who.agentName,
            sessionId,
            keyHash: who.keyHash,
            settings,
            policy: policy === undefined ? undefined : { policy, requestVerdict, requestUnreadable },
            trace: undefined
          }
          const nudge = yield* state.takeNudge(agentId)
          let forward = request.body
          if (nudge !== undefined) {
            const json = yield* body.json
            const injected = json === undefined ? undefined : adapter.injectNudge(json, nudge)
            // An encoded body goes back upstream in its own coding, which its Content-Encoding still names.
            if (injected !== undefined) {
              forward = yield* encodeBody(body.coding, Buffer.from(JSON.stringify(injected)))
              yield* publish(agentId, {
                type: "gateway.enforcement",
                mode: settings.mode,
                record: nudgedRecord(
                  { agentId, sessionId, mode: settings.mode, checkpointId: nudgeCheckpoint(nudge) },
                  randomUUID(),
                  new Date(clock.unsafeCurrentTimeMillis())
                )
              })
            } else yield* state.setNudge(agentId, nudge) // not a request we can rewrite: keep it for the next
          }
          const hold = holds(settings, policy) && !adapter.requestInfo(yield* body.json, request.url).stream
          // Noted last: the decision (nudge and policy included) ends here.
          return {
            forward,
            context: tracing === undefined ? exchange : { ...exchange, trace: traceOf(request) },
            hold,
            headers
          }
        }),

      onResponse: (context, head) => {
        if (context === undefined) return noopObserver
        admission.noteAnswer((context as Exchange).keyHash, head.status)
        // The provider refused the key (401) or the request's access (403): no model answered, so no
        // checkpoint and no agent, only a metric.
        const trace = (context as Exchange).trace
        if (isProviderRefusal(head.status)) {
          if (trace !== undefined && tracing !== undefined)
            recordProviderRefusalSpans(tracing, trace, (context as Exchange).adapter, head.status)
          return providerRefused(head.status)
        }
        const chunks: Array<Uint8Array> = []
        if (trace !== undefined) trace.respondedAt = process.hrtime.bigint()
        return {
          chunk: (bytes) => void chunks.push(bytes),
          end: (outcome, undecodable) => {
            if (trace !== undefined) trace.endedAt = process.hrtime.bigint()
            enqueue(
              context as Exchange,
              {
                stream: head.stream,
                status: head.status,
                chunks,
                undecodable: undecodable === true,
                contentType: headerText(head.headers["content-type"])
              },
              outcome,
              undefined
            )
          }
        }
      },

      onFailure: (context, outcome) => {
        const trace = (context as Exchange | undefined)?.trace
        if (trace !== undefined) trace.endedAt = process.hrtime.bigint()
        if (context !== undefined)
          enqueue(
            context as Exchange,
            { stream: false, status: undefined, chunks: [], undecodable: false, contentType: undefined },
            outcome,
            undefined
          )
      },

      completeNonStreaming: (context, response) =>
        Effect.gen(function* () {
          if (context === undefined) return { pass: true } as const
          const exchange = context as Exchange
          if (exchange.trace !== undefined)
            exchange.trace.endedAt = exchange.trace.respondedAt = process.hrtime.bigint()
          admission.noteAnswer(exchange.keyHash, response.status)
          if (isProviderRefusal(response.status)) {
            providerRefused(response.status)
            return { pass: true } as const
          }
          const outcome: ExchangeOutcome = {
            kind: "complete",
            status: response.status,
            bytes: response.body.byteLength,
            cause: undefined
          }
          // Decoded as the observed path decodes (ContentCoding.ts): the verdict is the same whatever the coding.
          const encoding = response.headers["content-encoding"]
          const decoded = yield* decodeBody(
            codingOf(Array.isArray(encoding) ? encoding.join(",") : encoding),
            response.body
          )
          const answer: Answer = {
            stream: false,
            status: response.status,
            chunks: decoded === undefined ? [] : [decoded],
            undecodable: decoded === undefined,
            contentType: headerText(response.headers["content-type"])
          }
          const verdict = yield* Deferred.make<GatewayEvent>()
          // Queued like any exchange (its tenant's share, the agent's order); once taken, the analysis
          // runs to its event even if the client goes away meanwhile, so the exchange is still recorded.
          enqueue(exchange, answer, outcome, verdict)
          const event = yield* Deferred.await(verdict)
          // Held for the policy alone (the agent observes or nudges), a violation of the judge's is recorded, not blocked.
          const forbidden = forbiddenByPolicy(exchange, event)
          if (forbidden !== undefined) {
            yield* blocked(exchange.settings, {
              agentId: exchange.agentId,
              sessionId: exchange.sessionId,
              provider: exchange.adapter.name,
              rule: "policy",
              reason: `tool call forbidden by policy: ${forbidden.join(", ")}`,
              checkpointId: event.checkpoint.checkpoint_id
            })
            return { respond: answerPolicyBlocked(forbidden, event.checkpoint.checkpoint_id) }
          }
          if (event.checkpoint.verdict !== "boundary_violation" || exchange.settings.mode !== "enforce")
            return { pass: true } as const
          yield* blocked(exchange.settings, {
            agentId: exchange.agentId,
            sessionId: exchange.sessionId,
            provider: exchange.adapter.name,
            rule: "enforce",
            reason: "boundary_violation",
            checkpointId: event.checkpoint.checkpoint_id
          })
          return {
            respond: jsonResponse(403, {
              error: "blocked by Candor: boundary violation",
              checkpoint_id: event.checkpoint.checkpoint_id
            })
          }
        })
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
