/**
 * The analysis of finished exchanges, off the client's path (docs/architecture.md, "How a response
 * flows", 2–3). Finished exchanges join the analysis queue after a short turn (`ANALYSIS_DELAY_MS`),
 * in slices, so that requests waiting are served before analysis. The queue is bounded and shared
 * fairly by tenant (`FairQueue.ts`), so analysis never delays a byte to the client and nothing
 * answered leaves the record: a full queue makes its longest tenant give up its oldest exchange,
 * recorded unanalysed (`over_share`, counted), never dropped or waited on.
 *
 * Judging is concurrent: up to `concurrency` judge calls are in flight at once, across agents and
 * within one (an LLM judge answers in about a second; one call at a time would analyse one response
 * per round trip), each within ANALYSIS_TIMEOUT_MS (`Judging.ts`). Each agent's exchanges take their
 * place in response order when they finish and leave their tenant's queue in that order (the
 * tools' first sightings are noted then), and each waits for the agent's previous event to be
 * published before publishing its own, so an agent's events reach the bus in response order
 * whichever judge call finishes first. A held response (enforce, non-streaming) is decoded as the
 * observed copy is, queued and judged the same way, and answers as soon as its verdict is known.
 */
import * as Cause from "effect/Cause"
import type * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as FiberSet from "effect/FiberSet"
import * as Runtime from "effect/Runtime"
import { evaluateToolCalls } from "../../core/ToolCallPolicy.js"
import type { GatewayEvent } from "../../core/schema/Event.js"
import type { AgentState } from "../bus/AgentState.js"
import type { SpanRecorder } from "../tracing/Tracing.js"
import { formatTraceParent } from "../tracing/TraceParent.js"
import { type Answer, readAnswer, type ReadAnswer, recordedOutcome } from "./AnswerReading.js"
import type { EventPublisher } from "./EventPublisher.js"
import type { Exchange } from "./ExchangeContext.js"
import type { ExchangeOutcome } from "./ExchangeOutcome.js"
import { type ExchangeTrace, recordExchangeSpans } from "./ExchangeSpans.js"
import { FairQueue } from "./FairQueue.js"
import type { makeJudging } from "./Judging.js"
import { logFailure } from "./Publication.js"
import { countUnanalysed } from "./Recording.js"
import { buildResponseEvent, nudgeText, type PolicyRecord } from "./ResponseEvent.js"
import { unanalysedJudgement } from "./UnanalysedJudgement.js"

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

/** The tools of the answer's calls an enforcing policy forbids, or undefined when it forbids none (or does not enforce). */
const forbiddenCalls = (policy: PolicyRecord | undefined): ReadonlyArray<string> | undefined => {
  if (policy === undefined || policy.mode !== "enforce" || policy.response.verdict !== "fail") return undefined
  return [...new Set(policy.response.violations.map((v) => v.tool))]
}

/** The nudge after a streamed answer called tools the enforcing policy forbids (names the checkpoint, as `nudgeText`). */
const policyNudgeText = (event: GatewayEvent, tools: ReadonlyArray<string>): string =>
  "[INTEGRITY NOTICE — Candor]\n" +
  `Your previous response (checkpoint ${event.checkpoint.checkpoint_id}) was flagged: it called tools the tool policy forbids (${tools.join(", ")}).\n` +
  "Do not call them; ask the user instead."

export interface AnalysisOptions {
  readonly state: AgentState["Type"]
  readonly judging: ReturnType<typeof makeJudging>
  readonly clock: Clock.Clock
  /** The span recorder when the process exports traces (ExchangeSpans.ts). */
  readonly tracing: SpanRecorder | undefined
  readonly publish: EventPublisher["publish"]
  readonly queueCapacity: number
  readonly concurrency: number
}

/** The analysis worker; it lives as long as the scope. `enqueue` hands it a finished exchange. */
export const makeAnalysis = ({
  clock,
  concurrency,
  judging,
  publish,
  queueCapacity,
  state,
  tracing
}: AnalysisOptions) =>
  Effect.gen(function* () {
    // Made after the publisher, so closed before it: analysis stops, then publishing drains.
    const runAnalysis = yield* FiberSet.makeRuntime<never, void, never>()
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

    return { enqueue }
  })
