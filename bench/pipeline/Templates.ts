/**
 * The events the rows that publish to the bus themselves (throughput, latency, soak, failover) send,
 * as an `EventSource`: the `i`-th event of a run, round-robin over the row's agents.
 *
 * - bare: `test/support/Events.ts`'s `gatewayEvent` for unclaimed agents (a clear checkpoint, no
 *   concerns, no card, no policy, no thinking);
 * - realistic: what the real gateway published for the claimed agents. Each agent's three kinds of
 *   answer (bench/pipeline/RealisticContent.ts) are sent once through `candor serve --role gateway`
 *   in front of the fake provider, and the events it publishes are captured from NATS
 *   (`<prefix>.events.>`, a plain subscription beside the stream); a run's events are copies with
 *   fresh checkpoint and trace ids and timestamps, in the shape's mix (one in ten an injection, one in
 *   ten a review). The captured exchanges are committed by the row's workers like any others: they
 *   are part of its warm-up.
 */
import { randomUUID } from "node:crypto"
import * as Effect from "effect/Effect"
import { Pool } from "undici"
import type { NatsConnection } from "../../adapters/bus/NatsConnection.js"
import { BATCH_HEADER, batchEvents } from "../../adapters/bus/EventBatch.js"
import type { GatewayEvent } from "../../core/schema/Event.js"
import { gatewayEvent } from "../../test/support/Events.js"
import type { Organization } from "./Operator.js"
import {
  ANSWER_HEADER,
  ANSWER_KINDS,
  type AnswerKind,
  answerKindOf,
  EXPECTED_VERDICT,
  realisticRequestBody
} from "./RealisticContent.js"

export interface EventSource {
  readonly agents: ReadonlyArray<string>
  /** The `i`-th event of a run: agent `i mod agents`, made now. */
  readonly event: (i: number) => GatewayEvent
}

export const bareSource = (agents: ReadonlyArray<string>): EventSource => ({
  agents,
  event: (i) => gatewayEvent(agents[i % agents.length]!)
})

/** A copy of `template` as a new exchange: fresh checkpoint and trace ids, stamped now. */
export const copyOf = (template: GatewayEvent): GatewayEvent => {
  const traceId = `tr-${randomUUID()}`
  const timestamp = new Date().toISOString()
  return {
    ...template,
    checkpoint: { ...template.checkpoint, checkpoint_id: `ic-${randomUUID()}`, timestamp, linked_trace_id: traceId },
    trace: { ...template.trace, trace_id: traceId, timestamp }
  }
}

export type Templates = ReadonlyMap<string, Readonly<Record<AnswerKind, GatewayEvent>>>

export const realisticSource = (templates: Templates, agents: ReadonlyArray<string>): EventSource => ({
  agents,
  event: (i) => copyOf(templates.get(agents[i % agents.length]!)![answerKindOf(i, agents.length)])
})

const KIND_OF_VERDICT = new Map<string, AnswerKind>(ANSWER_KINDS.map((kind) => [EXPECTED_VERDICT[kind], kind]))

/**
 * One call of each kind per agent through the gateway at `gatewayUrl`, `concurrency` in flight, and
 * the events published for them. Fails when a call is refused, or an event's verdict is not its
 * kind's (the shape would not be what it says).
 */
export const captureTemplates = (
  nc: NatsConnection["Type"],
  prefix: string,
  gatewayUrl: string,
  organizations: ReadonlyArray<Organization>,
  concurrency = 32
): Effect.Effect<Templates, Error> =>
  Effect.async<Templates, Error>((resume) => {
    const templates = new Map<string, Partial<Record<AnswerKind, GatewayEvent>>>()
    const wanted = organizations.reduce((n, org) => n + org.agents.length, 0) * ANSWER_KINDS.length
    let captured = 0
    let finished = false
    const finish = (outcome: Effect.Effect<Templates, Error>) => {
      if (finished) return
      finished = true
      clearTimeout(timer)
      subscription.unsubscribe()
      void pool.close()
      resume(outcome)
    }
    const take = (event: GatewayEvent) => {
      const kind = KIND_OF_VERDICT.get(event.checkpoint.verdict)
      if (kind === undefined)
        return finish(Effect.fail(new Error(`a captured event has verdict ${event.checkpoint.verdict}`)))
      const mine = templates.get(event.agent_id) ?? {}
      if (mine[kind] === undefined) captured++
      mine[kind] = event
      templates.set(event.agent_id, mine)
      if (captured === wanted) finish(Effect.succeed(templates as Templates))
    }
    const subscription = nc.subscribe(`${prefix}.events.>`, {
      callback: (error, message) => {
        if (error !== null) return finish(Effect.fail(new Error(`capture subscription: ${error.message}`)))
        const body = message.json<unknown>()
        const batch = message.headers?.get(BATCH_HEADER) ? batchEvents(body) : undefined
        for (const payload of batch === undefined ? [body] : batch.map((item) => item.payload))
          take(payload as GatewayEvent)
      }
    })
    const timer = setTimeout(
      () => finish(Effect.fail(new Error(`captured ${captured} of ${wanted} events within 120 s`))),
      120_000
    )
    const pool = new Pool(gatewayUrl, { connections: concurrency, pipelining: 1 })
    const calls = organizations.flatMap((org) =>
      org.agents.flatMap((agent) => ANSWER_KINDS.map((kind) => ({ org, agent, kind })))
    )
    let next = 0
    const caller = async () => {
      while (next < calls.length && !finished) {
        const { agent, kind, org } = calls[next++]!
        const response = await pool.request({
          method: "POST",
          path: "/anthropic/v1/messages",
          headers: {
            "content-type": "application/json",
            "x-api-key": org.providerKey,
            "anthropic-version": "2023-06-01",
            "x-candor-agent": agent.name,
            [ANSWER_HEADER]: kind
          },
          body: realisticRequestBody
        })
        await response.body.dump()
        if (response.statusCode !== 200) throw new Error(`a capture call answered ${response.statusCode}`)
      }
    }
    // Flushed once every call is answered, so the subscription has seen what the gateway published.
    Promise.all(Array.from({ length: concurrency }, caller))
      .then(() => nc.flush())
      .catch((error: unknown) => finish(Effect.fail(error instanceof Error ? error : new Error(String(error)))))
  })
