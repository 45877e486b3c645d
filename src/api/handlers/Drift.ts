/**
 * Drift: the AAP analysis of the agent's newest traces, computed on request (the actors raise the
 * same alerts as traces arrive; this is the batch view of `detectAapDrift`), and the stored AIP alerts.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { AgentQueries } from "../../../adapters/store/AgentQueries.js"
import { Store } from "../../../adapters/store/Store.js"
import { detectAapDrift } from "../../../core/DriftAap.js"
import { CandorApi } from "../Api.js"
import { readAgent } from "./AgentAccess.js"
import { internal } from "./Access.js"

/** Traces analysed: the newest ones, the oldest of them forming the baseline. */
export const DRIFT_TRACES = 500
/** AIP alerts listed, newest first. */
export const AIP_ALERTS = 100

const round4 = (x: number) => Math.round(x * 10_000) / 10_000

export const DriftLive = HttpApiBuilder.group(CandorApi, "drift", (handlers) =>
  handlers
    .handle("getAapDrift", ({ path }) =>
      Effect.gen(function* () {
        yield* readAgent(path.agent_id)
        const traces = yield* (yield* Store).recentTraces(path.agent_id, DRIFT_TRACES)
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
          agent_id: path.agent_id,
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
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("getAipDriftAlerts", ({ path }) =>
      Effect.gen(function* () {
        yield* readAgent(path.agent_id)
        const alerts = yield* (yield* AgentQueries).aipDriftAlerts(path.agent_id, AIP_ALERTS)
        return { alerts, agent_id: path.agent_id }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
)
