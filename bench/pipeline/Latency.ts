/**
 * The latency row: a fixed rate for `settings.latencySeconds` over agents the worker already knows.
 * Publish-to-commit runs from just before the publish call to the first poll of `chain_heads`
 * (every 10 ms, reading only the agents with events outstanding, so the poll stays cheap beside
 * what it measures) whose answer shows the agent's chain past that event: an upper bound, late by
 * at most one poll interval plus the query. An agent's events are committed in publish order (one
 * partition, one consumer), so its chain position says which of them are in.
 */
import * as Effect from "effect/Effect"
import { type Backend, deploy } from "./Deployment.js"
import { now, publishAtRate, warmUp } from "./Load.js"
import { type FeatureBreakdown, profiled } from "./Profiling.js"
import type { Shape } from "./Shape.js"
import { settings } from "./Settings.js"
import { type Measurement, openWindow } from "./Window.js"

export interface LatencyResult {
  readonly rate: number
  readonly published: number
  readonly seconds: number
  readonly p50: number
  readonly p90: number
  readonly p99: number
  readonly max: number
  /** Published but not seen committed 30 s after the last publish. */
  readonly missing: number
  readonly shape: Shape
  /** CPU per checkpoint by process over the timed part and the drain after it, by feature. */
  readonly measured: Measurement & { readonly features: FeatureBreakdown | undefined }
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN

export const latency = (backend: Backend, rate: number, shape: Shape): Effect.Effect<LatencyResult, unknown> =>
  profiled("latency", shape, (dir) =>
    Effect.gen(function* () {
      const d = yield* deploy({
        backend,
        worker: backend === "postgres" ? settings.pgWorker : "inline",
        partitions: settings.partitions,
        shape,
        agents: { label: "lat", count: settings.agents },
        profileDir: dir
      })
      const agents = d.source.agents
      const before = yield* warmUp(d, true)
      // Per agent: the publish times of its events, how many of them were seen committed, and where
      // its chain stood before (the warm-up).
      const publishedAt = new Map<string, Array<number>>(agents.map((a) => [a, []]))
      const seen = new Map<string, number>(agents.map((a) => [a, 0]))
      const offset = new Map((yield* d.heads(agents)).map((head) => [head.agent_id, head.position]))
      const outstanding = new Set<string>()
      const latencies: Array<number> = []
      let stop = false
      const poll = Effect.gen(function* () {
        while (!stop) {
          const heads = outstanding.size === 0 ? [] : yield* d.heads([...outstanding])
          const at = now()
          for (const { agent_id, position } of heads) {
            const times = publishedAt.get(agent_id)!
            let i = seen.get(agent_id)!
            for (; i < position - (offset.get(agent_id) ?? 0); i++) latencies.push(at - times[i]!)
            seen.set(agent_id, i)
            if (i === times.length) outstanding.delete(agent_id)
          }
          yield* Effect.sleep("10 millis")
        }
      })
      const close = yield* openWindow(d)
      const poller = yield* Effect.fork(poll)
      const run = yield* publishAtRate(d, rate, settings.latencySeconds, d.source.event, (event, at) => {
        publishedAt.get(event.agent_id)!.push(at)
        outstanding.add(event.agent_id)
      })
      // Let the tail commit (bounded), then stop polling.
      const deadline = now() + 30_000
      while (latencies.length < run.sent && now() < deadline) yield* Effect.sleep("20 millis")
      stop = true
      yield* poller.await
      const committedAt = now()
      const committed = (yield* d.committed) - before
      const measured = yield* close(committed, committedAt)
      const sorted = latencies.sort((a, b) => a - b)
      return {
        rate,
        published: run.sent,
        seconds: run.seconds,
        p50: percentile(sorted, 0.5),
        p90: percentile(sorted, 0.9),
        p99: percentile(sorted, 0.99),
        max: sorted[sorted.length - 1] ?? NaN,
        missing: run.sent - sorted.length,
        shape,
        measurement: measured,
        window: measured.window,
        cpu: measured.cpu,
        checkpoints: measured.checkpoints
      }
    })
  ).pipe(
    Effect.map(({ checkpoints: _, cpu: __, features, measurement, window: ___, ...result }): LatencyResult => ({
      ...result,
      measured: { ...measurement, features }
    }))
  )
