/**
 * The work a commit defers, as backlogs a run waits out (issue 25: a run ends when they are back
 * where they started, and that drain counts in the CPU per checkpoint):
 *
 * - outbox: items due or leased (`decision`, `event` to the feed, `webhook` deliveries), dead ones
 *   and proof jobs aside: proving is the prover role's, which these rows do not run, so proof jobs
 *   are counted (`proofJobs`) but not waited for;
 * - fan-out: feed events the webhook fan-out (durable consumer `feed-webhooks`) has not acked;
 * - reputation: checkpoints committed but not yet counted in their agent's reputation tally.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { jetstreamManager } from "@nats-io/jetstream"
import * as Effect from "effect/Effect"
import { pollIntervalMs } from "./Polling.js"
import { settings } from "./Settings.js"
import type { NatsConnection } from "../../adapters/bus/NatsConnection.js"
import { feedConsumerName, feedStreamName } from "../../adapters/bus/Subjects.js"

const now = () => performance.now()

export interface Backlog {
  readonly outbox: number
  readonly proofJobs: number
  readonly fanOut: number
  readonly reputation: number
}

export const backlogProbe = (
  sql: SqlClient.SqlClient,
  nc: NatsConnection["Type"],
  prefix: string
): Effect.Effect<Backlog, unknown> =>
  Effect.gen(function* () {
    const [outbox] = yield* sql<{ deferred: unknown; proofs: unknown }>`
      select count(*) filter (where kind <> 'prover') as deferred, count(*) filter (where kind = 'prover') as proofs
      from outbox where not dead`
    const [reputation] = yield* sql<{ lag: unknown }>`
      select coalesce(sum(h.position - coalesce(t.tree_size, 0)), 0) as lag
      from chain_heads h left join reputation_tallies t on t.agent_id = h.agent_id`
    const fanOut = yield* Effect.promise(async () => {
      try {
        const jsm = await jetstreamManager(nc)
        const info = await jsm.consumers.info(feedStreamName(prefix), feedConsumerName("webhooks"))
        return info.num_pending + info.num_ack_pending
      } catch {
        // No feed stream or consumer yet: nothing waits.
        return 0
      }
    })
    return {
      outbox: Number(outbox?.deferred ?? 0),
      proofJobs: Number(outbox?.proofs ?? 0),
      fanOut,
      reputation: Number(reputation?.lag ?? 0)
    }
  })

/** Each backlog is at most where it was in `start`. */
export const drainedTo = (start: Backlog, now: Backlog): boolean =>
  now.outbox <= start.outbox && now.fanOut <= start.fanOut && now.reputation <= start.reputation

/** When each backlog was last seen above where it started (`performance.now()`), and when all were back. */
export interface Drain {
  readonly at: number
  readonly lastAbove: { readonly outbox: number; readonly fanOut: number; readonly reputation: number }
}

/**
 * Polls (at `pollIntervalMs` of the time waited) until every backlog is back to `start` (or below),
 * and says when each was last above it; fails after `timeoutMs` with what is still waiting.
 */
export const awaitDrained = (
  probe: Effect.Effect<Backlog, unknown>,
  start: Backlog,
  timeoutMs = settings.drainSeconds * 1000
): Effect.Effect<Drain, unknown> =>
  Effect.gen(function* () {
    const since = now()
    const deadline = since + timeoutMs
    const lastAbove = { outbox: 0, fanOut: 0, reputation: 0 }
    for (;;) {
      const backlog = yield* probe
      const at = now()
      for (const key of ["outbox", "fanOut", "reputation"] as const) if (backlog[key] > start[key]) lastAbove[key] = at
      if (drainedTo(start, backlog)) return { at, lastAbove }
      if (at > deadline)
        return yield* Effect.fail(
          new Error(`backlogs not drained: ${JSON.stringify(backlog)} (they started at ${JSON.stringify(start)})`)
        )
      yield* Effect.sleep(pollIntervalMs(at - since))
    }
  })
