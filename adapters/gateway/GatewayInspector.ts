/**
 * The Inspector with the integrity pipeline behind it (docs/architecture.md, "How a response flows", 1–3).
 *
 * The usual request is decided synchronously (`beforeRequestSync`: the agent's settings are a local
 * copy, so no fiber and no promise per request); a contained agent, a pending nudge or a policy
 * finding go through the effectful `beforeRequest`. Finished exchanges join the analysis queue after
 * a short turn (`ANALYSIS_DELAY_MS`), in slices, so that requests waiting are served before analysis.
 *
 * On the request path it does only what must happen before forwarding: identify the agent, refuse a
 * contained one, refuse a request naming a scoped transaction (`X-Transaction-Id`) the agent has not
 * open, evaluate the tool policy (the agent's, or the agent's narrowed by the open transaction the
 * request names) against the tools the request declares (403 in `enforce` on a violation, else
 * `X-Policy-Verdict` on the response), inject a pending nudge, decide whether
 * to hold the response (enforce, non-streaming). The request body is parsed only when one of these
 * needs it. Everything else (parsing the response copy, extraction, judging against the agent's
 * card and conscience values, the policy on the response's tool calls, publishing) runs off a bounded
 * queue, so analysis never delays a byte to the client; a full queue is counted (the
 * `candor_gateway_exchanges_dropped_total` metric) and logged, never waited on.
 *
 * Judging is concurrent: up to `concurrency` judge calls are in flight at once, across agents and
 * within one (an LLM judge answers in about a second; one call at a time would analyse one response
 * per round trip). Each agent's exchanges still take their place in response order when they leave
 * the queue (the policy's tool memory is updated then), and each waits for the agent's previous
 * event to be published before publishing its own, so an agent's events reach the bus in response
 * order whichever judge call finishes first. A held response (enforce, non-streaming) takes its
 * judge slot and its place in the agent's order the same way, and answers as soon as its verdict is known.
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
import * as Queue from "effect/Queue"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import { randomUUID } from "node:crypto"
import type { IncomingHttpHeaders } from "node:http"
import {
  blockedEvent,
  type GatewayBlock,
  policyBlockReason,
  policyViolationEvent,
  UNREADABLE_REQUEST_REASON
} from "../../core/EventData.js"
import { type EventOccurrence, newEnvelope } from "../../core/Events.js"
import {
  appliedVerdict,
  evaluatePolicy,
  isPolicyActive,
  type PolicyEvaluation,
  policyEvaluator,
  type PolicyEvaluator,
  type PolicyVerdict
} from "../../core/Policy.js"
import { containmentErrorBody } from "../../core/Containment.js"
import {
  lookupTransaction,
  type TransactionLookup,
  transactionErrorBody,
  transactionPolicy
} from "../../core/ScopedTransaction.js"
import type { GatewayTransaction } from "../../core/schema/ScopedTransaction.js"
import { DEFAULT_CONSCIENCE_VALUES } from "../../core/schema/Conscience.js"
import { boundaryValueNames } from "../../core/ConscienceResolution.js"
import type { GatewayEvent } from "../../core/schema/Event.js"
import type { Policy } from "../../core/schema/Policy.js"
import type { SyntheticReason, Verdict } from "../../core/schema/Verdict.js"
import { deriveVerdict } from "../../core/Verdict.js"
import { AnalysisModel } from "../analysis/AnalysisModel.js"
import { exchangesDropped } from "../metrics/GatewayMetrics.js"
import { withInferredThinking } from "../providers/Fallback.js"
import { sha256Hex } from "../providers/Identity.js"
import type { Extraction, HeaderLookup, ProviderAdapter } from "../providers/Provider.js"
import type { ExchangeOutcome } from "./ExchangeOutcome.js"
import { type AgentSettings, AgentState } from "../bus/AgentState.js"
import { EventFeed } from "../bus/EventFeed.js"
import { DEFAULT_PREFIX } from "../bus/Subjects.js"
import { AgentIds, headerText } from "./AgentIdentity.js"
import { makeEventPublisher } from "./EventPublisher.js"
import { type InspectedRequest, Inspector, jsonResponse, type RequestDecision } from "./Inspector.js"
import { PolicySlices, SYNC_STEPS } from "./PolicySlices.js"
import { ProviderAdapters } from "./ProviderAdapters.js"
import { DEFAULT_TOOL_CAPS, screenTools, type ToolCaps, toolsOverCap, toolsOverCapBeforeParse } from "./ToolCaps.js"
import { buildResponseEvent, type Judgement, nudgeText, type PolicyRecord } from "./ResponseEvent.js"
import { ToolFirstSeen } from "./ToolFirstSeen.js"

/** The response header carrying the tool policy's verdict for the request. */
export const POLICY_VERDICT_HEADER = "x-policy-verdict"

/**
 * The request header naming a scoped transaction (docs/transactions.md): the request is evaluated
 * against the agent's policy narrowed by it. Addressed to Candor: never forwarded upstream.
 */
export const TRANSACTION_HEADER = "x-transaction-id"

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
  readonly sessionId: string
  readonly settings: AgentSettings
  /** The active policy and what `X-Policy-Verdict` said; undefined without an active policy. */
  readonly policy: { readonly policy: Policy; readonly requestVerdict: PolicyVerdict } | undefined
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

/** A finished exchange waiting for analysis. */
interface Job {
  readonly exchange: Exchange
  readonly stream: boolean
  readonly chunks: ReadonlyArray<Uint8Array>
  readonly outcome: ExchangeOutcome
}

/** An exchange with everything decided in response order, waiting only for its judge. */
interface Prepared {
  readonly exchange: Exchange
  readonly extraction: Extraction | undefined
  readonly outcome: ExchangeOutcome
  readonly policy: PolicyRecord | undefined
  /** The client is waiting for the verdict (enforce, non-streaming): no nudge, it is blocked instead. */
  readonly held: boolean
}

export interface GatewayInspectorOptions {
  /** Exchanges waiting for analysis before new ones are dropped (and counted). */
  readonly queueCapacity: number
  /** Judge calls in flight at once, across all agents (ANALYSIS_CONCURRENCY). */
  readonly concurrency: number
  /** Subject prefix (CANDOR_NATS_PREFIX). */
  readonly subjectPrefix: string
  /** (agent, tool) first-seen times kept for the policy's grace period. */
  readonly toolMemoryCapacity: number
  /** Tools and tool-name length a request may have when its tools are read (413 above: ToolCaps.ts). */
  readonly toolCaps: ToolCaps
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
  subjectPrefix: DEFAULT_PREFIX,
  toolMemoryCapacity: 100_000,
  toolCaps: DEFAULT_TOOL_CAPS
}

/**
 * Node's parsed headers read as the adapters read a fetch `Headers` (repeated values joined by ", "),
 * without building one per request: a `Headers` copy of every header was the request path's largest cost.
 */
const headerLookup = (headers: IncomingHttpHeaders): HeaderLookup => ({
  get: (name) => {
    const value = headers[name]
    return value === undefined ? null : typeof value === "string" ? value : value.join(", ")
  }
})

const parseJson = (bytes: Uint8Array): unknown => {
  try {
    return JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8"))
  } catch {
    return undefined
  }
}

/**
 * The response copy, parsed off the response path. Without reasoning from the provider, the visible
 * answer's deliberation-like sentences stand in for it (the fallback, confidence 0.3).
 */
const extract = (adapter: ProviderAdapter, job: Pick<Job, "stream" | "chunks">): Extraction | undefined => {
  if (job.chunks.length === 0) return undefined
  // A body that opens as a JSON object is a whole answer even when it came chunked, without a length
  // (providers behind proxies often answer so); events and Gemini's JSON-array stream go piece by piece.
  if (job.stream && !opensAsObject(job.chunks)) {
    const extractor = adapter.streamExtractor()
    for (const chunk of job.chunks) extractor.push(chunk)
    return withInferredThinking(extractor.finish())
  }
  const body = parseJson(Buffer.concat(job.chunks))
  return body === undefined ? undefined : withInferredThinking(adapter.extractJson(body))
}

const OPEN_BRACE = 0x7b
const isSpace = (byte: number) => byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d

/** Whether the first byte that is not white space is `{`. */
const opensAsObject = (chunks: ReadonlyArray<Uint8Array>): boolean => {
  for (const chunk of chunks) for (const byte of chunk) if (!isSpace(byte)) return byte === OPEN_BRACE
  return false
}

/**
 * Request bodies already parsed, by the bytes' identity: a request the synchronous path hands on to
 * the effectful one is parsed once, not twice (a multi-megabyte parse is itself a stall: issue 24).
 */
const parsedBodies = new WeakMap<Uint8Array, { readonly body: unknown }>()

/** The request body parsed on first use, once (most requests never need it). */
const lazyJson =
  (bytes: Uint8Array): (() => unknown) =>
  () => {
    let parsed = parsedBodies.get(bytes)
    if (parsed === undefined) parsedBodies.set(bytes, (parsed = { body: parseJson(bytes) }))
    return parsed.body
  }

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

export const make = (options: Partial<GatewayInspectorOptions> = {}) =>
  Effect.gen(function* () {
    const { concurrency, queueCapacity, subjectPrefix, toolMemoryCapacity, toolCaps } = { ...defaults, ...options }
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      return yield* Effect.dieMessage("analysis concurrency must be a positive integer")
    }
    const adapters = yield* ProviderAdapters
    const state = yield* AgentState
    const judge = yield* AnalysisModel
    const clock = yield* Effect.clock
    const queue = yield* Queue.bounded<Job>(queueCapacity)
    const toolsSeen = new ToolFirstSeen(toolMemoryCapacity)
    /** Costly policy evaluations, a slice per turn of the event loop (PolicySlices.ts). */
    const slices = new PolicySlices()
    const { publish } = yield* makeEventPublisher(subjectPrefix)
    // Made after the publisher, so closed before it: analysis stops, then publishing drains.
    const analyses = yield* FiberSet.make<void>()
    const feed = yield* Effect.serviceOption(EventFeed)
    /** Catalogue events on their way to the feed, each on its own fiber. */
    const announcements = yield* FiberSet.make<void>()
    /** Judge slots: taken before an exchange leaves the queue, given back once its judge has answered. */
    const judging = yield* Effect.makeSemaphore(concurrency)
    /**
     * Exchanges out of the queue and not yet published: judging, or judged and waiting for the agent's
     * previous event (whose judge is slower). They hold no judge slot while they wait, and this
     * bounds how many can; beyond it the queue fills as when the judge is slow.
     */
    const inFlight = yield* Effect.makeSemaphore(IN_FLIGHT_PER_SLOT * concurrency)
    /** Per agent, the latest exchange's "published" signal; an agent without one in flight has no entry. */
    const lastOfAgent = new Map<string, Published>()
    // The layer's runtime, so the log from this synchronous callback goes through the configured logger and level.
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    let dropped = 0
    // Registered at start, so /metrics shows the series at 0 before the first drop (a scrape sees no gap).
    exchangesDropped.unsafeUpdate(0, [])

    /** Extraction → hash → judge → verdict, with the agent's failure policy when the judge fails. */
    const judgeExtraction = (exchange: Exchange, extraction: Extraction | undefined): Effect.Effect<Judgement> => {
      const thinking = extraction?.thinking
      if (thinking === undefined) {
        return Effect.succeed({
          verdict: "clear",
          thinkingHash: "none",
          analysis: undefined,
          synthetic: "no_thinking_block"
        })
      }
      const thinkingHash = sha256Hex(thinking.text)
      const failed = (): Judgement => ({
        verdict: exchange.settings.failurePolicy === "fail_closed" ? "boundary_violation" : "clear",
        thinkingHash,
        analysis: undefined,
        synthetic: "analysis_failed" satisfies SyntheticReason
      })
      const values = exchange.settings.conscienceValues ?? DEFAULT_CONSCIENCE_VALUES
      return judge
        .analyze({
          thinking: thinking.text,
          card: exchange.settings.card,
          conscienceValues: values,
          window: [], // the session window is the session actor's
          provider: exchange.adapter.name,
          model: extraction?.model
        })
        .pipe(
          Effect.map((analysis): Judgement => ({
            verdict: deriveVerdict(analysis.concerns, boundaryValueNames(values)) satisfies Verdict,
            thinkingHash,
            analysis,
            synthetic: analysis.synthetic_reason
          })),
          Effect.catchAllCause(() => Effect.succeed(failed()))
        )
    }

    /** The response's tool calls against the policy: recorded in the trace, never acted on after the fact. */
    const responsePolicy = (
      exchange: Exchange,
      extraction: Extraction | undefined,
      now: number
    ): PolicyRecord | undefined => {
      if (exchange.policy === undefined) return undefined
      const calls = extraction?.toolCalls ?? []
      const { policy, requestVerdict } = exchange.policy
      const response = evaluatePolicy(
        policy,
        exchange.settings.card,
        calls,
        toolsSeen.lookup(exchange.agentId),
        new Date(now)
      )
      toolsSeen.note(exchange.agentId, calls, now)
      return { mode: policy.defaults.enforcement_mode, requestVerdict, response }
    }

    /** Decided in response order, before the judge: the outcome's kind and the policy on the tool calls. */
    const prepare = (
      exchange: Exchange,
      extraction: Extraction | undefined,
      outcome: ExchangeOutcome,
      held: boolean
    ): Prepared => {
      const kind =
        outcome.kind === "complete" &&
        extraction !== undefined &&
        "complete" in extraction &&
        extraction.complete === false
          ? "partial"
          : outcome.kind
      return {
        exchange,
        extraction,
        outcome: kind === outcome.kind ? outcome : { ...outcome, kind },
        policy: responsePolicy(exchange, extraction, clock.unsafeCurrentTimeMillis()),
        held
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

    const blocked = (settings: AgentSettings, block: GatewayBlock) =>
      announce(blockedEvent(block, randomUUID(), settings.orgId ?? null, new Date(clock.unsafeCurrentTimeMillis())))

    /**
     * Starts one exchange's analysis on its own fiber; the caller holds a judge slot and a place in
     * flight, which the fiber gives back (the slot once judged). The fiber judges at once, completes
     * the returned deferred with the event, then waits for the agent's previous event to be published
     * before publishing this one. A violation then leaves a nudge for the next request in `nudge`
     * mode, and in `enforce` mode when the response was not held (streams cannot be blocked after
     * the fact). Run uninterruptibly: the agent's order must not keep a place for a fiber that never
     * started.
     */
    const start = (prepared: Prepared): Effect.Effect<Deferred.Deferred<GatewayEvent> | undefined> =>
      Effect.gen(function* () {
        const { exchange, held } = prepared
        const agentId = exchange.agentId
        // Only a held response waits for its event: the others make no deferred for it.
        const verdict = held ? yield* Deferred.make<GatewayEvent>() : undefined
        const published = new Published()
        const previous = lastOfAgent.get(agentId)
        lastOfAgent.set(agentId, published)
        const work = Effect.gen(function* () {
          const judgement = yield* Effect.ensuring(judgeExtraction(exchange, prepared.extraction), judging.release(1))
          const event = yield* Effect.sync(() =>
            buildResponseEvent({
              agentId,
              cardId: exchange.settings.cardId ?? exchange.settings.card?.card_id,
              sessionId: exchange.sessionId,
              provider: exchange.adapter.name,
              outcome: prepared.outcome,
              extraction: prepared.extraction,
              judgement,
              policy: prepared.policy,
              now: new Date(clock.unsafeCurrentTimeMillis())
            })
          ).pipe(Effect.onExit((exit) => (verdict === undefined ? Effect.void : Deferred.done(verdict, exit))))
          if (previous !== undefined) yield* Effect.suspend(() => previous.wait())
          yield* publish(agentId, event)
          if (judgement.verdict === "boundary_violation" && exchange.settings.mode !== "observe" && !held) {
            yield* state.setNudge(agentId, nudgeText(event))
          }
        }).pipe(
          Effect.catchAllCause(logFailure),
          Effect.ensuring(
            Effect.suspend(() => {
              if (lastOfAgent.get(agentId) === published) lastOfAgent.delete(agentId)
              published.finish()
              // A held response never waits for a verdict that will not come (interrupted at shutdown).
              return verdict === undefined
                ? inFlight.release(1)
                : Effect.zipRight(Deferred.interrupt(verdict), inFlight.release(1))
            })
          ),
          Effect.interruptible
        )
        yield* FiberSet.run(analyses, work)
        return verdict
      }).pipe(Effect.uninterruptible)

    // Queued exchanges leave the queue in order, each once a judge slot is free: while every slot is
    // busy the queue fills, and beyond its capacity exchanges are dropped (counted) by `enqueue`.
    yield* Effect.gen(function* () {
      yield* inFlight.take(1)
      yield* judging.take(1)
      const job = yield* Queue.take(queue)
      yield* Effect.suspend(() =>
        start(prepare(job.exchange, extract(job.exchange.adapter, job), job.outcome, false))
      ).pipe(
        Effect.catchAllCause((cause) =>
          Effect.zipRight(Effect.all([judging.release(1), inFlight.release(1)]), logFailure(cause))
        )
      )
    }).pipe(Effect.forever, Effect.forkScoped)

    /**
     * Finished exchanges wait here up to ANALYSIS_DELAY_MS before they join the queue, all those of
     * the turn together, in order (so each agent's stay in response order). Node has no priorities: analysing an exchange in the tick its
     * response ended (a few hundred µs with publishing) delays the next request that arrives meanwhile
     * (at one request at a time, every one of them); after a timer, the requests already waiting are
     * served first. They count against the queue's capacity, so a full queue still drops at once.
     */
    const finished: Array<Job> = []
    let turn: ReturnType<typeof setTimeout> | undefined
    let step: ReturnType<typeof setImmediate> | undefined
    /**
     * Hands the oldest finished exchanges to the queue, a slice per turn of the event loop, so a
     * request arriving meanwhile waits for one slice's analysis, not the whole batch's. A slice is at
     * least a quarter of what waits, so under load the backlog stays a few loop turns long.
     */
    const analyseFinished = () => {
      turn = undefined
      step = undefined
      const jobs = finished.splice(0, Math.max(ANALYSIS_SLICE, Math.ceil(finished.length / 4)))
      for (const job of jobs) Queue.unsafeOffer(queue, job)
      if (finished.length > 0) step = setImmediate(analyseFinished)
    }
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        clearTimeout(turn)
        clearImmediate(step)
        for (const job of finished.splice(0)) Queue.unsafeOffer(queue, job)
      })
    )

    const enqueue = (job: Job) => {
      const queued = Math.max(
        0,
        Option.getOrElse(queue.unsafeSize(), () => 0)
      )
      if (queued + finished.length < queueCapacity) {
        finished.push(job)
        if (turn === undefined && step === undefined) turn = setTimeout(analyseFinished, ANALYSIS_DELAY_MS)
      } else {
        dropped++
        exchangesDropped.unsafeUpdate(1, [])
        // Never the job itself in the log: it holds response bytes.
        runFork(
          Effect.logWarning("gateway analysis queue full: exchange dropped").pipe(
            Effect.annotateLogs({ agent_id: job.exchange.agentId, dropped })
          )
        )
      }
    }

    const agentIds = new AgentIds()
    /** Who is calling, or `undefined` without a key (the provider will answer 401 itself; no agent to attribute it to). */
    const identify = (request: InspectedRequest) => {
      const adapter = adapters[request.provider]
      // The server asked `beforeBody` before reading the body: the key was hashed then.
      const keyHash =
        request.holder !== undefined
          ? request.holder.credential
          : adapter.keyHash(headerLookup(request.headers), request.url)
      if (keyHash === undefined) return undefined
      const now = clock.unsafeCurrentTimeMillis()
      const ids = agentIds.lookup(keyHash, headerText(request.headers["x-candor-agent"]), now)
      const sessionId = headerText(request.headers["x-candor-session"]) ?? ids.sessionId
      return { adapter, keyHash, agentId: ids.agentId, sessionId, now }
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
     * `beforeRequest` for the usual request, synchronously: the agent's settings from the local copy,
     * no containment, no pending nudge, no policy finding to announce. Anything else returns
     * `undefined` before changing any state, and `beforeRequest` decides it (with the same result
     * for the same state). The tool memory is noted only once the request is known to pass.
     */
    const beforeRequestSync = (request: InspectedRequest): RequestDecision | undefined => {
      const { nudgePending, peek } = state
      if (peek === undefined || nudgePending === undefined) return undefined
      const who = identify(request)
      if (who === undefined) return unattributed(request)
      const { adapter, agentId, now } = who
      const settings = peek(agentId)
      if (settings.containment !== undefined || nudgePending(agentId)) return undefined
      const transactionId = headerText(request.headers[TRANSACTION_HEADER])
      const transaction =
        transactionId === undefined ? undefined : lookupTransaction(settings.transactions, transactionId, now)
      // A transaction the copy cannot apply is refused (or looked up again) on the effectful path.
      if (transaction !== undefined && transaction.kind !== "open") return undefined
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
          policyEvaluator(policy, settings.card, tools, toolsSeen.lookup(agentId), new Date(now))
        )
        const evaluation = evaluator.run(budget)
        // Not done within the request path's budget: the effectful path goes on in slices.
        if (evaluation === undefined || evaluation.verdict !== "pass") return undefined
        toolsSeen.note(agentId, tools, now)
        headers = POLICY_PASSED
      }
      const exchange: Exchange = {
        adapter,
        agentId,
        sessionId: who.sessionId,
        settings,
        policy: policy === undefined ? undefined : { policy, requestVerdict: "pass" }
      }
      const hold = settings.mode === "enforce" && !adapter.requestInfo(requestBody(), request.url).stream
      return { forward: request.body, context: exchange, hold, headers }
    }

    const service: Inspector["Type"] = {
      beforeBody: (provider, url, headers) => {
        const credential = adapters[provider].keyHash(headerLookup(headers), url)
        const peek = state.peek
        if (credential === undefined || peek === undefined) return { holder: { credential, org: undefined } }
        const now = clock.unsafeCurrentTimeMillis()
        const { agentId } = agentIds.lookup(credential, headerText(headers["x-candor-agent"]), now)
        const settings = peek(agentId)
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
          const who = identify(request)
          if (who === undefined) return unattributed(request)
          const { adapter, agentId, now, sessionId } = who
          let settings = yield* state.get(agentId)
          const transactionId = headerText(request.headers[TRANSACTION_HEADER])
          let transaction =
            transactionId === undefined ? undefined : lookupTransaction(settings.transactions, transactionId, now)
          // The copy may not have the transaction yet (opened a moment ago, the watch not there yet):
          // the shared store is asked once before refusing. Unknown ids cost one KV read each.
          if (transactionId !== undefined && transaction?.kind === "unknown" && state.refresh !== undefined) {
            settings = yield* state.refresh(agentId)
            transaction = lookupTransaction(settings.transactions, transactionId, now)
          }
          const containment = settings.containment
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
            const body = containmentErrorBody(agentId, containment)
            yield* block("containment", body.reason)
            return { respond: jsonResponse(403, body) }
          }
          if (transactionId !== undefined && transaction !== undefined && transaction.kind !== "open") {
            const body = transactionErrorBody(agentId, transactionId, transaction)
            yield* block("transaction", body.reason)
            return { respond: jsonResponse(403, body) }
          }
          // The request body is parsed only when something depends on it (the fast path never does).
          const requestBody = lazyJson(request.body)
          const policy = policyFor(settings, transaction)
          let headers: Record<string, string> | undefined
          let requestVerdict: PolicyVerdict = "pass"
          if (policy !== undefined) {
            const tooMany = toolsOverCapBeforeParse(adapter.name, request.body, toolCaps)
            if (tooMany !== undefined) return { respond: tooMany }
            // Tools that cannot be read cannot be checked: `fail_open: false` refuses such a request in `enforce`.
            if (
              requestBody() === undefined &&
              request.body.length > 0 &&
              !policy.defaults.fail_open &&
              policy.defaults.enforcement_mode === "enforce"
            ) {
              yield* block("policy", UNREADABLE_REQUEST_REASON)
              return { respond: policyUnreadable }
            }
            const tools = adapter.declaredTools(requestBody())
            const overCap = toolsOverCap(adapter.name, requestBody(), tools, toolCaps)
            if (overCap !== undefined) return { respond: overCap }
            const { budget, evaluator } = evaluatorFor(request, policy, () =>
              policyEvaluator(policy, settings.card, tools, toolsSeen.lookup(agentId), new Date(now))
            )
            const evaluation =
              evaluator.run(budget) ?? (yield* slices.evaluate(settings.orgId ?? who.keyHash, evaluator.run))
            toolsSeen.note(agentId, tools, now)
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
            headers = { [POLICY_VERDICT_HEADER]: requestVerdict }
          }
          const exchange: Exchange = {
            adapter,
            agentId,
            sessionId,
            settings,
            policy: policy === undefined ? undefined : { policy, requestVerdict }
          }
          const nudge = yield* state.takeNudge(agentId)
          let forward = request.body
          if (nudge !== undefined) {
            const body = requestBody()
            const injected = body === undefined ? undefined : adapter.injectNudge(body, nudge)
            if (injected !== undefined) forward = Buffer.from(JSON.stringify(injected))
            else yield* state.setNudge(agentId, nudge) // not a request we can rewrite: keep it for the next
          }
          const hold = settings.mode === "enforce" && !adapter.requestInfo(requestBody(), request.url).stream
          return { forward, context: exchange, hold, headers }
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
        Effect.gen(function* () {
          if (context === undefined) return { pass: true } as const
          const exchange = context as Exchange
          const outcome: ExchangeOutcome = {
            kind: "complete",
            status: response.status,
            bytes: response.body.byteLength,
            cause: undefined
          }
          const extraction = extract(exchange.adapter, { stream: false, chunks: [response.body] })
          const prepared = prepare(exchange, extraction, outcome, true)
          // The slot is waited for interruptibly; once taken, the analysis runs to its event even if
          // the client goes away meanwhile, so the exchange is still recorded.
          const verdict = yield* Effect.uninterruptibleMask((restore) =>
            restore(inFlight.take(1)).pipe(
              Effect.zipRight(restore(judging.take(1)).pipe(Effect.onInterrupt(() => inFlight.release(1)))),
              Effect.zipRight(start(prepared))
            )
          )
          // `start` makes the deferred for every held exchange (`prepared.held` is true).
          if (verdict === undefined) return yield* Effect.dieMessage("a held exchange has no verdict to wait for")
          const event = yield* Deferred.await(verdict)
          if (event.checkpoint.verdict !== "boundary_violation") return { pass: true } as const
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
    return service
  })

/**
 * Needs the provider adapters, agent state, the judge and the bus, and uses the `EventFeed` when the
 * process provides one; the worker lives as long as the layer.
 */
export const layer = (options: Partial<GatewayInspectorOptions> = {}) => Layer.scoped(Inspector, make(options))
