/**
 * Trust edges (docs/trust.md). A create or a delete stores the edge and appends its governance
 * entry (`trust_edge.create` / `trust_edge.delete`, on the source agent's log) in one transaction.
 *
 * Incoming edges are listed with their source's id even when the caller may not read that agent:
 * an edge is its source's public statement about the target (what a third party needs to recompute
 * the target's score), and it reveals nothing of the source but its id.
 *
 * Once the edge is stored, the agents whose trust adjustment it moves (its target and up to two hops
 * downstream of the target) are recomputed before the answer; if that fails the edge stays (it is
 * the record) and the workers' sweep brings the scores up to date.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"
import { AccessControl } from "../../../adapters/auth/AccessControl.js"
import { actorOf, CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { BadRequest, Conflict, NotFound } from "../../../adapters/http/ApiErrors.js"
import { GovernanceLog } from "../../../adapters/store/GovernanceLog.js"
import { StoreError } from "../../../adapters/store/Store.js"
import { transaction } from "../../../adapters/store/Transaction.js"
import { type StoredTrustEdge, TRUST_MAX_OUTGOING, TrustEdgeRepo } from "../../../adapters/store/TrustEdgeRepo.js"
import { agentGovernanceLog } from "../../../core/Governance.js"
import { affectedByEdge } from "../../../core/TrustPropagation.js"
import { ReputationRepo } from "../../../adapters/store/ReputationRepo.js"
import { recomputeAll } from "../../../services/ReputationRecompute.js"
import { TRUST_EDGE_ID_PREFIX, type TrustEdge, type TrustEdgeDirection } from "../../../core/schema/Trust.js"
import { CandorApi } from "../Api.js"
import { internal } from "./Access.js"
import { readAgent, writeAgent } from "./AgentAccess.js"

const agentNotFound = (agentId: string) => new NotFound({ error: `agent ${agentId} not found` })

/** The service-role key may act on any id: the agent must also exist. */
const agentExists = (agentId: string) =>
  Effect.flatMap(TrustEdgeRepo, (repo) => repo.agentExists(agentId)).pipe(
    Effect.filterOrFail(
      (exists) => exists,
      () => agentNotFound(agentId)
    )
  )

/**
 * An agent the caller may name as a target: one that exists and that it can read, or whose
 * reputation is not private (anyone can read a public or unlisted score by id); else 404.
 */
const visibleTarget = (agentId: string) =>
  Effect.gen(function* () {
    const principal = yield* CurrentPrincipal
    const readable = yield* (yield* AccessControl).agent(principal, agentId, "read").pipe(
      Effect.as(true),
      Effect.catchTag("NotFound", () => Effect.succeed(false))
    )
    if (!readable) {
      const visibility = yield* (yield* ReputationRepo).visibility(agentId)
      if (visibility === undefined || visibility === "private") return yield* agentNotFound(agentId)
    }
    yield* agentExists(agentId)
  })

/** Recomputes the scores the edge moves; a failure is logged (the sweep catches up), never the caller's. */
const rescore = (edge: StoredTrustEdge) =>
  Effect.gen(function* () {
    const downstream = yield* (yield* TrustEdgeRepo).outgoingGraph(edge.target_agent_id)
    yield* recomputeAll(affectedByEdge(edge, downstream))
  }).pipe(
    Effect.catchAll((error) =>
      Effect.logWarning("trust edge stored; recomputing the scores it moves failed").pipe(
        Effect.annotateLogs({ edge: edge.id, error: error._tag })
      )
    )
  )

const published = (edge: StoredTrustEdge): TrustEdge => ({
  id: edge.id,
  source_agent_id: edge.source_agent_id,
  target_agent_id: edge.target_agent_id,
  trust_level: edge.trust_level,
  reason: edge.reason,
  created_at: edge.created_at
})

/** What the governance record keeps of an edge: the reason is the record's own `reason`. */
const governanceState = (edge: StoredTrustEdge) => ({
  id: edge.id,
  target_agent_id: edge.target_agent_id,
  trust_level: edge.trust_level
})

const sqlFailure = (operation: string) => (cause: unknown) => Effect.fail(new StoreError({ operation, cause }))

const DIRECTIONS: Record<"outgoing" | "incoming" | "both", ReadonlyArray<TrustEdgeDirection>> = {
  outgoing: ["outgoing"],
  incoming: ["incoming"],
  both: ["outgoing", "incoming"]
}

export const TrustEdgesLive = HttpApiBuilder.group(CandorApi, "trustEdges", (handlers) =>
  handlers
    .handle("createTrustEdge", ({ path, payload }) =>
      Effect.gen(function* () {
        const source = path.agent_id
        yield* writeAgent(source)
        if (payload.target_agent_id === source) {
          return yield* Effect.fail(new BadRequest({ error: "target_agent_id: an agent cannot trust itself" }))
        }
        yield* agentExists(source)
        yield* visibleTarget(payload.target_agent_id)
        const actor = actorOf(yield* CurrentPrincipal)
        const at = new Date(yield* Clock.currentTimeMillis).toISOString()
        const repo = yield* TrustEdgeRepo
        const governance = yield* GovernanceLog
        const edge = yield* transaction(
          yield* SqlClient.SqlClient,
          Effect.gen(function* () {
            const result = yield* repo.create({
              id: `${TRUST_EDGE_ID_PREFIX}${randomUUID()}`,
              source_agent_id: source,
              target_agent_id: payload.target_agent_id,
              trust_level: payload.trust_level,
              reason: payload.reason,
              created_by: actor,
              created_at: at
            })
            if (result._tag === "Exists") {
              return yield* Effect.fail(
                new Conflict({
                  error: `agent ${source} already trusts ${payload.target_agent_id} (edge ${result.edge.id}, level ${result.edge.trust_level}); to change the level, delete that edge and create a new one`
                })
              )
            }
            if (result._tag === "Full") {
              return yield* Effect.fail(
                new Conflict({
                  error: `an agent declares at most ${TRUST_MAX_OUTGOING} active trust edges; delete one first`
                })
              )
            }
            yield* governance.append(agentGovernanceLog(source), {
              action: "trust_edge.create",
              actor,
              reason: result.edge.reason,
              previous_state: null,
              new_state: governanceState(result.edge)
            })
            return result.edge
          })
        ).pipe(Effect.catchTag("SqlError", sqlFailure("create trust edge")))
        yield* rescore(edge)
        return published(edge)
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("listTrustEdges", ({ path, urlParams }) =>
      Effect.gen(function* () {
        yield* readAgent(path.agent_id)
        yield* agentExists(path.agent_id)
        const rows = yield* (yield* TrustEdgeRepo).list(path.agent_id, DIRECTIONS[urlParams.direction], {
          limit: urlParams.limit,
          offset: urlParams.offset
        })
        return { trust_edges: rows.map((row) => ({ ...published(row), direction: row.direction })) }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("deleteTrustEdge", ({ path }) =>
      Effect.gen(function* () {
        yield* writeAgent(path.agent_id)
        const actor = actorOf(yield* CurrentPrincipal)
        const repo = yield* TrustEdgeRepo
        const governance = yield* GovernanceLog
        const removed = yield* transaction(
          yield* SqlClient.SqlClient,
          Effect.gen(function* () {
            const removed = yield* repo.remove(path.agent_id, path.edge_id, actor)
            if (removed === undefined) {
              return yield* Effect.fail(
                new NotFound({ error: `trust edge ${path.edge_id} of agent ${path.agent_id} not found` })
              )
            }
            yield* governance.append(agentGovernanceLog(path.agent_id), {
              action: "trust_edge.delete",
              actor,
              reason: null,
              previous_state: governanceState(removed),
              new_state: null
            })
            return removed
          })
        ).pipe(Effect.catchTag("SqlError", sqlFailure("delete trust edge")))
        yield* rescore(removed)
        return { deleted: true as const, id: path.edge_id }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
)
