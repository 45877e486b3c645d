/**
 * Checkpoints turned into the charts' series: counts per time bucket, by verdict and by concern
 * category. Pure, so it is easy to read and to test; the chart module only draws what this returns.
 */
import type { Checkpoint, Verdict } from "./Types.js"

export const VERDICTS: ReadonlyArray<Verdict> = ["clear", "review_needed", "boundary_violation"]

export interface Series {
  /** Bucket starts, seconds since the epoch (uPlot's x axis), oldest first. */
  readonly x: ReadonlyArray<number>
  readonly lines: ReadonlyArray<{ readonly label: string; readonly values: ReadonlyArray<number> }>
  /**
   * The x axis's bounds, seconds: from the first bucket's start to the last one's end, at least an
   * hour wide.
   * Given, not left to the chart: uPlot's own range for a single point (min = max) ran from months
   * to years after it, so that the one checkpoint of a new agent fell off the chart.
   */
  readonly range: readonly [number, number]
}

/** The narrowest x axis drawn: one point alone shows the hour around it. */
const MIN_RANGE_SECONDS = 3600

/** A bucket size that gives at most about 40 points over the checkpoints' time span. */
const bucketSeconds = (span: number): number => {
  for (const size of [60, 300, 900, 3600, 6 * 3600, 86400, 7 * 86400]) if (span / size <= 40) return size
  return 30 * 86400
}

const bucketsOf = (checkpoints: ReadonlyArray<Checkpoint>) => {
  const times = checkpoints.map((checkpoint) => Math.floor(Date.parse(checkpoint.timestamp) / 1000))
  const min = Math.min(...times)
  const size = bucketSeconds(Math.max(...times) - min)
  const start = Math.floor(min / size) * size
  const count = Math.floor((Math.max(...times) - start) / size) + 1
  const x = Array.from({ length: count }, (_, i) => start + i * size)
  return { x, indexOf: (i: number) => Math.floor((times[i]! - start) / size), range: rangeOf(x, size) }
}

const rangeOf = (x: ReadonlyArray<number>, size: number): readonly [number, number] => {
  const from = x[0]!
  const to = x[x.length - 1]! + size
  const widen = Math.max(0, MIN_RANGE_SECONDS - (to - from)) / 2
  return [from - widen, to + widen]
}

const seriesOf = (
  checkpoints: ReadonlyArray<Checkpoint>,
  keysOf: (checkpoint: Checkpoint) => ReadonlyArray<string>,
  order: ReadonlyArray<string>
): Series => {
  if (checkpoints.length === 0) return { x: [], lines: [], range: [0, 0] }
  const { indexOf, range, x } = bucketsOf(checkpoints)
  const lines = new Map<string, Array<number>>(order.map((key) => [key, x.map(() => 0)]))
  checkpoints.forEach((checkpoint, i) => {
    for (const key of keysOf(checkpoint)) {
      let values = lines.get(key)
      if (values === undefined) lines.set(key, (values = x.map(() => 0)))
      values[indexOf(i)]! += 1
    }
  })
  return { x, lines: [...lines].map(([label, values]) => ({ label, values })), range }
}

export const verdictSeries = (checkpoints: ReadonlyArray<Checkpoint>): Series =>
  seriesOf(checkpoints, (checkpoint) => [checkpoint.verdict], VERDICTS)

/** Each concern counts once per checkpoint and category. */
export const concernSeries = (checkpoints: ReadonlyArray<Checkpoint>): Series =>
  seriesOf(checkpoints, (checkpoint) => [...new Set(checkpoint.concerns.map((concern) => concern.category))], [])
