import { describe, expect, it } from "vitest"
import { concernSeries, verdictSeries } from "../../console/src/agent/Series.js"
import type { Checkpoint, Verdict } from "../../console/src/agent/Types.js"

const checkpoint = (timestamp: string, verdict: Verdict = "clear", categories: Array<string> = []): Checkpoint => ({
  checkpoint_id: `ic-${timestamp}`,
  timestamp,
  verdict,
  concerns: categories.map((category) => ({ category, severity: "low", description: "d" }))
})

const seconds = (iso: string) => Date.parse(iso) / 1000

/** Every point lies inside the axis's bounds. */
const inside = (series: ReturnType<typeof verdictSeries>) =>
  series.x.every((x) => x >= series.range[0] && x <= series.range[1])

describe("the agent page's chart series", () => {
  it("one checkpoint: one point, on an axis of the hour around it (not months away)", () => {
    const series = verdictSeries([checkpoint("2026-11-28T10:15:30Z")])
    expect(series.x).toHaveLength(1)
    expect(inside(series)).toBe(true)
    const [from, to] = series.range
    expect(to - from).toBe(3600)
    expect(from).toBeLessThanOrEqual(seconds("2026-11-28T10:15:30Z"))
    expect(to).toBeGreaterThanOrEqual(seconds("2026-11-28T10:15:30Z"))
    expect(series.lines.find((line) => line.label === "clear")?.values).toEqual([1])
  })

  it("a day of checkpoints: the axis spans that day, every point on it", () => {
    const day = ["00:05", "06:00", "12:30", "23:50"].map((t) => checkpoint(`2026-11-28T${t}:00Z`, "review_needed"))
    const series = verdictSeries(day)
    expect(inside(series)).toBe(true)
    const [from, to] = series.range
    expect(from).toBeLessThanOrEqual(seconds("2026-11-28T00:05:00Z"))
    expect(to).toBeGreaterThanOrEqual(seconds("2026-11-28T23:50:00Z"))
    expect(to - from).toBeLessThan(2 * 86400)
    expect(series.lines.find((line) => line.label === "review_needed")!.values.reduce((a, b) => a + b)).toBe(4)
  })

  it("a year of checkpoints: the axis spans the year, every checkpoint counted once", () => {
    const year = Array.from({ length: 365 }, (_, i) =>
      checkpoint(new Date(Date.parse("2026-01-01T12:00:00Z") + i * 86400_000).toISOString(), "clear", ["deception"])
    )
    const series = concernSeries(year)
    expect(inside(series)).toBe(true)
    expect(series.x.length).toBeLessThanOrEqual(60)
    const [from, to] = series.range
    expect(from).toBeLessThanOrEqual(seconds("2026-01-01T12:00:00Z"))
    expect(to).toBeGreaterThanOrEqual(seconds("2026-12-31T12:00:00Z"))
    expect(to - from).toBeLessThan(400 * 86400)
    expect(series.lines.find((line) => line.label === "deception")!.values.reduce((a, b) => a + b)).toBe(365)
  })

  it("no checkpoints: nothing to draw", () => {
    expect(verdictSeries([]).x).toEqual([])
  })
})
