/**
 * Reclassifications (docs/reclassification.md). A reclassification is stored with its
 * `reclassification.create` entry in the agent's governance log in one transaction (with the card
 * amendment it names, if any); the certificate is never touched. The agent is recomputed before
 * (score_before, over the same log prefix as after) and after (score_after, with the agents its trust
 * reaches), so the answer's score impact is the reclassification's alone unless checkpoints were
 * committed in between.
 *
 * Also the routes' reads: the reclassifications and card amendments, the compliance export's rows, and
 * a reputation recomputation on request. Who may read or write the agent is the caller's to check (with
 * `agentExists`: the service-role key may name any id); the actor it names is the one recorded.
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
import * as ReclassificationRepo from "../adapters/store/ReclassificationRepo.js"
import { ReputationRepo } from "../adapters/store/ReputationRepo.js"
import { Store, StoreError } from "../adapters/store/Store.js"
import { transaction } from "../adapters/store/Transaction.js"
import { TrustEdgeRepo } from "../adapters/store/TrustEdgeRepo.js"
import { agentGovernanceLog } from "../core/Governance.js"
import type { ReclassifyRequest } from "../core/schema/Reclassification.js"
import { downstreamOf, TRUST_DECAY, TRUST_MAX_DEPTH } from "../core/TrustPropagation.js"
import { type RecomputationNeeds, recomputeAll, recomputeReputation } from "./ReputationRecompute.js"

const body = { error: Schema.String }

/** No such agent (or one the caller may not name), or no such checkpoint of the agent. */
export class ReclassificationNotFound extends Schema.TaggedError<ReclassificationNotFound>()(
  "ReclassificationNotFound",
  body,
  HttpApiSchema.annotations({ status: 404 })
) {}

/** A checkpoint that cannot be reclassified: a clear verdict, or one not certified yet. */
export class ReclassificationInvalid extends Schema.TaggedError<ReclassificationInvalid>()(
  "ReclassificationInvalid",
  body,
  HttpApiSchema.annotations({ status: 400 })
) {}

/** The checkpoint is already reclassified. */
export class ReclassificationConflict extends Schema.TaggedError<ReclassificationConflict>()(
  "ReclassificationConflict",
  body,
  HttpApiSchema.annotations({ status: 409 })
) {}

const sqlFailure = (operation: string) => (cause: unknown) => Effect.fail(new StoreError({ operation, cause }))

const alreadyReclassified = (checkpointId: string) =>
  new ReclassificationConflict({ error: `checkpoint ${checkpointId} is already reclassified` })

/** The card gaps a stored score excludes (its compliance inputs' `card_gap_checkpoints`). */
const cardGapsApplied = (record: { readonly components: ReadonlyArray<{ key: string; inputs: object }> }) => {
  const inputs = record.components.find((c) => c.key === "compliance")?.inputs as
    { card_gap_checkpoints?: ReadonlyArray<string> } | undefined
  return inputs?.card_gap_checkpoints?.length ?? 0
}

export const make = Effect.gen(function* () {
  const repo = yield* ReclassificationRepo.ReclassificationRepo
  const store = yield* Store
  const governance = yield* GovernanceLog
  const trustEdges = yield* TrustEdgeRepo
  const sql = yield* SqlClient.SqlClient
  const reputation = yield* ReputationRepo
  const recomputation = yield* Effect.context<RecomputationNeeds>()

  /** The service-role key may name any id: the agent must also exist. */
  const agentExists = (agentId: string) =>
    trustEdges.agentExists(agentId).pipe(
      Effect.filterOrFail(
        (exists) => exists,
        () => new ReclassificationNotFound({ error: `agent ${agentId} not found` })
      ),
      Effect.asVoid
    )

  /** Recomputes the agent's reputation on request, and the agents its trust reaches if its base score moved. */
  const recompute = (agentId: string) =>
    Effect.gen(function* () {
      const previous = yield* reputation.stored(agentId)
      const done = yield* recomputeReputation(agentId)
      // A base score that did not move changes no trust adjustment downstream.
      const downstream = done.base_changed ? downstreamOf(agentId, yield* trustEdges.outgoingGraph(agentId)) : []
      yield* recomputeAll(downstream)
      return {
        agent_id: agentId,
        score_before: previous?.record.score ?? null,
        score_after: done.record.score,
        grade_before: previous?.record.grade ?? null,
        grade_after: done.record.grade,
        reclassifications_applied: cardGapsApplied(done.record),
        propagation: { agents_affected: downstream.length, max_depth: TRUST_MAX_DEPTH, decay_factor: TRUST_DECAY }
      }
    }).pipe(Effect.provide(recomputation))

  /** Reclassifies one of the agent's non-clear, certified checkpoints, as `actor`. */
  const reclassify = (agentId: string, payload: ReclassifyRequest, actor: string) =>
    Effect.gen(function* () {
      const checkpoint = yield* repo.checkpoint(agentId, payload.checkpoint_id)
      if (checkpoint === undefined)
        return yield* new ReclassificationNotFound({
          error: `checkpoint ${payload.checkpoint_id} not found for agent ${agentId}`
        })
      if (checkpoint.verdict === "clear")
        return yield* new ReclassificationInvalid({
          error: `checkpoint_id: checkpoint ${payload.checkpoint_id} is clear; only non-clear verdicts are reclassified`
        })
      const certificate = yield* store.getCertificate(payload.checkpoint_id)
      if (certificate === undefined)
        return yield* new ReclassificationInvalid({
          error: `checkpoint_id: checkpoint ${payload.checkpoint_id} is not certified yet`
        })
      if (yield* repo.exists(payload.checkpoint_id)) return yield* alreadyReclassified(payload.checkpoint_id)

      const before = yield* recomputeReputation(agentId)
      const at = new Date(yield* Clock.currentTimeMillis).toISOString()
      const reclassificationId = `rcl-${randomUUID()}`
      const entry = yield* transaction(
        sql,
        Effect.gen(function* () {
          const entry = yield* governance.append(agentGovernanceLog(agentId), {
            action: "reclassification.create",
            actor,
            reason: payload.reason,
            previous_state: { checkpoint_id: checkpoint.checkpoint_id, verdict: checkpoint.verdict },
            new_state: {
              reclassification_id: reclassificationId,
              checkpoint_id: checkpoint.checkpoint_id,
              certificate_id: certificate.certificate_id,
              new_type: payload.new_type,
              ...(payload.card_amendment === undefined ? {} : { card_amendment: payload.card_amendment })
            },
            hashes: { chain_hash: certificate.chain.hash }
          })
          const inserted = yield* repo.insert({
            reclassification_id: reclassificationId,
            agent_id: agentId,
            checkpoint_id: checkpoint.checkpoint_id,
            session_id: checkpoint.session_id,
            original_verdict: checkpoint.verdict,
            new_type: payload.new_type,
            reason: payload.reason,
            approved_by: actor,
            chain_hash: certificate.chain.hash,
            governance_index: entry.index,
            created_at: at
          })
          if (!inserted) return yield* alreadyReclassified(payload.checkpoint_id)
          if (payload.card_amendment !== undefined)
            yield* repo.insertAmendment({
              amendment_id: `cam-${randomUUID()}`,
              agent_id: agentId,
              reclassification_id: reclassificationId,
              field_changed: payload.card_amendment.field_changed,
              old_value: payload.card_amendment.old_value,
              new_value: payload.card_amendment.new_value,
              triggered_by: "reclassification",
              created_by: actor,
              created_at: at
            })
          return entry
        })
      ).pipe(Effect.catchTag("SqlError", sqlFailure("reclassify")))

      const after = yield* recomputeReputation(agentId)
      if (after.base_changed) yield* recomputeAll(downstreamOf(agentId, yield* trustEdges.outgoingGraph(agentId)))
      return {
        reclassification_id: reclassificationId,
        checkpoint_id: checkpoint.checkpoint_id,
        original_verdict: checkpoint.verdict,
        new_type: payload.new_type,
        approved_by: actor,
        score_impact: { score_before: before.record.score, score_after: after.record.score },
        governance_index: entry.index
      }
    }).pipe(Effect.provide(recomputation))

  return {
    agentExists,
    reclassify,
    recompute,
    list: repo.list,
    amendments: repo.amendments,
    exportRows: repo.exportRows
  }
})

export class Reclassifications extends Context.Tag("candor/services/Reclassifications")<
  Reclassifications,
  Effect.Effect.Success<typeof make>
>() {}

export const layer = Layer.effect(Reclassifications, make)
