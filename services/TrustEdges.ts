/**
 * Trust edges (docs/trust.md). A create or a delete stores the edge and appends its governance
 * entry (`trust_edge.create` / `trust_edge.delete`, on the source agent's log) in one transaction.
 *
 * Once the edge is stored, the agents whose trust adjustment it moves (its target and up to two hops
 * downstream of the target) are recomputed before the answer; if that fails the edge stays (it is
 * the record) and the workers' sweep brings the scores up to date.
 *
 * Who may write the source agent is the caller's to check, as is whether it may read the target
 * (`readable`); the actor it names is the one recorded.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { randomUUID } from "node:crypto"
import { GovernanceLog } from "../adapters/store/GovernanceLog.js"
import { ReputationRepo } from "../adapters/store/ReputationRepo.js"
import { StoreError } from "../adapters/store/Store.js"
import { transaction } from "../adapters/store/Transaction.js"
import { type StoredTrustEdge, TRUST_MAX_OUTGOING, TrustEdgeRepo } from "../adapters/store/TrustEdgeRepo.js"
import { agentGovernanceLog } from "../core/Governance.js"
import { TRUST_EDGE_ID_PREFIX, type TrustEdge, type TrustEdgeDirection, type TrustLevel } from "../core/schema/Trust.js"
import { affectedByEdge } from "../core/TrustPropagation.js"
import { type RecomputationNeeds, recomputeAll } from "./ReputationRecompute.js"

const body = { error: Schema.String }

/** No such agent (or one the caller may not name), or no such edge of the agent. */
export class TrustEdgeNotFound extends Schema.TaggedError<TrustEdgeNotFound>()(
  "TrustEdgeNotFound",
  body,
  HttpApiSchema.annotations({ status: 404 })
) {}

/** An edge the trust rules refuse (an agent trusting itself). */
export class TrustEdgeInvalid extends Schema.TaggedError<TrustEdgeInvalid>()(
  "TrustEdgeInvalid",
  body,
  HttpApiSchema.annotations({ status: 400 })
) {}

/** The edge contradicts what is stored: the pair has one already, the source has as many as it may. */
export class TrustEdgeConflict extends Schema.TaggedError<TrustEdgeConflict>()(
  "TrustEdgeConflict",
  body,
  HttpApiSchema.annotations({ status: 409 })
) {}

const agentNotFound = (agentId: string) => new TrustEdgeNotFound({ error: `agent ${agentId} not found` })

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

export interface NewTrustEdge {
  readonly target_agent_id: string
  readonly trust_level: TrustLevel
  readonly reason: string
}

export const make = Effect.gen(function* () {
  const repo = yield* TrustEdgeRepo
  const reputation = yield* ReputationRepo
  const governance = yield* GovernanceLog
  const sql = yield* SqlClient.SqlClient
  const recomputation = yield* Effect.context<RecomputationNeeds>()

  /** The service-role key may act on any id: the agent must also exist. */
  const agentExists = (agentId: string) =>
    repo.agentExists(agentId).pipe(
      Effect.filterOrFail(
        (exists) => exists,
        () => agentNotFound(agentId)
      )
    )

  /**
   * An agent the caller may name as a target: one that exists and that it can read, or whose
   * reputation is not private (anyone can read a public or unlisted score by id); else 404.
   */
  const visibleTarget = <E, R>(agentId: string, readable: Effect.Effect<boolean, E, R>) =>
    Effect.gen(function* () {
      if (!(yield* readable)) {
        const visibility = yield* reputation.visibility(agentId)
        if (visibility === undefined || visibility === "private") return yield* agentNotFound(agentId)
      }
      yield* agentExists(agentId)
    })

  /** Recomputes the scores the edge moves; a failure is logged (the sweep catches up), never the caller's. */
  const rescore = (edge: StoredTrustEdge) =>
    Effect.gen(function* () {
      const downstream = yield* repo.outgoingGraph(edge.target_agent_id)
      yield* recomputeAll(affectedByEdge(edge, downstream)).pipe(Effect.provide(recomputation))
    }).pipe(
      Effect.catchAll((error) =>
        Effect.logWarning("trust edge stored; recomputing the scores it moves failed").pipe(
          Effect.annotateLogs({ edge: edge.id, error: error._tag })
        )
      )
    )

  /** Declares `source`'s trust in the target; `readable`: whether the caller may read the target. */
  const create = <E, R>(
    source: string,
    input: NewTrustEdge,
    actor: string,
    readable: (agentId: string) => Effect.Effect<boolean, E, R>
  ) =>
    Effect.gen(function* () {
      if (input.target_agent_id === source) {
        return yield* new TrustEdgeInvalid({ error: "target_agent_id: an agent cannot trust itself" })
      }
      yield* agentExists(source)
      yield* visibleTarget(input.target_agent_id, readable(input.target_agent_id))
      const at = new Date(yield* Clock.currentTimeMillis).toISOString()
      const edge = yield* transaction(
        sql,
        Effect.gen(function* () {
          const result = yield* repo.create({
            id: `${TRUST_EDGE_ID_PREFIX}${randomUUID()}`,
            source_agent_id: source,
            target_agent_id: input.target_agent_id,
            trust_level: input.trust_level,
            reason: input.reason,
            created_by: actor,
            created_at: at
          })
          if (result._tag === "Exists") {
            return yield* new TrustEdgeConflict({
              error: `agent ${source} already trusts ${input.target_agent_id} (edge ${result.edge.id}, level ${result.edge.trust_level}); to change the level, delete that edge and create a new one`
            })
          }
          if (result._tag === "Full") {
            return yield* new TrustEdgeConflict({
              error: `an agent declares at most ${TRUST_MAX_OUTGOING} active trust edges; delete one first`
            })
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
    })

  /**
   * The agent's edges. Incoming edges are listed with their source's id even when the caller may not
   * read that agent: an edge is its source's public statement about the target (what a third party
   * needs to recompute the target's score), and it reveals nothing of the source but its id.
   */
  const list = (
    agentId: string,
    direction: keyof typeof DIRECTIONS,
    page: { readonly limit: number; readonly offset: number }
  ) =>
    Effect.gen(function* () {
      yield* agentExists(agentId)
      const rows = yield* repo.list(agentId, DIRECTIONS[direction], page)
      return { trust_edges: rows.map((row) => ({ ...published(row), direction: row.direction })) }
    })

  /** Withdraws one of the source's edges. */
  const remove = (source: string, edgeId: string, actor: string) =>
    Effect.gen(function* () {
      const removed = yield* transaction(
        sql,
        Effect.gen(function* () {
          const removed = yield* repo.remove(source, edgeId, actor)
          if (removed === undefined) {
            return yield* new TrustEdgeNotFound({ error: `trust edge ${edgeId} of agent ${source} not found` })
          }
          yield* governance.append(agentGovernanceLog(source), {
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
      return { deleted: true as const, id: edgeId }
    })

  return { create, list, remove }
})

export class TrustEdges extends Context.Tag("candor/services/TrustEdges")<
  TrustEdges,
  Effect.Effect.Success<typeof make>
>() {}

export const layer = Layer.effect(TrustEdges, make)
