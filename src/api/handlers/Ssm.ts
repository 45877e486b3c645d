/**
 * GET /v1/ssm/{agent_id}: the self-similarity matrix of the agent's newest traces. Quadratic in the
 * number of traces, so bounded to `SSM_TRACES`.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { Store } from "../../../adapters/store/Store.js"
import { chronological } from "../../../core/DriftAap.js"
import type { APTrace } from "../../../core/schema/Trace.js"
import { cosineSimilarity, traceFeatures } from "../../../core/TraceFeatures.js"
import { CandorApi } from "../Api.js"
import { readAgent } from "./AgentAccess.js"
import { internal } from "./Access.js"

export const SSM_TRACES = 50

const round4 = (x: number) => Math.round(x * 10_000) / 10_000

/** Each trace (oldest first) with its similarity to every trace of the list, itself included. */
export const selfSimilarity = (traces: ReadonlyArray<APTrace>) => {
  const ordered = chronological(traces)
  const features = ordered.map(traceFeatures)
  return ordered.map((trace, i) => {
    const row = features.map((other) => round4(cosineSimilarity(features[i]!, other)))
    const others = row.filter((_, j) => j !== i)
    return {
      trace_id: trace.trace_id,
      timestamp: trace.timestamp,
      action: { type: trace.action.type, name: trace.action.name, category: trace.action.category },
      verified: trace.verification.verified,
      similarities: row,
      mean_similarity: others.length === 0 ? null : round4(others.reduce((sum, s) => sum + s, 0) / others.length)
    }
  })
}

export const SsmLive = HttpApiBuilder.group(CandorApi, "ssm", (handlers) =>
  handlers.handle("getSsm", ({ path }) =>
    Effect.gen(function* () {
      yield* readAgent(path.agent_id)
      const traces = selfSimilarity(yield* (yield* Store).recentTraces(path.agent_id, SSM_TRACES))
      return { agent_id: path.agent_id, trace_count: traces.length, traces }
    }).pipe(Effect.catchTag("StoreError", internal))
  )
)
