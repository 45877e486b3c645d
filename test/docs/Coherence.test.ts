/**
 * The worked example of docs/coherence.md, as a reader would check it: its agents (the first json
 * block of "A worked example") through `fleetCoherence`, against its pairs table and its figures
 * (the section's last json block), to the 4 places the doc rounds to.
 */
import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type FleetAgent, fleetCoherence } from "../../core/Coherence.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))

const section = (): string => {
  const doc = readFileSync(join(ROOT, "docs/coherence.md"), "utf8")
  const start = doc.indexOf("## A worked example")
  if (start < 0) throw new Error('docs/coherence.md has no "## A worked example"')
  return doc.slice(start, doc.indexOf("\n## ", start + 1))
}

const jsonBlocks = (text: string): ReadonlyArray<unknown> =>
  [...text.matchAll(/```json\n([\s\S]*?)```/g)].map((match) => JSON.parse(match[1]!))

const round4 = (x: number | null | undefined): number | null =>
  x === null || x === undefined ? null : Math.round(x * 10_000) / 10_000

interface Figures {
  readonly fleet_score: number
  readonly min_pair_score: number
  readonly max_pair_score: number
  readonly mean_pair_scores: Record<string, number>
  readonly outliers: ReadonlyArray<{ readonly agent_id: string; readonly sigmas_below: number }>
  readonly clusters: ReadonlyArray<ReadonlyArray<string>>
  readonly divergence: Record<string, number>
}

describe("docs/coherence.md, A worked example", () => {
  const text = section()
  const blocks = jsonBlocks(text)
  const agents = blocks[0] as ReadonlyArray<FleetAgent>
  const figures = blocks[blocks.length - 1] as Figures
  const result = fleetCoherence(agents)

  it("has its agents and its figures", () => {
    expect(blocks).toHaveLength(2)
    expect(agents).toHaveLength(4)
  })

  it("its pairs table is what fleetCoherence computes", () => {
    const rows = text
      .split("\n")
      .filter((line) => /^\| [a-z]+–[a-z]+ \|/.test(line))
      .map((line) => line.split("|").map((cell) => cell.trim()))
    expect(rows).toHaveLength(result.pairwise.pairs.length)
    for (const [, pair, required, matched, conflicts, score, band, compatible] of rows) {
      const [a, b] = pair!.split("–")
      const computed = result.pairwise.pairs.find((p) => p.agent_a === a && p.agent_b === b)
      expect(computed, pair).toBeDefined()
      expect(computed!.required_values.length, pair).toBe(Number(required))
      expect(computed!.matched_values.length, pair).toBe(Number(matched))
      expect(computed!.conflicting_values.length, pair).toBe(Number(conflicts))
      expect(round4(computed!.score), pair).toBe(Number(score!.split("= ").pop()))
      expect(computed!.band, pair).toBe(band)
      expect(computed!.compatible ? "yes" : "no", pair).toBe(compatible)
    }
  })

  it("its figures are what fleetCoherence computes", () => {
    expect(round4(result.fleet_score)).toBe(figures.fleet_score)
    expect(result.fleet_score).toBeCloseTo(18671 / 43200, 15)
    expect(round4(result.min_pair_score)).toBe(figures.min_pair_score)
    expect(round4(result.max_pair_score)).toBe(figures.max_pair_score)
    expect(
      Object.fromEntries(result.agent_summaries.map((s) => [s.agent_id, round4(s.mean_pair_score)]))
    ).toStrictEqual(figures.mean_pair_scores)
    expect(result.outliers.map((o) => ({ agent_id: o.agent_id, sigmas_below: round4(o.sigmas_below) }))).toStrictEqual(
      figures.outliers
    )
    expect(result.clusters.map((c) => c.agent_ids)).toStrictEqual(figures.clusters)
    expect(result.divergence.map((d) => [d.value, d.impact_on_fleet_score])).toStrictEqual(
      Object.entries(figures.divergence)
    )
  })
})
