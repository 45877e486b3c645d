import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import { computeReputation } from "../../core/Reputation.js"
import {
  affectedByEdge,
  type BaseScore,
  byCodePoint,
  downstreamOf,
  TRUST_CAP,
  TRUST_DECAY,
  TRUST_LEVELS,
  TRUST_MAX_AGENTS,
  TRUST_MAX_DEPTH,
  trustAdjustmentOf,
  type TrustLink,
  trustQuality
} from "../../core/TrustPropagation.js"
import type { TrustLevel } from "../../core/schema/Trust.js"

const edge = (source: string, target: string, level: TrustLevel): TrustLink => ({
  source_agent_id: source,
  target_agent_id: target,
  trust_level: level
})

const scores =
  (table: Readonly<Record<string, BaseScore>>) =>
  (agentId: string): BaseScore | undefined =>
    table[agentId]

const rated = (score: number): BaseScore => ({ score, eligible: true })

/** The worked example of docs/trust.md, edge for edge. */
const EXAMPLE_EDGES = [
  edge("alpha", "yara", "medium"),
  edge("bravo", "yara", "low"),
  edge("charlie", "alpha", "high"),
  edge("charlie", "bravo", "medium"),
  edge("delta", "charlie", "high"),
  edge("echo", "charlie", "low"),
  edge("golf", "delta", "high"),
  edge("yara", "alpha", "high")
]
const EXAMPLE_SCORES = scores({
  alpha: rated(840),
  bravo: rated(1000),
  charlie: rated(760),
  delta: { score: 950, eligible: false },
  echo: rated(580),
  golf: rated(1000),
  yara: rated(700)
})

describe("trustAdjustmentOf", () => {
  it("computes the worked example of docs/trust.md", () => {
    const result = trustAdjustmentOf("yara", EXAMPLE_EDGES, EXAMPLE_SCORES)
    expect(result.contributions.map((c) => [c.agent_id, c.hops, c.path_weight, c.base_score, c.quality])).toEqual([
      ["alpha", 1, 0.5, 840, 0.6],
      ["bravo", 1, 0.25, 1000, 1],
      ["charlie", 2, 0.425, 760, 0.4],
      ["delta", 3, 0.36125, 950, 0],
      ["echo", 3, 0.0903125, 580, 0]
    ])
    expect(result.contributions.map((c) => c.points)).toEqual([30, 25, 17, 0, 0])
    expect(result.adjustment).toBe(72)
    // golf is 4 hops away; yara's own edge to alpha is not a path to yara.
    expect(result.contributions.map((c) => c.agent_id)).not.toContain("golf")
    expect(result.contributions.map((c) => c.agent_id)).not.toContain("yara")
    // The coherence component of docs/trust.md: mean pair score 0.8 → 800 + 72.
    const tally = {
      certified: 100,
      analysed: 100,
      analysed_clear: 100,
      long_sessions: 0,
      stable_sessions: 0,
      violation_sessions: []
    }
    const rep = computeReputation(tally, { mean_pair_score: 0.8, peers: 3, trust_adjustment: 72 }, new Date())
    expect(rep.components.find((c) => c.key === "coherence_compatibility")?.score).toBe(872)
    const base = computeReputation(tally, { mean_pair_score: 0.8, peers: 3, trust_adjustment: 0 }, new Date())
    expect([base.score, rep.score]).toEqual([980, 987])
  })

  it("for alpha in the same graph, yara's declaration counts and alpha's own edge does not", () => {
    const result = trustAdjustmentOf("alpha", EXAMPLE_EDGES, EXAMPLE_SCORES)
    expect(result.contributions.map((c) => [c.agent_id, c.hops])).toEqual([
      ["charlie", 1],
      ["yara", 1],
      ["bravo", 2],
      ["delta", 2],
      ["echo", 2],
      ["golf", 3]
    ])
    // charlie 1 × 0.4 = 40, yara 1 × 0.25 = 25, bravo (→ yara → alpha) 0.25 × 0.85 × 1 = 21.25,
    // golf 1 × 0.85² × 1 = 72.25: capped.
    expect(result.contributions.map((c) => c.points)).toEqual([40, 25, 21.25, 0, 0, 72.25])
    expect(result.adjustment).toBe(TRUST_CAP)
  })

  it("exports the rule's constants", () => {
    expect(TRUST_LEVELS).toEqual({ low: 0.25, medium: 0.5, high: 1 })
    expect([TRUST_CAP, TRUST_DECAY, TRUST_MAX_DEPTH, TRUST_MAX_AGENTS]).toEqual([100, 0.85, 3, 50])
  })

  it("walks 3 hops, decaying 0.85 per hop after the first", () => {
    const chain = [edge("a1", "y", "low"), edge("a2", "a1", "low"), edge("a3", "a2", "low"), edge("a4", "a3", "low")]
    const result = trustAdjustmentOf("y", chain, () => rated(1000))
    expect(result.contributions.map((c) => [c.agent_id, c.hops, c.path_weight])).toEqual([
      ["a1", 1, 0.25],
      ["a2", 2, 0.053125],
      ["a3", 3, 0.0112890625]
    ])
    // 25 + 5.3125 + 1.12890625
    expect(result.adjustment).toBe(31.44)
  })

  it("takes the shortest hop, and the best weight among paths of that length", () => {
    const edges = [
      edge("x", "y", "low"),
      edge("m", "y", "high"),
      edge("x", "m", "high"),
      edge("n", "y", "medium"),
      edge("z", "m", "low"),
      edge("z", "n", "high")
    ]
    const result = trustAdjustmentOf("y", edges, () => rated(1000))
    const by = Object.fromEntries(result.contributions.map((c) => [c.agent_id, c]))
    // x: the direct low edge (hop 1) wins over the stronger 2-hop path.
    expect([by.x?.hops, by.x?.path_weight]).toEqual([1, 0.25])
    // z: two 2-hop paths, z→m→y 0.25 and z→n→y 0.5: the best one.
    expect([by.z?.hops, by.z?.path_weight]).toEqual([2, 0.425])
  })

  it("visits at most 50 agents, nearest first, then by agent id (code point order)", () => {
    const direct = Array.from({ length: 60 }, (_, i) => edge(`t${String(i).padStart(2, "0")}`, "y", "low"))
    const result = trustAdjustmentOf("y", [...direct, edge("far", "t00", "high")].reverse(), () => rated(700))
    expect(result.contributions).toHaveLength(50)
    expect(result.contributions.map((c) => c.agent_id)).toEqual(direct.slice(0, 50).map((e) => e.source_agent_id))

    // 30 at hop 1, 60 candidates at hop 2: the first 20 of them by id fill the walk; nothing at hop 3.
    const hop1 = Array.from({ length: 30 }, (_, i) => `h1-${String(i).padStart(2, "0")}`)
    const edges = hop1.flatMap((id, i) => [
      edge(id, "y", "low"),
      edge(`h2-${String(2 * i).padStart(2, "0")}`, id, "low"),
      edge(`h2-${String(2 * i + 1).padStart(2, "0")}`, id, "low"),
      edge(`h3-${i}`, `h2-${String(2 * i).padStart(2, "0")}`, "low")
    ])
    const mixed = trustAdjustmentOf("y", edges, () => rated(1000))
    expect(mixed.contributions).toHaveLength(50)
    expect(mixed.contributions.filter((c) => c.hops === 2).map((c) => c.agent_id)).toEqual(
      Array.from({ length: 20 }, (_, i) => `h2-${String(i).padStart(2, "0")}`)
    )
    expect(mixed.contributions.some((c) => c.hops === 3)).toBe(false)
    expect(["B", "a", "é", "😀", "\uffff"].sort(byCodePoint)).toEqual(["B", "a", "é", "\uffff", "😀"])
  })

  it("terminates on cycles and counts each truster once", () => {
    const edges = [
      edge("a", "y", "high"),
      edge("b", "a", "high"),
      edge("a", "b", "high"),
      edge("c", "b", "high"),
      edge("b", "c", "medium"),
      edge("y", "c", "high"),
      edge("y", "y", "high"),
      edge("a", "y", "low")
    ]
    const result = trustAdjustmentOf("y", edges, () => rated(640))
    expect(result.contributions.map((c) => [c.agent_id, c.hops, c.path_weight])).toEqual([
      ["a", 1, 1],
      ["b", 2, 0.85],
      ["c", 3, 0.7225]
    ])
    // the target is never one of its own trusters, even through its own edges
    for (const target of ["a", "b", "c", "y"]) {
      const walked = trustAdjustmentOf(target, edges, () => rated(640)).contributions.map((c) => c.agent_id)
      expect(walked).not.toContain(target)
      expect(new Set(walked).size).toBe(walked.length)
    }
  })

  it("gives quality 0 to unrated trusters, to trusters at or below 600 and to unknown ones", () => {
    expect(trustQuality(undefined)).toBe(0)
    expect(trustQuality({ score: 1000, eligible: false })).toBe(0)
    expect(trustQuality(rated(600))).toBe(0)
    expect(trustQuality(rated(400))).toBe(0)
    expect(trustQuality(rated(601))).toBe(0.0025)
    expect(trustQuality(rated(1000))).toBe(1)
    const edges = [edge("nr", "y", "high"), edge("low", "y", "high"), edge("ghost", "y", "high")]
    const result = trustAdjustmentOf("y", edges, scores({ nr: { score: 990, eligible: false }, low: rated(600) }))
    expect(result.adjustment).toBe(0)
    expect(result.contributions.map((c) => [c.agent_id, c.base_score, c.points])).toEqual([
      ["ghost", null, 0],
      ["low", 600, 0],
      ["nr", 990, 0]
    ])
  })

  it("caps the adjustment at 100 and rounds it to 2 decimals", () => {
    const many = ["p", "q", "r"].map((id) => edge(id, "y", "high"))
    expect(trustAdjustmentOf("y", many, () => rated(1000)).adjustment).toBe(100)
    // 100 × 0.25 × (613 − 600) / 400 = 0.8125
    expect(trustAdjustmentOf("y", [edge("p", "y", "low")], () => rated(613)).adjustment).toBe(0.81)
    expect(trustAdjustmentOf("y", [], () => rated(1000))).toEqual({ adjustment: 0, contributions: [] })
  })

  it("propagates a falling base score, never below 0", () => {
    const edges = [edge("a", "y", "medium"), edge("b", "a", "medium")]
    const table: Record<string, BaseScore> = { a: rated(900), b: rated(1000) }
    // a: 100 × 0.5 × 0.75; b: 100 × 0.25 × 0.85 × 1
    expect(trustAdjustmentOf("y", edges, scores(table)).adjustment).toBe(58.75)
    // a falls to 700 (quality 0.25): its points fall from 37.5 to 12.5
    expect(trustAdjustmentOf("y", edges, scores({ ...table, a: rated(700) })).adjustment).toBe(33.75)
    // b, two hops away, falls to 650 (quality 0.125): 21.25 → 2.65625
    expect(trustAdjustmentOf("y", edges, scores({ a: rated(700), b: rated(650) })).adjustment).toBe(15.16)
    expect(trustAdjustmentOf("y", edges, scores({ a: rated(0), b: { score: 0, eligible: false } })).adjustment).toBe(0)
  })
})

describe("trust properties (random graphs)", () => {
  const AGENTS = ["a", "b", "c", "d", "e", "f", "g", "h"] as const
  const agent = FastCheck.constantFrom(...AGENTS)
  const level = FastCheck.constantFrom<TrustLevel>("low", "medium", "high")
  const graph = FastCheck.array(
    FastCheck.tuple(agent, agent, level).map(([s, t, l]) => edge(s, t, l)),
    { maxLength: 40 }
  )
  const base = FastCheck.option(
    FastCheck.record({ score: FastCheck.integer({ min: 0, max: 1000 }), eligible: FastCheck.boolean() }),
    { nil: undefined }
  )
  const table = FastCheck.tuple(...AGENTS.map(() => base)).map(
    (bases) => (id: string) => bases[AGENTS.indexOf(id as (typeof AGENTS)[number])]
  )

  it("an edge an agent declares never changes its own adjustment (adding X→Z)", () => {
    FastCheck.assert(
      FastCheck.property(graph, table, agent, agent, level, (edges, baseOf, x, z, l) => {
        const before = trustAdjustmentOf(x, edges, baseOf)
        const after = trustAdjustmentOf(x, [...edges, edge(x, z, l)], baseOf)
        expect(after).toEqual(before)
      }),
      { numRuns: 500 }
    )
  })

  it("the adjustment is within 0..100, and lowering any base score never raises anyone's", () => {
    FastCheck.assert(
      FastCheck.property(
        graph,
        table,
        agent,
        agent,
        FastCheck.integer({ min: 0, max: 1000 }),
        (edges, baseOf, y, lowered, drop) => {
          const before = trustAdjustmentOf(y, edges, baseOf)
          expect(before.adjustment).toBeGreaterThanOrEqual(0)
          expect(before.adjustment).toBeLessThanOrEqual(100)
          const old = baseOf(lowered)
          const lower = (id: string) =>
            id === lowered && old !== undefined ? { ...old, score: Math.max(0, old.score - drop) } : baseOf(id)
          const after = trustAdjustmentOf(y, edges, lower)
          expect(after.adjustment).toBeLessThanOrEqual(before.adjustment)
          expect(after.adjustment).toBeGreaterThanOrEqual(0)
        }
      ),
      { numRuns: 500 }
    )
  })

  it("a base score change reaches every agent whose walk holds the changed agent (downstreamOf)", () => {
    FastCheck.assert(
      FastCheck.property(graph, agent, (edges, changed) => {
        const downstream = new Set(downstreamOf(changed, edges))
        for (const y of AGENTS) {
          const walked = trustAdjustmentOf(y, edges, () => undefined).contributions.map((c) => c.agent_id)
          expect(downstream.has(y)).toBe(walked.includes(changed))
        }
      }),
      { numRuns: 500 }
    )
  })

  it("an edge change moves only the adjustments affectedByEdge names", () => {
    FastCheck.assert(
      FastCheck.property(graph, table, agent, agent, level, (edges, baseOf, s, t, l) => {
        if (s === t) return
        const added = edge(s, t, l)
        const affected = new Set(affectedByEdge(added, edges))
        for (const y of AGENTS) {
          if (affected.has(y)) continue
          expect(trustAdjustmentOf(y, [...edges, added], baseOf)).toEqual(trustAdjustmentOf(y, edges, baseOf))
        }
      }),
      { numRuns: 500 }
    )
  })
})

describe("downstreamOf", () => {
  it("lists the agents within 3 hops the source trusts, nearest first, then by id, never the source", () => {
    const edges = [
      edge("s", "b", "low"),
      edge("s", "a", "high"),
      edge("a", "c", "low"),
      edge("c", "d", "low"),
      edge("d", "e", "low"),
      edge("c", "s", "low"),
      edge("x", "s", "high")
    ]
    expect(downstreamOf("s", edges)).toEqual(["a", "b", "c", "d"])
    expect(downstreamOf("s", edges, 1)).toEqual(["a", "b"])
    expect(downstreamOf("e", edges)).toEqual([])
  })

  it("stops at 50 agents", () => {
    const edges = Array.from({ length: 70 }, (_, i) => edge("s", `t${String(i).padStart(2, "0")}`, "low"))
    const listed = downstreamOf("s", [...edges, edge("t00", "deeper", "high")])
    expect(listed).toHaveLength(50)
    expect(listed[49]).toBe("t49")
    expect(listed).not.toContain("deeper")
  })

  it("affectedByEdge: the target and 2 hops below it, not the edge's own source", () => {
    const edges = [edge("t", "u", "high"), edge("u", "v", "high"), edge("v", "w", "high"), edge("u", "s", "high")]
    expect(affectedByEdge(edge("s", "t", "high"), edges)).toEqual(["t", "u", "v"])
  })
})
