/**
 * The soak: `settings.soakAgents` distinct agents (in the realistic shape, claimed and spread over the
 * organizations), each committed before the first sample (the run measures a steady state, not the
 * actors being created), then a fixed rate for
 * `settings.soakSeconds`, sampling the worker's memory every `settings.soakSampleSeconds` with the
 * backlog (published, not yet committed) that says whether the worker kept up, and once more when
 * the last event is committed. Each Candor process's RSS (the worker's, and in the realistic shape
 * the API's, with its live heap) is read from /proc at every sample: issue 25 asks that none grows by 5% or more from
 * the end of a 2-minute warm-up (`WARM_SECONDS`) to the end of the run.
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { deploy } from "./Deployment.js"
import { awaitCommitted, now, publishAtRate, warmUp } from "./Load.js"
import type { Shape } from "./Shape.js"
import { settings } from "./Settings.js"
import { procRssBytes } from "./ProcessCpu.js"

/** The part of a soak that settles (pools, windows filling up, JIT): RSS growth is counted from its end. */
export const WARM_SECONDS = 120

/** The Candor processes whose RSS each sample reads (the bench's own and the servers' are not Candor's). */
const CANDOR_PROCESSES = ["worker", "api"] as const

export interface Sample {
  readonly second: number
  readonly rssMb: number
  readonly heapMb: number
  /** Heap used after a full collection. */
  readonly liveMb: number
  readonly published: number
  readonly backlog: number
  /** RSS of each Candor process (`CANDOR_PROCESSES` that the deployment runs as processes), MB. */
  readonly processRssMb: Readonly<Record<string, number>>
  /** The API's memory, MB, when the deployment runs an API process: its live heap and V8's whole heap. */
  readonly api: { readonly liveMb: number; readonly heapTotalMb: number; readonly externalMb: number } | undefined
}

/**
 * Each process's RSS growth from the first sample at or after `WARM_SECONDS` to the last (all
 * committed), percent; undefined when the run was shorter than the warm-up.
 */
export const rssGrowth = (
  samples: ReadonlyArray<Sample>
):
  | ReadonlyArray<{
      readonly process: string
      readonly warmMb: number
      readonly lastMb: number
      readonly percent: number
    }>
  | undefined => {
  const warm = samples.find((s) => s.second >= WARM_SECONDS)
  const last = samples[samples.length - 1]
  if (warm === undefined || last === undefined || warm === last) return undefined
  return Object.keys(warm.processRssMb).map((process) => {
    const warmMb = warm.processRssMb[process]!
    const lastMb = last.processRssMb[process] ?? 0
    return { process, warmMb, lastMb, percent: (100 * (lastMb - warmMb)) / warmMb }
  })
}

const mb = (bytes: number) => bytes / 2 ** 20

/** Least-squares slope of `y` over `x`. */
export const slope = (points: ReadonlyArray<readonly [number, number]>) => {
  const n = points.length
  if (n < 2) return NaN
  const mx = points.reduce((s, [x]) => s + x, 0) / n
  const my = points.reduce((s, [, y]) => s + y, 0) / n
  const sxy = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0)
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0)
  return sxy / sxx
}

export const soak = (rate: number, shape: Shape) =>
  Effect.scoped(
    Effect.gen(function* () {
      const d = yield* deploy({
        backend: "postgres",
        worker: settings.pgWorker,
        partitions: settings.partitions,
        shape,
        agents: { label: "soak", count: settings.soakAgents }
      })
      const before = yield* warmUp(d, true)
      const samples: Array<Sample> = []
      let published = 0
      const start = now()
      const pids: Array<readonly [string, number]> = []
      for (const name of CANDOR_PROCESSES) {
        const found = d.processes[name]
        if (found !== undefined) for (const pid of yield* Effect.orDie(found)) pids.push([name, pid])
      }
      const sample = Effect.gen(function* () {
        const memory = yield* d.memory
        const api = d.apiMemory === undefined ? undefined : yield* d.apiMemory
        const committed = (yield* d.committed) - before
        samples.push({
          second: (now() - start) / 1000,
          rssMb: mb(memory.rss),
          heapMb: mb(memory.heapUsed),
          liveMb: mb(memory.heapLive),
          published,
          backlog: published - committed,
          processRssMb: Object.fromEntries(pids.map(([name, pid]) => [name, mb(procRssBytes(pid))])),
          api:
            api === undefined
              ? undefined
              : { liveMb: mb(api.heapLive), heapTotalMb: mb(api.heapTotal), externalMb: mb(api.external) }
        })
      })
      yield* sample
      const sampler = yield* Effect.fork(
        Effect.forever(Effect.zipRight(Effect.sleep(`${settings.soakSampleSeconds} seconds`), sample))
      )
      yield* publishAtRate(d, rate, settings.soakSeconds, d.source.event, () => void published++)
      yield* Fiber.interrupt(sampler)
      // The last sample once everything published is committed: what the worker keeps, not what is in flight.
      yield* awaitCommitted(d, before + published)
      yield* sample
      return samples
    })
  )
