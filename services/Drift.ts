/**
 * An agent's drift: the AAP analysis of its newest traces, computed on request (the actors raise the
 * same alerts as traces arrive; this is the batch view of `detectAapDrift`), and its stored AIP alerts.
 * Nothing is written. Who may read the agent is the caller's to check.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { AgentQueries } from "../adapters/store/AgentQueries.js"
import { Store } from "../adapters/store/Store.js"
import { detectAapDrift } from "../core/DriftAap.js"

/** Traces analysed: the newest ones, the oldest of them forming the baseline. */
export const DRIFT_TRACES = 500
/** AIP alerts listed, newest first. */
export const AIP_ALERTS = 100

const round4 = (x: number) => Math.round(x * 10_000) / 10_000

export const make = Effect.gen(function* () {
  const store = yield* Store
  const queries = yield* AgentQueries

  /** The AAP drift of the agent's newest `DRIFT_TRACES` traces, as of now; similarities to four decimals. */
  const aap = (agentId: string) =>
    Effect.gen(function* () {
      const traces = yield* store.recentTraces(agentId, DRIFT_TRACES)
      const analysis = detectAapDrift(traces, new Date(yield* Clock.currentTimeMillis))
      const similarities = analysis.similarities.map(({ similarity, trace_id }) => ({
        trace_id,
        similarity: round4(similarity)
      }))
      const mean =
        similarities.length === 0
          ? null
          : round4(analysis.similarities.reduce((sum, s) => sum + s.similarity, 0) / similarities.length)
      return {
        agent_id: agentId,
        analyzed_traces: analysis.analyzed_traces,
        drift: {
          baseline_size: analysis.baseline_size,
          similarity_threshold: analysis.similarity_threshold,
          sustained_traces: analysis.sustained_traces,
          mean_similarity: mean,
          similarities,
          alerts: analysis.alerts
        }
      }
    })

  /** The agent's newest `AIP_ALERTS` stored AIP drift alerts. */
  const aipAlerts = (agentId: string) =>
    Effect.map(queries.aipDriftAlerts(agentId, AIP_ALERTS), (alerts) => ({ alerts, agent_id: agentId }))

  return { aap, aipAlerts }
})

export class Drift extends Context.Tag("candor/services/Drift")<Drift, Effect.Effect.Success<typeof make>>() {}

export const layer = Layer.effect(Drift, make)
