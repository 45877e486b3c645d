/**
 * An agent's self-similarity matrix (GET /v1/ssm/{agent_id}): its newest traces, oldest first, each
 * with its cosine similarity to every trace of the list. Quadratic in the number of traces, so
 * bounded to `SSM_TRACES`.
 *
 * Whether the caller may read the agent is the caller's to check.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Store } from "../adapters/store/Store.js"
import { chronological } from "../core/DriftAap.js"
import type { APTrace } from "../core/schema/Trace.js"
import { cosineSimilarity, traceFeatures } from "../core/TraceFeatures.js"

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

export const make = Effect.gen(function* () {
  const store = yield* Store

  /** The matrix of the agent's newest `SSM_TRACES` traces. */
  const matrix = (agentId: string) =>
    Effect.map(store.recentTraces(agentId, SSM_TRACES), (recent) => {
      const traces = selfSimilarity(recent)
      return { agent_id: agentId, trace_count: traces.length, traces }
    })

  return { matrix }
})

export class SelfSimilarity extends Context.Tag("candor/services/SelfSimilarity")<
  SelfSimilarity,
  Effect.Effect.Success<typeof make>
>() {}

export const layer = Layer.effect(SelfSimilarity, make)
