/**
 * How trust between agents reaches the coherence component of a reputation (docs/trust.md). Pure:
 * the workers run it over the edges the store reads around one agent (TrustEdgeRepo's
 * `incomingGraph`), and anyone holding the public edges and base scores gets the same points.
 *
 * For agent Y, the agents trusting Y are walked breadth first over incoming edges: hop 1 trusts Y,
 * hop 2 trusts a hop-1 agent, up to 3 hops and 50 agents, never Y itself (so no path through Y
 * counts). Each truster X is reached at its shortest hop h with the best path weight
 * w = Π(levels on the path) × 0.85^(h−1) among paths of that length, and adds 100 × w × q(X),
 * q(X) = clamp((S0(X) − 600) ÷ 400, 0, 1) from X's base score S0 (its score without trust), 0 when X
 * is not rated. Y's adjustment is min(100, Σ), rounded to 2 decimals.
 *
 * Why it is safe: the edges an agent declares are incoming edges of others, never its own, so they
 * cannot change its own adjustment; base scores exclude trust, so no cycle feeds back; only trusters
 * above 600 count, and the sum is capped (at most 100 coherence points, 10 score points).
 */
import type { TrustContribution, TrustLevel } from "./schema/Trust.js"

/** The weight of each level on a path. Powers of two, so products of levels are exact. */
export const TRUST_LEVELS: Readonly<Record<TrustLevel, number>> = { low: 0.25, medium: 0.5, high: 1.0 }
/** The most coherence points trust can add. */
export const TRUST_CAP = 100
/** Each hop beyond the first keeps this share of the path's weight. */
export const TRUST_DECAY = 0.85
/** Trusters further away than this many hops are not walked. */
export const TRUST_MAX_DEPTH = 3
/** At most this many trusters are walked (and recomputed downstream). */
export const TRUST_MAX_AGENTS = 50
/** Base scores at or below this give nothing: the Developing grade starts there. */
export const TRUST_QUALITY_FLOOR = 600
/** Base scores at or above floor + span give full quality. */
export const TRUST_QUALITY_SPAN = 400

/** What the walk reads of an edge. */
export interface TrustLink {
  readonly source_agent_id: string
  readonly target_agent_id: string
  readonly trust_level: TrustLevel
}

/** A truster's base score (its score with trust adjustment 0) and whether it is rated. */
export interface BaseScore {
  readonly score: number
  readonly eligible: boolean
}

export interface TrustAdjustment {
  /** Coherence points, 0..100, rounded to 2 decimals. */
  readonly adjustment: number
  /** Every truster walked, in walk order (by hop, then agent id), also those adding nothing. */
  readonly contributions: ReadonlyArray<TrustContribution>
}

/** 0.85^(h−1) for h = 1..3, as the products the rule states. */
const DECAY_AT_HOP: ReadonlyArray<number> = [1, TRUST_DECAY, TRUST_DECAY * TRUST_DECAY]

/**
 * Code point order, which is the byte order of UTF-8 and of PostgreSQL's "C" collation: the store's
 * bounded walk (TrustEdgeRepo) keeps the same first 50 agents as this one.
 */
export const byCodePoint = (a: string, b: string): number => {
  const x = a[Symbol.iterator]()
  const y = b[Symbol.iterator]()
  for (;;) {
    const p = x.next()
    const q = y.next()
    if (p.done === true) return q.done === true ? 0 : -1
    if (q.done === true) return 1
    const diff = p.value.codePointAt(0)! - q.value.codePointAt(0)!
    if (diff !== 0) return diff
  }
}

interface Reached {
  readonly agent_id: string
  readonly hops: number
  /** The product of the levels on the best shortest path (exact: powers of two). */
  readonly levels: number
}

/**
 * Breadth first from `start` over the edges in one direction, at most `maxDepth` hops and
 * `TRUST_MAX_AGENTS` agents, never back to `start`. Each hop's new agents are taken in code point
 * order of their ids until the limit; each keeps the best level product among its shortest paths.
 */
const walk = (
  start: string,
  edges: Iterable<TrustLink>,
  direction: "incoming" | "outgoing",
  maxDepth: number
): ReadonlyArray<Reached> => {
  const next = new Map<string, Array<{ readonly agent: string; readonly level: number }>>()
  for (const edge of edges) {
    if (edge.source_agent_id === edge.target_agent_id) continue
    const [from, to] =
      direction === "incoming"
        ? [edge.target_agent_id, edge.source_agent_id]
        : [edge.source_agent_id, edge.target_agent_id]
    const list = next.get(from) ?? []
    list.push({ agent: to, level: TRUST_LEVELS[edge.trust_level] })
    next.set(from, list)
  }
  const reached: Array<Reached> = []
  const seen = new Set<string>([start])
  let frontier: ReadonlyArray<Reached> = [{ agent_id: start, hops: 0, levels: 1 }]
  for (let hop = 1; hop <= maxDepth && frontier.length > 0 && reached.length < TRUST_MAX_AGENTS; hop++) {
    const best = new Map<string, number>()
    for (const node of frontier) {
      for (const { agent, level } of next.get(node.agent_id) ?? []) {
        if (seen.has(agent)) continue
        const levels = node.levels * level
        if (!((best.get(agent) ?? 0) >= levels)) best.set(agent, levels)
      }
    }
    const taken = [...best.keys()]
      .sort(byCodePoint)
      .slice(0, TRUST_MAX_AGENTS - reached.length)
      .map((agent_id): Reached => ({ agent_id, hops: hop, levels: best.get(agent_id)! }))
    for (const node of taken) seen.add(node.agent_id)
    reached.push(...taken)
    frontier = taken
  }
  return reached
}

/** clamp((S0 − 600) ÷ 400, 0, 1); 0 for an unrated truster or one without a score. */
export const trustQuality = (base: BaseScore | undefined): number =>
  base === undefined || !base.eligible
    ? 0
    : Math.min(1, Math.max(0, (base.score - TRUST_QUALITY_FLOOR) / TRUST_QUALITY_SPAN))

/** `x` rounded to `places` decimals. */
const decimals = (x: number, places: number): number => Math.round(x * 10 ** places) / 10 ** places

/**
 * The decimal places the rule's exact values need: levels are multiples of 1/64 at most 6 places deep,
 * 0.85² has 4, quality is a multiple of 1/400 (4 places), points add 2 for the × 100 factor. Rounding
 * to them drops only the binary floating point noise, so published values read as the exact decimals.
 */
const PLACES = { path_weight: 10, quality: 4, points: 12, adjustment: 2 } as const

/**
 * The trust adjustment of `target`: the points of every truster within 3 hops upstream (at most
 * 50), from the edges given (any superset of those within 3 hops works) and each truster's base score.
 */
export const trustAdjustmentOf = (
  target: string,
  edges: Iterable<TrustLink>,
  baseScoreOf: (agentId: string) => BaseScore | undefined
): TrustAdjustment => {
  const contributions = walk(target, edges, "incoming", TRUST_MAX_DEPTH).map((node): TrustContribution => {
    const base = baseScoreOf(node.agent_id)
    const path_weight = decimals(node.levels * DECAY_AT_HOP[node.hops - 1]!, PLACES.path_weight)
    const quality = decimals(trustQuality(base), PLACES.quality)
    return {
      agent_id: node.agent_id,
      hops: node.hops,
      path_weight,
      base_score: base?.score ?? null,
      quality,
      points: decimals(100 * path_weight * quality, PLACES.points)
    }
  })
  const sum = contributions.reduce((total, c) => total + c.points, 0)
  return { adjustment: decimals(Math.min(TRUST_CAP, sum), PLACES.adjustment), contributions }
}

/**
 * The agents whose adjustment may move when `source`'s base score moves: those within `depth` hops
 * downstream (it trusts them, or agents it trusts do), at most 50, nearest first, then by id.
 */
export const downstreamOf = (
  source: string,
  edges: Iterable<TrustLink>,
  depth: number = TRUST_MAX_DEPTH
): ReadonlyArray<string> => walk(source, edges, "outgoing", Math.min(depth, TRUST_MAX_DEPTH)).map((n) => n.agent_id)

/**
 * The agents whose adjustment may move when the edge is created or deleted: its target, and those
 * within 2 hops downstream of the target (where the edge's source sits at hop 2 or 3).
 */
export const affectedByEdge = (edge: TrustLink, edges: Iterable<TrustLink>): ReadonlyArray<string> => [
  edge.target_agent_id,
  ...downstreamOf(edge.target_agent_id, edges, TRUST_MAX_DEPTH - 1).filter((id) => id !== edge.source_agent_id)
]
