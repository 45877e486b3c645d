/**
 * An agent's integrity: its trace verification counts, and their ratio as the score. Whether the
 * caller may read the agent is the caller's to check.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { AgentQueries } from "../adapters/store/AgentQueries.js"

export const make = Effect.gen(function* () {
  const queries = yield* AgentQueries

  /** The agent's integrity report. */
  const of = (agentId: string) =>
    Effect.map(queries.traceCounts(agentId), (counts) => {
      const verified = counts.total - counts.violating
      return {
        agent_id: agentId,
        total_traces: counts.total,
        verified_traces: verified,
        violation_count: counts.violations,
        // Nothing recorded is nothing inconsistent: a new agent starts at 1.
        integrity_score: counts.total === 0 ? 1 : verified / counts.total
      }
    })

  return { of }
})

export class Integrity extends Context.Tag("candor/services/Integrity")<
  Integrity,
  Effect.Effect.Success<typeof make>
>() {}

export const layer = Layer.effect(Integrity, make)
