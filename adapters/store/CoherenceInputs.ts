/**
 * The coherence component's inputs of one agent (core/Reputation.ts `CoherenceInputs`), the one
 * place the reputation recomputation (services/ReputationRecompute.ts) asks for them:
 * - the mean pair score of its active card with the active cards of the other agents of its
 *   organization (core/Coherence.ts, as GET /v1/orgs/{org_id}/coherence computes it); null for a
 *   personal or unclaimed agent, an agent without a card, or one without carded peers (750 then);
 * - the trust adjustment from the trust it receives (core/TrustPropagation.ts), each truster
 *   weighted by its stored base score.
 * It runs inside the recomputation's transaction, on its connection, so whatever it reads is read there.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import { agentCoherenceIn, type PreparedFleet, prepareFleet } from "../../core/Coherence.js"
import type { CoherenceAgentSummary } from "../../core/schema/Coherence.js"
import type { CoherenceInputs } from "../../core/Reputation.js"
import { trustAdjustmentOf } from "../../core/TrustPropagation.js"
import * as CoherenceRepo from "./CoherenceRepo.js"
import { type RecomputationReads, ReputationRepo } from "./ReputationRepo.js"
import type { StoreError } from "./Store.js"
import * as TrustEdgeRepo from "./TrustEdgeRepo.js"

/**
 * Fleets read for recent recomputations, by organization: every agent of an organization recomputed
 * after a commit would otherwise read all of its cards again, and score its card against every
 * other (O(fleet) per recomputation, O(fleet²) for the organization). An entry, and the standings
 * computed from it, are used only while the organization's fleet version (CoherenceRepo, one
 * primary-key read) is unchanged, so a card change is seen by the next recomputation in any process.
 * Bounded: 256 organizations, the oldest entry going first, and per entry the standings of its own
 * agents.
 */
interface Fleet {
  readonly version: string
  /** Normalised once per version: every standing in the fleet reads it. */
  readonly agents: PreparedFleet
  readonly standings: Map<string, CoherenceAgentSummary | undefined>
}
const FLEET_CACHE_SIZE = 256
/** Per repository, that is per database: versions are only unique within one. */
const fleetsOf = new WeakMap<CoherenceRepo.CoherenceRepo["Type"], Map<string, Fleet>>()

/** `version`: the organization's fleet version, read by the caller (undefined: no such organization). */
const fleetOf = (repo: CoherenceRepo.CoherenceRepo["Type"], orgId: string, version: string | undefined) =>
  Effect.gen(function* () {
    if (version === undefined) return undefined
    let fleets = fleetsOf.get(repo)
    if (fleets === undefined) fleetsOf.set(repo, (fleets = new Map()))
    const cached = fleets.get(orgId)
    if (cached !== undefined && cached.version === version) return cached
    const { agents } = yield* repo.fleet(orgId)
    fleets.delete(orgId)
    if (fleets.size >= FLEET_CACHE_SIZE) fleets.delete(fleets.keys().next().value!)
    const fleet: Fleet = { version, agents: prepareFleet(agents), standings: new Map() }
    fleets.set(orgId, fleet)
    return fleet
  })

/** The agent's standing in its fleet, computed once per version. */
const standingIn = (fleet: Fleet, agentId: string): CoherenceAgentSummary | undefined => {
  if (fleet.standings.has(agentId)) return fleet.standings.get(agentId)
  const standing = agentCoherenceIn(agentId, fleet.agents)
  // Only the fleet's own agents have a standing (undefined: not in the fleet), so the map stays
  // within the fleet's size.
  if (standing !== undefined) fleet.standings.set(agentId, standing)
  return standing
}

/**
 * What the caller read of the agent (ReputationRepo `recomputationReads`): the organization it is
 * claimed into (null: personal or unclaimed) and that organization's fleet version, and whether any
 * active trust edge points at it (false: no walk, no trust).
 */
export const coherenceInputsOf = (
  agentId: string,
  { fleetVersion, mayHaveTrusters, orgId }: Pick<RecomputationReads, "orgId" | "fleetVersion" | "mayHaveTrusters">
): Effect.Effect<
  CoherenceInputs,
  StoreError,
  SqlClient.SqlClient | ReputationRepo | CoherenceRepo.CoherenceRepo | TrustEdgeRepo.TrustEdgeRepo
> =>
  Effect.gen(function* () {
    const reputation = yield* ReputationRepo
    const fleet = orgId === null ? undefined : yield* fleetOf(yield* CoherenceRepo.CoherenceRepo, orgId, fleetVersion)
    const standing = fleet === undefined ? undefined : standingIn(fleet, agentId)

    const edges = mayHaveTrusters ? yield* (yield* TrustEdgeRepo.TrustEdgeRepo).incomingGraph(agentId) : []
    const bases = yield* reputation.baseScores([...new Set(edges.map((edge) => edge.source_agent_id))])
    const trust = trustAdjustmentOf(agentId, edges, (id) => bases.get(id))
    return {
      mean_pair_score: standing?.mean_pair_score ?? null,
      peers: standing?.peers ?? 0,
      trust_adjustment: trust.adjustment,
      // Listed when there are any, so an agent nobody trusts publishes the inputs a verifier passes.
      trusters: trust.contributions.length === 0 ? undefined : trust.contributions
    }
  })
