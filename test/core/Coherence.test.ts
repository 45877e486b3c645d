/**
 * core/Coherence.ts: the pair formula as a table (identical, disjoint specialists, conflicts, the
 * task's values, names compared trimmed and lowercased), a four-agent fleet worked by hand (the
 * outlier, the clusters, each value's divergence), fleets of 0, 1 and 2, and properties over random
 * fleets (scores in [0, 1], symmetric, fleet score between its min and max, order-independent, the
 * reputation's per-agent mean equal to the fleet's to the last bit).
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck, Schema } from "effect"
import {
  agentCoherenceIn,
  agentCoherenceOf,
  bandOf,
  type FleetAgent,
  fleetCoherence,
  meanPairScoreOf,
  pairCoherence,
  prepareFleet,
  pairScore
} from "../../core/Coherence.js"
import { FleetCoherence } from "../../core/schema/Coherence.js"

const agent = (agent_id: string, values: ReadonlyArray<string>, conflicts_with?: ReadonlyArray<string>): FleetAgent =>
  conflicts_with === undefined ? { agent_id, values } : { agent_id, values, conflicts_with }

describe("pair score", () => {
  const rows: ReadonlyArray<{
    readonly name: string
    readonly a: FleetAgent
    readonly b: FleetAgent
    readonly required?: ReadonlyArray<string>
    readonly score: number | null
    readonly compatible?: boolean
    readonly conflicts?: number
  }> = [
    {
      name: "identical cards: 1, compatible",
      a: agent("a", ["honesty", "transparency"]),
      b: agent("b", ["honesty", "transparency"]),
      score: 1,
      compatible: true,
      conflicts: 0
    },
    {
      name: "disjoint specialists: 0 although nothing conflicts",
      a: agent("a", ["privacy", "minimal_data"]),
      b: agent("b", ["fairness", "principal_benefit"]),
      score: 0,
      compatible: false,
      conflicts: 0
    },
    {
      name: "half shared: 2 of 4",
      a: agent("a", ["honesty", "privacy", "transparency"]),
      b: agent("b", ["honesty", "fairness", "transparency"]),
      score: 0.5,
      compatible: false
    },
    {
      name: "exactly 0.70 with no conflict is compatible",
      a: agent("a", ["v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9"]),
      b: agent("b", ["v1", "v2", "v3", "v4", "v5", "v6", "v7", "v10"]),
      score: 0.7,
      compatible: true
    },
    {
      name: "one conflict: all matched, × (1 − 0.5 × 1/2); not compatible though ≥ 0.70",
      a: agent("a", ["honesty", "transparency"]),
      b: agent("b", ["honesty", "transparency"], ["transparency"]),
      score: 0.75,
      compatible: false,
      conflicts: 1
    },
    {
      name: "conflicts both ways count twice, outside the required values too",
      a: agent("a", ["honesty", "speed"], ["caution"]),
      b: agent("b", ["honesty", "caution"], ["speed"]),
      required: ["honesty"],
      score: 0,
      conflicts: 2
    },
    {
      name: "a conflict each way of 4 required: 2/4 × (1 − 0.5 × 2/4)",
      a: agent("a", ["honesty", "privacy", "speed"], ["caution"]),
      b: agent("b", ["honesty", "privacy", "caution"], ["speed"]),
      score: 0.5 * 0.75,
      conflicts: 2
    },
    {
      name: "the penalty: 1/3 × (1 − 0.5 × 2/3)",
      a: agent("a", ["x", "y", "z"]),
      b: agent("b", ["x"], ["y", "z"]),
      score: 2 / 9,
      conflicts: 2
    },
    {
      name: "the penalty is capped at everything (never below 0): 4 conflicts on 1 required value",
      a: agent("a", ["x", "y"], ["x", "y"]),
      b: agent("b", ["x", "y"], ["x", "y"]),
      required: ["x"],
      score: 0,
      conflicts: 4
    },
    {
      name: "the task's values replace the union: 1 of 1",
      a: agent("a", ["honesty", "privacy"]),
      b: agent("b", ["honesty", "fairness"]),
      required: ["honesty"],
      score: 1,
      compatible: true
    },
    {
      name: "the task's values: 1 of 2",
      a: agent("a", ["honesty", "privacy"]),
      b: agent("b", ["honesty", "fairness"]),
      required: ["honesty", "privacy"],
      score: 0.5
    },
    {
      name: "the task's values neither declares: 0",
      a: agent("a", ["honesty"]),
      b: agent("b", ["honesty"]),
      required: ["fairness"],
      score: 0
    },
    {
      name: "names trimmed and lowercased, repeats once",
      a: agent("a", [" Honesty", "TRANSPARENCY ", "honesty"]),
      b: agent("b", ["honesty", "transparency"]),
      score: 1,
      compatible: true
    },
    {
      name: "a conflict named in another case still counts, once",
      a: agent("a", ["honesty", "Transparency"]),
      b: agent("b", ["honesty", "transparency"], ["transparency ", "TRANSPARENCY"]),
      score: 0.75,
      conflicts: 1
    },
    {
      name: "nothing declared and no task values: no score",
      a: agent("a", []),
      b: agent("b", ["  "]),
      score: null
    },
    {
      name: "nothing declared against task values: 0",
      a: agent("a", []),
      b: agent("b", []),
      required: ["honesty"],
      score: 0
    },
    {
      name: "empty task values count as not given",
      a: agent("a", ["honesty", "privacy"]),
      b: agent("b", ["honesty"]),
      required: [" "],
      score: 0.5
    }
  ]

  it.each(rows)("$name", (row) => {
    const options = row.required === undefined ? undefined : { required_values: row.required }
    const pair = pairCoherence(row.a, row.b, options)
    if (row.score === null) {
      expect(pair).toBeNull()
      return
    }
    expect(pair).not.toBeNull()
    expect(pair!.score).toBeCloseTo(row.score, 12)
    expect(pairScore(row.b, row.a, options)).toBe(pair!.score)
    expect(pair!.band).toBe(bandOf(pair!.score))
    if (row.compatible !== undefined) expect(pair!.compatible).toBe(row.compatible)
    if (row.conflicts !== undefined) expect(pair!.conflicting_values).toHaveLength(row.conflicts)
  })

  it("lists what matched, what is missing and who conflicts with whom", () => {
    const pair = pairCoherence(
      agent("a", ["Honesty", "privacy", "speed"]),
      agent("b", ["honesty", "caution"], ["speed"])
    )!
    expect(pair).toStrictEqual({
      agent_a: "a",
      agent_b: "b",
      score: (1 / 4) * (1 - 0.5 / 4),
      band: "poor",
      compatible: false,
      required_values: ["caution", "honesty", "privacy", "speed"],
      matched_values: ["honesty"],
      missing_values: ["caution", "privacy", "speed"],
      conflicting_values: [{ value: "speed", declared_by: "a", conflicts_with_of: "b" }]
    })
  })

  it.each([
    [1, "strong"],
    [0.85, "strong"],
    [0.8499, "good"],
    [0.7, "good"],
    [0.6999, "moderate"],
    [0.5, "moderate"],
    [0.4999, "poor"],
    [0, "poor"]
  ] as const)("band of %d is %s", (score, band) => {
    expect(bandOf(score)).toBe(band)
  })
})

describe("fleet coherence", () => {
  // The fleet of docs/coherence.md ("A worked example"), worked by hand there.
  const fleet: ReadonlyArray<FleetAgent> = [
    agent("gamma", ["honesty", "Transparency"]),
    agent("delta", ["honesty", "principal_benefit"], ["transparency"]),
    agent("alpha", ["honesty", "transparency", "privacy"]),
    agent("beta", ["honesty", "transparency", "privacy", "fairness"])
  ]

  it("scores every pair, sorted by id, with a symmetric matrix", () => {
    const result = fleetCoherence(fleet)
    expect(result.pairwise.agent_ids).toStrictEqual(["alpha", "beta", "delta", "gamma"])
    const by = Object.fromEntries(result.pairwise.pairs.map((p) => [`${p.agent_a}-${p.agent_b}`, p]))
    expect(Object.keys(by)).toStrictEqual([
      "alpha-beta",
      "alpha-delta",
      "alpha-gamma",
      "beta-delta",
      "beta-gamma",
      "delta-gamma"
    ])
    expect(by["alpha-beta"]).toMatchObject({ score: 0.75, band: "good", compatible: true })
    expect(by["alpha-gamma"]!.score).toBeCloseTo(2 / 3, 15)
    expect(by["alpha-delta"]).toMatchObject({ score: 0.21875, band: "poor", compatible: false })
    expect(by["alpha-delta"]!.conflicting_values).toStrictEqual([
      { value: "transparency", declared_by: "alpha", conflicts_with_of: "delta" }
    ])
    expect(by["beta-gamma"]).toMatchObject({ score: 0.5, band: "moderate" })
    expect(by["beta-delta"]!.score).toBeCloseTo(0.18, 15)
    expect(by["delta-gamma"]!.score).toBeCloseTo(5 / 18, 15)
    expect(result.pairwise.scores).toStrictEqual([
      [1, 0.75, 0.21875, by["alpha-gamma"]!.score],
      [0.75, 1, by["beta-delta"]!.score, 0.5],
      [0.21875, by["beta-delta"]!.score, 1, by["delta-gamma"]!.score],
      [by["alpha-gamma"]!.score, 0.5, by["delta-gamma"]!.score, 1]
    ])
    expect(result.fleet_score).toBeCloseTo(18671 / 43200, 12)
    expect(result.min_pair_score).toBeCloseTo(0.18, 15)
    expect(result.max_pair_score).toBe(0.75)
    expect(result.required_values).toBeNull()
  })

  it("finds delta as the one outlier (1σ of the agents' means below the fleet score)", () => {
    const result = fleetCoherence(fleet)
    const means = result.agent_summaries.map((s) => s.mean_pair_score!)
    expect(means[0]).toBeCloseTo(11775 / 21600, 12)
    expect(means[1]).toBeCloseTo(1.43 / 3, 12)
    expect(means[2]).toBeCloseTo(4871 / 21600, 12)
    expect(means[3]).toBeCloseTo(26 / 54, 12)
    expect(result.outliers).toHaveLength(1)
    expect(result.outliers[0]).toMatchObject({ agent_id: "delta", conflicting_values: ["transparency"] })
    expect(result.outliers[0]!.mean_pair_score).toBeCloseTo(0.225509, 6)
    expect(result.outliers[0]!.sigmas_below).toBeCloseTo(1.6893, 4)
    expect(result.agent_summaries).toMatchObject([
      { agent_id: "alpha", peers: 3, compatible_peers: 1 },
      { agent_id: "beta", peers: 3, compatible_peers: 1 },
      { agent_id: "delta", peers: 3, compatible_peers: 0 },
      { agent_id: "gamma", peers: 3, compatible_peers: 0 }
    ])
  })

  it("clusters the compatible pairs, largest first, singletons after", () => {
    expect(fleetCoherence(fleet).clusters).toStrictEqual([
      { agent_ids: ["alpha", "beta"], shared_values: ["honesty", "privacy", "transparency"], mean_pair_score: 0.75 },
      { agent_ids: ["delta"], shared_values: ["honesty", "principal_benefit"], mean_pair_score: null },
      { agent_ids: ["gamma"], shared_values: ["honesty", "transparency"], mean_pair_score: null }
    ])
  })

  it("states each value's divergence as prevalence: missing or in conflict ÷ agents", () => {
    expect(fleetCoherence(fleet).divergence).toStrictEqual([
      {
        value: "fairness",
        agents_declaring: ["beta"],
        agents_missing: ["alpha", "delta", "gamma"],
        agents_in_conflict: [],
        impact_on_fleet_score: 0.75
      },
      {
        value: "principal_benefit",
        agents_declaring: ["delta"],
        agents_missing: ["alpha", "beta", "gamma"],
        agents_in_conflict: [],
        impact_on_fleet_score: 0.75
      },
      {
        value: "privacy",
        agents_declaring: ["alpha", "beta"],
        agents_missing: ["delta", "gamma"],
        agents_in_conflict: [],
        impact_on_fleet_score: 0.5
      },
      {
        value: "transparency",
        agents_declaring: ["alpha", "beta", "gamma"],
        agents_missing: [],
        agents_in_conflict: ["delta"],
        impact_on_fleet_score: 0.25
      },
      {
        value: "honesty",
        agents_declaring: ["alpha", "beta", "delta", "gamma"],
        agents_missing: [],
        agents_in_conflict: [],
        impact_on_fleet_score: 0
      }
    ])
  })

  it("scores against the task's values when given, and lists only those as divergence", () => {
    const result = fleetCoherence(fleet, { required_values: ["Honesty", "privacy"] })
    expect(result.required_values).toStrictEqual(["honesty", "privacy"])
    expect(result.pairwise.pairs.find((p) => p.agent_a === "alpha" && p.agent_b === "beta")!.score).toBe(1)
    expect(result.divergence.map((d) => d.value)).toStrictEqual(["privacy", "honesty"])
  })

  it("no agent: nothing to score; one agent: itself, no peers; two: one pair and no outliers", () => {
    const empty = fleetCoherence([])
    expect(empty).toStrictEqual({
      fleet_score: null,
      min_pair_score: null,
      max_pair_score: null,
      required_values: null,
      pairwise: { agent_ids: [], scores: [], pairs: [] },
      outliers: [],
      clusters: [],
      divergence: [],
      agent_summaries: []
    })
    const one = fleetCoherence([agent("solo", ["honesty"])])
    expect(one).toMatchObject({
      fleet_score: null,
      pairwise: { agent_ids: ["solo"], scores: [[1]], pairs: [] },
      outliers: [],
      clusters: [{ agent_ids: ["solo"], shared_values: ["honesty"], mean_pair_score: null }],
      agent_summaries: [{ agent_id: "solo", mean_pair_score: null, peers: 0, compatible_peers: 0 }]
    })
    expect(meanPairScoreOf("solo", [agent("solo", ["honesty"])])).toBeNull()
    const two = fleetCoherence([agent("b", ["honesty"]), agent("a", ["privacy"])])
    expect(two).toMatchObject({ fleet_score: 0, min_pair_score: 0, max_pair_score: 0, outliers: [] })
  })

  it("leaves out pairs with nothing to compare: their cell is null and no mean counts them", () => {
    const result = fleetCoherence([agent("a", []), agent("b", []), agent("c", ["honesty"])])
    expect(result.pairwise.scores).toStrictEqual([
      [1, null, 0],
      [null, 1, 0],
      [0, 0, 1]
    ])
    expect(result.pairwise.pairs).toHaveLength(2)
    expect(result.agent_summaries.map((s) => s.peers)).toStrictEqual([1, 1, 2])
  })

  it("flags no outlier when every agent is as coherent as the others (σ = 0)", () => {
    const same = ["a", "b", "c", "d"].map((id) => agent(id, ["honesty"]))
    expect(fleetCoherence(same).outliers).toStrictEqual([])
  })

  it("refuses an agent twice (a caller's bug)", () => {
    expect(() => fleetCoherence([agent("a", ["x"]), agent("a", ["y"])])).toThrow(RangeError)
  })

  it("meanPairScoreOf: null for an agent outside the fleet", () => {
    expect(meanPairScoreOf("nobody", fleet)).toBeNull()
    expect(agentCoherenceOf("nobody", fleet)).toBeUndefined()
  })
})

describe("properties", () => {
  const POOL = ["honesty", "Honesty ", "transparency", "privacy", "fairness", "minimal_data", "user_control", "speed"]
  const names = FastCheck.uniqueArray(FastCheck.constantFrom(...POOL), { maxLength: 6 })
  const fleetArb = FastCheck.uniqueArray(
    FastCheck.record({
      agent_id: FastCheck.stringMatching(/^[a-z0-9]{1,6}$/),
      values: names,
      conflicts_with: FastCheck.option(names, { nil: undefined })
    }),
    { selector: (a) => a.agent_id, maxLength: 9 }
  )
  const optionsArb = FastCheck.option(FastCheck.record({ required_values: names }), { nil: undefined })
  const decode = Schema.decodeUnknownSync(FleetCoherence)

  it("scores lie in [0, 1], the matrix is symmetric with 1 on its diagonal, the fleet score between min and max", () => {
    FastCheck.assert(
      FastCheck.property(fleetArb, optionsArb, (agents, options) => {
        const result = fleetCoherence(agents, options)
        decode(result)
        const { scores } = result.pairwise
        scores.forEach((row, i) =>
          row.forEach((score, j) => {
            expect(score).toBe(scores[j]![i])
            if (i === j) expect(score).toBe(1)
            if (score !== null) expect(score >= 0 && score <= 1).toBe(true)
          })
        )
        if (result.fleet_score === null) {
          expect(result.pairwise.pairs).toHaveLength(0)
        } else {
          expect(result.fleet_score).toBeGreaterThanOrEqual(result.min_pair_score! - 1e-12)
          expect(result.fleet_score).toBeLessThanOrEqual(result.max_pair_score! + 1e-12)
        }
        for (const d of result.divergence) {
          expect(d.impact_on_fleet_score >= 0 && d.impact_on_fleet_score <= 1).toBe(true)
        }
      })
    )
  })

  it("a pair scores the same both ways", () => {
    FastCheck.assert(
      FastCheck.property(fleetArb, optionsArb, (agents, options) => {
        for (const a of agents) for (const b of agents) expect(pairScore(a, b, options)).toBe(pairScore(b, a, options))
      })
    )
  })

  it("the order agents are given in changes nothing; meanPairScoreOf is the fleet's per-agent mean exactly", () => {
    FastCheck.assert(
      FastCheck.property(fleetArb, optionsArb, (agents, options) => {
        const result = fleetCoherence(agents, options)
        expect(fleetCoherence([...agents].reverse(), options)).toStrictEqual(result)
        for (const summary of result.agent_summaries) {
          expect(meanPairScoreOf(summary.agent_id, agents, options)).toBe(summary.mean_pair_score)
          expect(agentCoherenceOf(summary.agent_id, agents, options)).toStrictEqual(summary)
        }
        // One prepared fleet serves every standing, each the same as computed alone.
        const prepared = prepareFleet(agents)
        for (const summary of result.agent_summaries)
          expect(agentCoherenceIn(summary.agent_id, prepared, options)).toStrictEqual(summary)
      })
    )
  })

  it("clusters partition the fleet and keep every compatible pair together", () => {
    FastCheck.assert(
      FastCheck.property(fleetArb, (agents) => {
        const result = fleetCoherence(agents)
        const clusterOf = new Map<string, number>()
        result.clusters.forEach((cluster, index) => cluster.agent_ids.forEach((id) => clusterOf.set(id, index)))
        expect([...clusterOf.keys()].sort()).toStrictEqual([...result.pairwise.agent_ids])
        expect(result.clusters.flatMap((c) => c.agent_ids)).toHaveLength(agents.length)
        for (const pair of result.pairwise.pairs) {
          if (pair.compatible) expect(clusterOf.get(pair.agent_a)).toBe(clusterOf.get(pair.agent_b))
        }
      })
    )
  })
})
