/**
 * Value coherence between Alignment Cards (AAP's baseline pair formula) and across a fleet: the
 * organization's coherence route and reputation's coherence component both compute from here, and
 * a third party holding the same cards gets the same numbers (docs/coherence.md).
 *
 * Pair score: `required` is the task's values when given, else the union of both cards' declared
 * values; `matched` the required values both cards declare; `conflicts` the values one card
 * declares that the other lists in `conflicts_with`, each (value, direction) once:
 *
 *   score = matched ÷ |required| × (1 − min(1, 0.5 × conflicts ÷ |required|))
 *
 * Decisions of ours (documented in docs/coherence.md):
 * - value names are compared trimmed and lowercased ("Honesty " is "honesty"); empty names are dropped;
 * - a pair with nothing to compare (no task values and neither card declares a value) has no score
 *   (null): it is left out of every mean rather than counted as 0 or 1;
 * - task values that normalise to nothing count as not given;
 * - conflicts count whether or not the conflicting value is required: a declared clash is a clash.
 */
import type {
  CoherenceAgentSummary,
  CoherenceBand,
  CoherenceCluster,
  CoherenceOutlier,
  FleetCoherence,
  PairCoherence,
  ValueConflict,
  ValueDivergence
} from "./schema/Coherence.js"

/** What coherence reads of an agent's card: `values.declared` and `values.conflicts_with`. */
export interface FleetAgent {
  readonly agent_id: string
  readonly values: ReadonlyArray<string>
  readonly conflicts_with?: ReadonlyArray<string> | null | undefined
}

export interface CoherenceOptions {
  /** The task's values: every pair is scored against these instead of its own union. */
  readonly required_values?: ReadonlyArray<string> | null | undefined
}

/** A compatible pair has no conflict and at least this score. */
export const COMPATIBLE_THRESHOLD = 0.7
/** Each conflict takes this share of |required| off the score (capped at everything). */
export const CONFLICT_PENALTY = 0.5
/** Outliers need at least this many agents (with two, each is the other's only peer). */
export const OUTLIER_MIN_AGENTS = 3

const BAND_FLOORS: ReadonlyArray<readonly [number, CoherenceBand]> = [
  [0.85, "strong"],
  [0.7, "good"],
  [0.5, "moderate"]
]

export const bandOf = (score: number): CoherenceBand => {
  for (const [floor, band] of BAND_FLOORS) if (score >= floor) return band
  return "poor"
}

/** Code-unit order: the same in every JavaScript engine and locale. */
const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

export const normalizeValue = (name: string): string => name.trim().toLowerCase()

/** Normalised, without empties or duplicates, sorted. */
export const valueSet = (names: ReadonlyArray<string> | null | undefined): ReadonlyArray<string> =>
  [...new Set((names ?? []).map(normalizeValue).filter((name) => name !== ""))].sort(compare)

interface Normalized {
  readonly agent_id: string
  readonly declared: ReadonlyArray<string>
  readonly declaredSet: ReadonlySet<string>
  readonly conflicts: ReadonlySet<string>
}

const normalize = (agent: FleetAgent): Normalized => {
  const declared = valueSet(agent.values)
  return {
    agent_id: agent.agent_id,
    declared,
    declaredSet: new Set(declared),
    conflicts: new Set(valueSet(agent.conflicts_with))
  }
}

const requiredOf = (options: CoherenceOptions | undefined): ReadonlyArray<string> | null => {
  const required = valueSet(options?.required_values)
  return required.length === 0 ? null : required
}

/** The values `from` declares that `against` lists in its conflicts_with, as conflicts. */
const conflictsOf = (from: Normalized, against: Normalized): Array<ValueConflict> =>
  from.declared
    .filter((value) => against.conflicts.has(value))
    .map((value) => ({ value, declared_by: from.agent_id, conflicts_with_of: against.agent_id }))

const scorePair = (a: Normalized, b: Normalized, taskValues: ReadonlyArray<string> | null): PairCoherence | null => {
  const required = taskValues ?? valueSet([...a.declared, ...b.declared])
  if (required.length === 0) return null
  const matched = required.filter((value) => a.declaredSet.has(value) && b.declaredSet.has(value))
  const missing = required.filter((value) => !(a.declaredSet.has(value) && b.declaredSet.has(value)))
  const conflicts = [...conflictsOf(a, b), ...conflictsOf(b, a)].sort(
    (x, y) => compare(x.value, y.value) || compare(x.declared_by, y.declared_by)
  )
  const n = required.length
  const score = (matched.length / n) * (1 - Math.min(1, (CONFLICT_PENALTY * conflicts.length) / n))
  return {
    agent_a: a.agent_id,
    agent_b: b.agent_id,
    score,
    band: bandOf(score),
    compatible: conflicts.length === 0 && score >= COMPATIBLE_THRESHOLD,
    required_values: required,
    matched_values: matched,
    missing_values: missing,
    conflicting_values: conflicts
  }
}

/** The pair of two cards' values, or null when there is nothing to compare (see the module comment). */
export const pairCoherence = (a: FleetAgent, b: FleetAgent, options?: CoherenceOptions): PairCoherence | null =>
  scorePair(normalize(a), normalize(b), requiredOf(options))

/** The pair score alone. */
export const pairScore = (a: FleetAgent, b: FleetAgent, options?: CoherenceOptions): number | null =>
  pairCoherence(a, b, options)?.score ?? null

/** Normalised and sorted by id; a repeated id is a caller's bug. */
const fleetOf = (agents: ReadonlyArray<FleetAgent>): ReadonlyArray<Normalized> => {
  const sorted = agents.map(normalize).sort((x, y) => compare(x.agent_id, y.agent_id))
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i]!.agent_id === sorted[i - 1]!.agent_id) {
      throw new RangeError(`fleet coherence: agent ${sorted[i]!.agent_id} appears twice`)
    }
  }
  return sorted
}

const mean = (xs: ReadonlyArray<number>): number | null =>
  xs.length === 0 ? null : xs.reduce((sum, x) => sum + x, 0) / xs.length

/** Connected components of `n` nodes over `edges`, each sorted, as index lists. */
const components = (n: number, edges: ReadonlyArray<readonly [number, number]>): Array<Array<number>> => {
  const parent = Array.from({ length: n }, (_, i) => i)
  const find = (i: number): number => {
    while (parent[i] !== i) {
      parent[i] = parent[parent[i]!]!
      i = parent[i]!
    }
    return i
  }
  for (const [i, j] of edges) {
    const [ri, rj] = [find(i), find(j)]
    if (ri !== rj) parent[Math.max(ri, rj)] = Math.min(ri, rj)
  }
  const groups = new Map<number, Array<number>>()
  for (let i = 0; i < n; i++) {
    const root = find(i)
    const group = groups.get(root)
    if (group === undefined) groups.set(root, [i])
    else group.push(i)
  }
  return [...groups.values()]
}

/**
 * The fleet's coherence: every pair (C(n,2)), their mean, outliers, clusters of compatible agents,
 * the divergence of each value and each agent's mean. Deterministic: agents are taken in id order
 * whatever order they are given in, and every list has a stated order.
 */
export const fleetCoherence = (agents: ReadonlyArray<FleetAgent>, options?: CoherenceOptions): FleetCoherence => {
  const fleet = fleetOf(agents)
  const taskValues = requiredOf(options)
  const n = fleet.length
  const scores: Array<Array<number | null>> = fleet.map((_, i) => fleet.map((_, j) => (i === j ? 1 : null)))
  const pairs: Array<PairCoherence> = []
  const perAgent: Array<Array<number>> = fleet.map(() => [])
  const compatiblePeers: Array<number> = fleet.map(() => 0)
  const conflictValues: Array<Set<string>> = fleet.map(() => new Set())
  const compatibleEdges: Array<readonly [number, number]> = []
  // Pair (i, j) lands in i's and j's lists in the other's id order: meanPairScoreOf sums in that order too.
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const pair = scorePair(fleet[i]!, fleet[j]!, taskValues)
      if (pair === null) continue
      pairs.push(pair)
      scores[i]![j] = pair.score
      scores[j]![i] = pair.score
      perAgent[i]!.push(pair.score)
      perAgent[j]!.push(pair.score)
      if (pair.compatible) {
        compatiblePeers[i]!++
        compatiblePeers[j]!++
        compatibleEdges.push([i, j])
      }
      for (const conflict of pair.conflicting_values) {
        conflictValues[i]!.add(conflict.value)
        conflictValues[j]!.add(conflict.value)
      }
    }
  }
  // perAgent[j] received its pairs with i < j first (in i order), then those with k > j (in k order): id order.
  const pairScores = pairs.map((pair) => pair.score)
  const fleetScore = mean(pairScores)

  const agentSummaries: Array<CoherenceAgentSummary> = fleet.map((agent, i) => ({
    agent_id: agent.agent_id,
    mean_pair_score: mean(perAgent[i]!),
    peers: perAgent[i]!.length,
    compatible_peers: compatiblePeers[i]!
  }))

  return {
    fleet_score: fleetScore,
    min_pair_score: pairScores.length === 0 ? null : pairScores.reduce((a, b) => Math.min(a, b)),
    max_pair_score: pairScores.length === 0 ? null : pairScores.reduce((a, b) => Math.max(a, b)),
    required_values: taskValues,
    pairwise: { agent_ids: fleet.map((agent) => agent.agent_id), scores, pairs },
    outliers: outliersOf(agentSummaries, fleetScore, conflictValues),
    clusters: clustersOf(fleet, scores, compatibleEdges),
    divergence: divergenceOf(fleet, taskValues),
    agent_summaries: agentSummaries
  }
}

/** Agents whose mean pair score is at least one (population) σ of the agents' means below the fleet score. */
const outliersOf = (
  summaries: ReadonlyArray<CoherenceAgentSummary>,
  fleetScore: number | null,
  conflictValues: ReadonlyArray<ReadonlySet<string>>
): Array<CoherenceOutlier> => {
  if (summaries.length < OUTLIER_MIN_AGENTS || fleetScore === null) return []
  const means = summaries.flatMap((s) => (s.mean_pair_score === null ? [] : [s.mean_pair_score]))
  const center = mean(means)!
  const sigma = Math.sqrt(mean(means.map((m) => (m - center) ** 2))!)
  // σ = 0: every agent is as coherent as the others, so none stands out (and "≥ 0σ below" would flag half).
  if (!(sigma > 0)) return []
  return summaries
    .flatMap((summary, i) =>
      summary.mean_pair_score !== null && fleetScore - summary.mean_pair_score >= sigma
        ? [
            {
              agent_id: summary.agent_id,
              mean_pair_score: summary.mean_pair_score,
              sigmas_below: (fleetScore - summary.mean_pair_score) / sigma,
              conflicting_values: [...conflictValues[i]!].sort(compare)
            }
          ]
        : []
    )
    .sort((x, y) => y.sigmas_below - x.sigmas_below || compare(x.agent_id, y.agent_id))
}

const clustersOf = (
  fleet: ReadonlyArray<Normalized>,
  scores: ReadonlyArray<ReadonlyArray<number | null>>,
  edges: ReadonlyArray<readonly [number, number]>
): Array<CoherenceCluster> =>
  components(fleet.length, edges)
    .sort((x, y) => y.length - x.length || x[0]! - y[0]!)
    .map((members) => {
      const inside: Array<number> = []
      for (let a = 0; a < members.length; a++) {
        for (let b = a + 1; b < members.length; b++) {
          const score = scores[members[a]!]![members[b]!]
          if (score !== null && score !== undefined) inside.push(score)
        }
      }
      const [first, ...rest] = members.map((i) => fleet[i]!)
      return {
        agent_ids: members.map((i) => fleet[i]!.agent_id),
        shared_values: first!.declared.filter((value) => rest.every((agent) => agent.declaredSet.has(value))),
        mean_pair_score: members.length < 2 ? null : mean(inside)
      }
    })

const divergenceOf = (
  fleet: ReadonlyArray<Normalized>,
  taskValues: ReadonlyArray<string> | null
): Array<ValueDivergence> => {
  const values = taskValues ?? valueSet(fleet.flatMap((agent) => agent.declared))
  return values
    .map((value) => {
      const declaring = fleet.filter((agent) => agent.declaredSet.has(value))
      const inConflict = fleet.filter((agent) => agent.conflicts.has(value))
      const missing = fleet.filter((agent) => !agent.declaredSet.has(value) && !agent.conflicts.has(value))
      return {
        value,
        agents_declaring: declaring.map((agent) => agent.agent_id),
        agents_missing: missing.map((agent) => agent.agent_id),
        agents_in_conflict: inConflict.map((agent) => agent.agent_id),
        impact_on_fleet_score: fleet.length === 0 ? 0 : (missing.length + inConflict.length) / fleet.length
      }
    })
    .sort((x, y) => y.impact_on_fleet_score - x.impact_on_fleet_score || compare(x.value, y.value))
}

/**
 * A fleet normalised once (values trimmed, lowercased, deduplicated, sorted; agents in id order),
 * for the standings of many of its agents: reputation computes each agent's standing in the same
 * fleet, and normalising the whole fleet for each of them doubled the work (O(n) each, O(n²) a fleet).
 */
export interface PreparedFleet {
  readonly agents: ReadonlyArray<Normalized>
  readonly byId: ReadonlyMap<string, Normalized>
}

/** Throws RangeError when an agent appears twice, as `fleetCoherence` does. */
export const prepareFleet = (agents: ReadonlyArray<FleetAgent>): PreparedFleet => {
  const normalized = fleetOf(agents)
  return { agents: normalized, byId: new Map(normalized.map((agent) => [agent.agent_id, agent])) }
}

/**
 * One agent's standing in its fleet without computing the other pairs (O(n), for reputation's
 * coherence component): its summary as `fleetCoherence` would give it, to the last bit; undefined
 * when the agent is not in the fleet (it has no active card).
 */
export const agentCoherenceIn = (
  agentId: string,
  fleet: PreparedFleet,
  options?: CoherenceOptions
): CoherenceAgentSummary | undefined => {
  const self = fleet.byId.get(agentId)
  if (self === undefined) return undefined
  const taskValues = requiredOf(options)
  const pairs = fleet.agents.flatMap((peer) => {
    if (peer === self) return []
    const pair = peer.agent_id < agentId ? scorePair(peer, self, taskValues) : scorePair(self, peer, taskValues)
    return pair === null ? [] : [pair]
  })
  return {
    agent_id: agentId,
    mean_pair_score: mean(pairs.map((pair) => pair.score)),
    peers: pairs.length,
    compatible_peers: pairs.filter((pair) => pair.compatible).length
  }
}

/** `agentCoherenceIn` of a fleet not prepared yet. */
export const agentCoherenceOf = (
  agentId: string,
  agents: ReadonlyArray<FleetAgent>,
  options?: CoherenceOptions
): CoherenceAgentSummary | undefined => agentCoherenceIn(agentId, prepareFleet(agents), options)

/**
 * The mean of the agent's pair scores with every other agent of the fleet (reputation's
 * coherence_compatibility input): null when it has no scored peer or is not in the fleet.
 */
export const meanPairScoreOf = (
  agentId: string,
  agents: ReadonlyArray<FleetAgent>,
  options?: CoherenceOptions
): number | null => agentCoherenceOf(agentId, agents, options)?.mean_pair_score ?? null
