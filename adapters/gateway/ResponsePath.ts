/**
 * The response path of an exchange the request path let through: the observer of its copy
 * (`onResponse`, synchronous and cheap: it runs between the upstream's headers and the client's),
 * an exchange that never got response headers (`onFailure`), and a held answer (`completeNonStreaming`:
 * enforce, non-streaming), released or refused once its verdict is known. Each hands the finished
 * exchange to the analysis queue (Analysis.ts).
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type { GatewayBlock } from "../../core/EventData.js"
import type { GatewayEvent } from "../../core/schema/Event.js"
import type { AgentSettings } from "../bus/AgentState.js"
import type { SpanRecorder } from "../tracing/Tracing.js"
import { headerText } from "./AgentIdentity.js"
import type { Answer } from "./AnswerReading.js"
import { codingOf, decodeBody } from "./ContentCoding.js"
import type { Exchange } from "./ExchangeContext.js"
import { type ExchangeOutcome, noopObserver } from "./ExchangeOutcome.js"
import { recordProviderRefusalSpans } from "./ExchangeSpans.js"
import { type Inspector, jsonResponse } from "./Inspector.js"
import { isProviderRefusal, providerRefused } from "./Recording.js"
import { answerPolicyBlocked } from "./Refusals.js"

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

export interface ResponsePathOptions {
  /** What the provider's status tells of the credential (Admission.ts). */
  readonly noteAnswer: (keyHash: string, status: number) => void
  /** The span recorder when the process exports traces (ExchangeSpans.ts). */
  readonly tracing: SpanRecorder | undefined
  /** Hands a finished exchange to analysis (Analysis.ts); with `verdict`, a held client waits for it. */
  readonly enqueue: (
    exchange: Exchange,
    answer: Answer,
    outcome: ExchangeOutcome,
    verdict: Deferred.Deferred<GatewayEvent> | undefined
  ) => void
  /** A 403's enforcement record and announcement (Publication.ts). */
  readonly blocked: (settings: AgentSettings, block: GatewayBlock) => Effect.Effect<void>
}

export const makeResponsePath = ({
  blocked,
  enqueue,
  noteAnswer,
  tracing
}: ResponsePathOptions): Pick<Inspector["Type"], "onResponse" | "onFailure" | "completeNonStreaming"> => ({
  onResponse: (context, head) => {
    if (context === undefined) return noopObserver
    noteAnswer((context as Exchange).keyHash, head.status)
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
      if (exchange.trace !== undefined) exchange.trace.endedAt = exchange.trace.respondedAt = process.hrtime.bigint()
      noteAnswer(exchange.keyHash, response.status)
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
})
