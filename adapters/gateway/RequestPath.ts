/**
 * The request path (docs/architecture.md, "How a response flows", 1): it does only what must
 * happen before forwarding: admit the request (`Admission.ts`: its Candor headers, exactly one
 * credential, the unknown-key limit) and identify the agent, refuse a contained one (its own
 * containment or its key's), refuse a request naming a scoped transaction (`X-Transaction-Id`) the
 * agent has not open, evaluate the tool policy (the agent's, or the agent's narrowed by the open
 * transaction the request names) against the tools the request declares (403 in `enforce` on a
 * violation, else `X-Policy-Verdict` on the response), inject a pending nudge, decide whether to
 * hold the response (non-streaming, with the agent's or the policy's mode `enforce`), and judge the
 * tool results the request hands the model that the agent has not had judged (issue 28:
 * `ToolResultScreening.ts`; each recorded as a `tool_result` checkpoint, a violation refused with
 * 403 in `enforce`). The request body is read (`RequestBody.ts`: decoded, parsed) only when one of
 * these needs it; a body whose bytes name no tool result is not parsed for them. An exchange that
 * cannot be recorded at all is refused before the provider (503).
 *
 * The usual request is decided synchronously (`beforeRequestSync`: the agent's settings are a local
 * copy, so no fiber and no promise per request); a contained agent, a pending nudge or a policy
 * finding go through the effectful `beforeRequest`.
 */
import * as Effect from "effect/Effect"
import type { Mutable } from "effect/Types"
import type * as Clock from "effect/Clock"
import { randomUUID } from "node:crypto"
import {
  type GatewayBlock,
  policyBlockReason,
  policyViolationEvent,
  UNREADABLE_REQUEST_REASON
} from "../../core/EventData.js"
import type { EventOccurrence } from "../../core/Events.js"
import { policyEvaluator } from "../../core/Policy.js"
import { containmentErrorBody } from "../../core/Containment.js"
import { lookupTransaction, transactionErrorBody } from "../../core/ScopedTransaction.js"
import type { AgentSettings, AgentState } from "../bus/AgentState.js"
import type { SpanRecorder } from "../tracing/Tracing.js"
import { parseTraceParent } from "../tracing/TraceParent.js"
import { countContainedThrottled, countOverCap } from "../metrics/GatewayMetrics.js"
import type { DeclaredTool } from "../providers/Provider.js"
import type { makeAdmission } from "./Admission.js"
import type { ContainedRefusals } from "./ContainedRefusals.js"
import type { EventPublisher } from "./EventPublisher.js"
import type { Exchange } from "./ExchangeContext.js"
import { type ExchangeTrace, newExchangeTrace } from "./ExchangeSpans.js"
import { type InspectedRequest, jsonResponse, type RequestDecision } from "./Inspector.js"
import { evaluatorFor, type PolicySlices } from "./PolicySlices.js"
import { unrecordableRefusal } from "./Recording.js"
import {
  POLICY_PASSED,
  POLICY_VERDICT_HEADER,
  policyBlocked,
  policyUnreadable,
  TOOL_RESULT_BLOCK_REASON,
  toolResultBlocked,
  toolResultsOverCap
} from "./Refusals.js"
import { isEncoded, parseJsonBodyOnce, RequestBody } from "./RequestBody.js"
import { decideRequest, type RequestFacts, type RequestPolicy } from "./RequestDecision.js"
import { type ToolCaps, toolsOverCap, toolsOverCapBeforeParse } from "./ToolCaps.js"
import type { JudgedToolResult, ToolResultJudgingInput } from "./ToolResultJudging.js"
import type { ToolResultMemory } from "./ToolResultMemory.js"
import { makeRequestScreening, NOTHING_LEFT } from "./ToolResultScreening.js"
import { makeNudgeInjection } from "./NudgeInjection.js"

/** The plain request body parsed on first use, once for both paths (most requests never need it). */
const lazyJson =
  (bytes: Uint8Array): (() => unknown) =>
  () =>
    parseJsonBodyOnce(bytes)

/** `X-Policy-Verdict` of a request the policy let through; none without an active policy. */
const verdictHeaders = (policy: RequestPolicy | undefined): Readonly<Record<string, string>> | undefined =>
  policy === undefined
    ? undefined
    : policy.requestVerdict === "pass"
      ? POLICY_PASSED
      : { [POLICY_VERDICT_HEADER]: policy.requestVerdict }

export interface RequestPathOptions {
  readonly admission: ReturnType<typeof makeAdmission>
  readonly state: AgentState["Type"]
  readonly clock: Clock.Clock
  /** The span recorder when the process exports traces (ExchangeSpans.ts). */
  readonly tracing: SpanRecorder | undefined
  readonly toolCaps: ToolCaps
  /** The tool results each agent already had judged (ToolResultMemory.ts). */
  readonly toolResults: ToolResultMemory
  readonly judgeToolResult: (input: ToolResultJudgingInput) => Effect.Effect<JudgedToolResult>
  /** Costly policy evaluations, a slice per turn of the event loop (PolicySlices.ts). */
  readonly slices: PolicySlices
  /** A contained agent's refusals recorded a second (ContainedRefusals.ts). */
  readonly refusalsRecorded: ContainedRefusals
  readonly publisher: EventPublisher
  /** A 403's enforcement record and announcement (Publication.ts). */
  readonly blocked: (settings: AgentSettings, block: GatewayBlock) => Effect.Effect<void>
  /** A catalogue event, off the caller's path (Publication.ts). */
  readonly announce: (occurrence: EventOccurrence | undefined) => Effect.Effect<void>
}

export const makeRequestPath = ({
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
}: RequestPathOptions) => {
  const { publish } = publisher
  const { screenToolResults, unjudged } = makeRequestScreening(toolResults, judgeToolResult, publish)
  const withNudge = makeNudgeInjection(state, publish, clock)

  /** The exchange's trace notes, continuing the agent's `traceparent` (its body kept for the model, unless encoded). */
  const traceOf = (request: InspectedRequest): ExchangeTrace =>
    newExchangeTrace(
      parseTraceParent(request.headers.traceparent),
      request.url,
      request.headers["content-encoding"] === undefined ? request.body : undefined,
      request.startedAt
    )

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
   * `beforeRequest` for the usual request, synchronously: the agent's settings from the local copy,
   * the decision (`decideRequest`) followed as far as it needs no effect: no containment, no pending
   * nudge, no policy finding to announce, no tool result to judge. Anything else returns `undefined`
   * before changing any state, and `beforeRequest` decides it (with the same result for the same
   * state). The tools' first sightings are noted only once the request is known to pass.
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
    // A pending nudge is taken, and its injection recorded, on the effectful path.
    if (nudgePending(agentId)) return undefined
    // An encoded body (Content-Encoding) is decoded, off the thread, on the effectful path.
    if (request.headers["content-encoding"] !== undefined && isEncoded(request.headers)) return undefined
    const settings = peek(agentId)
    const facts: Mutable<RequestFacts> = {
      keyContainment: who.keyContainment,
      transactionId,
      transaction:
        transactionId === undefined ? undefined : lookupTransaction(settings.transactions, transactionId, now),
      // Every fact present from the start (undefined until learned): the object keeps one shape.
      toolsUnreadable: undefined,
      evaluation: undefined,
      toolResults: undefined
    }
    const requestBody = lazyJson(request.body)
    let tools: ReadonlyArray<DeclaredTool> | undefined
    for (;;) {
      const decision = decideRequest(settings, facts)
      switch (decision._tag) {
        case "ReadTools": {
          const tooMany = toolsOverCapBeforeParse(adapter.name, request.body, toolCaps)
          if (tooMany !== undefined) return { respond: tooMany }
          // Tools that cannot be read are refused or forwarded unchecked, recorded, on the effectful path.
          if (requestBody() === undefined && request.body.length > 0) return undefined
          facts.toolsUnreadable = false
          break
        }
        case "EvaluateTools": {
          const { policy } = decision
          const declared = adapter.declaredTools(requestBody())
          const overCap = toolsOverCap(adapter.name, requestBody(), declared, toolCaps)
          if (overCap !== undefined) return { respond: overCap }
          const { budget, evaluator } = evaluatorFor(request.body, policy, () =>
            policyEvaluator(policy, settings.card, declared, state.toolsFirstSeen(agentId), new Date(now))
          )
          const evaluation = evaluator.run(budget)
          // Not done within the request path's budget: the effectful path goes on in slices. A
          // finding is announced there.
          if (evaluation === undefined || evaluation.verdict !== "pass") return undefined
          tools = declared
          facts.evaluation = evaluation
          break
        }
        case "ScreenToolResults":
          if (unjudged(adapter, request.body, requestBody, agentId, settings)) return undefined
          facts.toolResults = NOTHING_LEFT
          break
        case "Forward": {
          if (tools !== undefined) state.noteTools(agentId, tools, now)
          const exchange: Exchange = {
            adapter,
            agentId,
            agentName: who.agentName,
            sessionId: who.sessionId,
            keyHash: who.keyHash,
            settings,
            policy: decision.policy,
            trace: tracing === undefined ? undefined : traceOf(request)
          }
          const hold = decision.holdsAnswer && !adapter.requestInfo(requestBody(), request.url).stream
          return { forward: request.body, context: exchange, hold, headers: verdictHeaders(decision.policy) }
        }
        default:
          // A refusal is recorded (a contained agent's throttled) on the effectful path, and a
          // transaction the copy cannot apply is looked up again there.
          return undefined
      }
    }
  }

  const beforeRequest = (request: InspectedRequest): Effect.Effect<RequestDecision> =>
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
      const block = (rule: GatewayBlock["rule"], reason: string, checkpointId: string | null = null) =>
        blocked(settings, { agentId, sessionId, provider: adapter.name, rule, reason, checkpointId })
      // The request body is read (decoded, parsed) only when something depends on it (the fast path never does).
      const body = new RequestBody(request.body, request.headers)
      const facts: Mutable<RequestFacts> = { keyContainment: who.keyContainment, transactionId, transaction }
      for (;;) {
        const decision = decideRequest(settings, facts)
        switch (decision._tag) {
          case "Contained": {
            // Past its refusals recorded a second, a contained agent is answered 429, counted, not recorded.
            const wait = refusalsRecorded.take(agentId, now)
            if (wait !== undefined) {
              countContainedThrottled()
              const response = jsonResponse(429, {
                error: `agent ${agentId} is contained and calling too often; retry later`
              })
              return { respond: { ...response, headers: { ...response.headers, "retry-after": String(wait) } } }
            }
            const { containment, scope } = decision.containment
            const refusal = containmentErrorBody(agentId, containment, scope)
            yield* block("containment", refusal.reason)
            return { respond: jsonResponse(403, refusal) }
          }
          case "TransactionNotOpen": {
            const refusal = transactionErrorBody(agentId, decision.transactionId, decision.lookup)
            yield* block("transaction", refusal.reason)
            return { respond: jsonResponse(403, refusal) }
          }
          case "ReadTools":
            // A flood of tools is refused from the plain bytes before any parse (an encoded body is
            // counted once decoded, below).
            if (body.coding === "identity") {
              const tooMany = toolsOverCapBeforeParse(adapter.name, request.body, toolCaps)
              if (tooMany !== undefined) return { respond: tooMany }
            }
            facts.toolsUnreadable = yield* body.unreadable
            break
          case "ToolsUnreadable":
            yield* block("policy", UNREADABLE_REQUEST_REASON)
            return { respond: policyUnreadable }
          case "EvaluateTools": {
            const { policy } = decision
            const json = yield* body.json
            const tools = adapter.declaredTools(json)
            const overCap = toolsOverCap(adapter.name, json, tools, toolCaps)
            if (overCap !== undefined) return { respond: overCap }
            const { budget, evaluator } = evaluatorFor(request.body, policy, () =>
              policyEvaluator(policy, settings.card, tools, state.toolsFirstSeen(agentId), new Date(now))
            )
            const evaluation =
              evaluator.run(budget) ?? (yield* slices.evaluate(settings.orgId ?? who.keyHash, evaluator.run))
            state.noteTools(agentId, tools, now)
            const mode = policy.defaults.enforcement_mode
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
            facts.evaluation = evaluation
            break
          }
          // Blocked before the nudge is taken: a pending nudge waits for a request that goes out.
          case "PolicyBlocked":
            yield* block("policy", policyBlockReason(decision.evaluation))
            return { respond: policyBlocked(decision.evaluation) }
          case "ScreenToolResults": {
            // The policy's findings on a request going out, logged before its tool results are screened.
            if (facts.evaluation?.verdict === "fail") {
              yield* Effect.logWarning("tool policy violated (warn mode: forwarded)").pipe(
                Effect.annotateLogs({ agent_id: agentId, tools: facts.evaluation.violations.map((v) => v.tool) })
              )
            }
            if (facts.toolsUnreadable === true) {
              yield* Effect.logWarning("request tools unreadable (policy fails open: forwarded unchecked)").pipe(
                Effect.annotateLogs({ agent_id: agentId })
              )
            }
            facts.toolResults = yield* screenToolResults(request, body, who, settings)
            break
          }
          case "ToolResultRefused":
            yield* block("enforce", TOOL_RESULT_BLOCK_REASON, decision.checkpointId)
            return { respond: toolResultBlocked(decision.checkpointId) }
          case "ToolResultsOverCap":
            countOverCap("tool_results")
            return { respond: toolResultsOverCap(decision.left) }
          case "Forward": {
            if (decision.toolResultsLeft > 0) {
              yield* Effect.logWarning("tool results left unjudged for a later request").pipe(
                Effect.annotateLogs({ agent_id: agentId, left: decision.toolResultsLeft })
              )
            }
            const exchange: Exchange = {
              adapter,
              agentId,
              agentName: who.agentName,
              sessionId,
              keyHash: who.keyHash,
              settings,
              policy: decision.policy,
              trace: undefined
            }
            const forward = yield* withNudge(request, body, exchange)
            const hold = decision.holdsAnswer && !adapter.requestInfo(yield* body.json, request.url).stream
            // Noted last: the decision (nudge and policy included) ends here.
            return {
              forward,
              context: tracing === undefined ? exchange : { ...exchange, trace: traceOf(request) },
              hold,
              headers: verdictHeaders(decision.policy)
            }
          }
        }
      }
    })

  return { beforeRequestSync, beforeRequest }
}
