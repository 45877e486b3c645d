/**
 * Reclassification routes (docs/reclassification.md).
 *
 * A reclassification is stored with its `reclassification.create` entry in the agent's governance
 * log in one transaction (with the card amendment it names, if any); the certificate is never
 * touched. The agent is recomputed before (score_before, over the same log prefix as after) and after
 * (score_after, with the agents its trust reaches), so the answer's score impact is the
 * reclassification's alone unless checkpoints were committed in between.
 *
 * Writes are Owner/Admin (`writeAgent`), reads any reader of the agent; an agent the caller may not
 * see, or that does not exist, is a 404.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"
import { actorOf, CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { BadRequest, Conflict, NotFound } from "../../../adapters/http/ApiErrors.js"
import { GovernanceLog } from "../../../adapters/store/GovernanceLog.js"
import * as ReclassificationRepo from "../../../adapters/store/ReclassificationRepo.js"
import { ReputationRepo } from "../../../adapters/store/ReputationRepo.js"
import { Store, StoreError } from "../../../adapters/store/Store.js"
import { transaction } from "../../../adapters/store/Transaction.js"
import { TrustEdgeRepo } from "../../../adapters/store/TrustEdgeRepo.js"
import { agentGovernanceLog } from "../../../core/Governance.js"
import {
  COMPLIANCE_EXPORT_MAX_DAYS,
  COMPLIANCE_EXPORT_MAX_ROWS,
  complianceCsv
} from "../../../core/Reclassification.js"
import { downstreamOf, TRUST_DECAY, TRUST_MAX_DEPTH } from "../../../core/TrustPropagation.js"
import { recomputeAll, recomputeReputation } from "../../../services/ReputationRecompute.js"
import { CandorApi } from "../Api.js"
import { internal } from "./Access.js"
import { readAgent, writeAgent } from "./AgentAccess.js"

const DAY_MS = 86_400_000

/** The service-role key may name any id: the agent must also exist. */
const agentExists = (agentId: string) =>
  Effect.flatMap(TrustEdgeRepo, (repo) => repo.agentExists(agentId)).pipe(
    Effect.filterOrFail(
      (exists) => exists,
      () => new NotFound({ error: `agent ${agentId} not found` })
    )
  )

const sqlFailure = (operation: string) => (cause: unknown) => Effect.fail(new StoreError({ operation, cause }))

/** The card gaps a stored score excludes (its compliance inputs' `card_gap_checkpoints`). */
const cardGapsApplied = (record: { readonly components: ReadonlyArray<{ key: string; inputs: object }> }) => {
  const inputs = record.components.find((c) => c.key === "compliance")?.inputs as
    { card_gap_checkpoints?: ReadonlyArray<string> } | undefined
  return inputs?.card_gap_checkpoints?.length ?? 0
}

export const ReclassificationsLive = HttpApiBuilder.group(CandorApi, "reclassifications", (handlers) =>
  handlers
    .handle("reclassify", ({ path, payload }) =>
      Effect.gen(function* () {
        const agentId = path.agent_id
        yield* writeAgent(agentId)
        yield* agentExists(agentId)
        const repo = yield* ReclassificationRepo.make
        const checkpoint = yield* repo.checkpoint(agentId, payload.checkpoint_id)
        if (checkpoint === undefined)
          return yield* new NotFound({ error: `checkpoint ${payload.checkpoint_id} not found for agent ${agentId}` })
        if (checkpoint.verdict === "clear")
          return yield* new BadRequest({
            error: `checkpoint_id: checkpoint ${payload.checkpoint_id} is clear; only non-clear verdicts are reclassified`
          })
        const certificate = yield* (yield* Store).getCertificate(payload.checkpoint_id)
        if (certificate === undefined)
          return yield* new BadRequest({
            error: `checkpoint_id: checkpoint ${payload.checkpoint_id} is not certified yet`
          })
        if (yield* repo.exists(payload.checkpoint_id))
          return yield* new Conflict({ error: `checkpoint ${payload.checkpoint_id} is already reclassified` })

        const before = yield* recomputeReputation(agentId)
        const actor = actorOf(yield* CurrentPrincipal)
        const at = new Date(yield* Clock.currentTimeMillis).toISOString()
        const reclassificationId = `rcl-${randomUUID()}`
        const governance = yield* GovernanceLog
        const entry = yield* transaction(
          yield* SqlClient.SqlClient,
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
            if (!inserted)
              return yield* new Conflict({ error: `checkpoint ${payload.checkpoint_id} is already reclassified` })
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
        if (after.base_changed)
          yield* recomputeAll(downstreamOf(agentId, yield* (yield* TrustEdgeRepo).outgoingGraph(agentId)))
        return {
          reclassification_id: reclassificationId,
          checkpoint_id: checkpoint.checkpoint_id,
          original_verdict: checkpoint.verdict,
          new_type: payload.new_type,
          approved_by: actor,
          score_impact: { score_before: before.record.score, score_after: after.record.score },
          governance_index: entry.index
        }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("listReclassifications", ({ path }) =>
      Effect.gen(function* () {
        yield* readAgent(path.agent_id)
        yield* agentExists(path.agent_id)
        const reclassifications = yield* (yield* ReclassificationRepo.make).list(path.agent_id)
        return { agent_id: path.agent_id, reclassifications }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("listCardAmendments", ({ path }) =>
      Effect.gen(function* () {
        yield* readAgent(path.agent_id)
        yield* agentExists(path.agent_id)
        const amendments = yield* (yield* ReclassificationRepo.make).amendments(path.agent_id)
        return { agent_id: path.agent_id, card_amendments: amendments }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("recomputeReputation", ({ path }) =>
      Effect.gen(function* () {
        const agentId = path.agent_id
        yield* writeAgent(agentId)
        yield* agentExists(agentId)
        const previous = yield* (yield* ReputationRepo).stored(agentId)
        const done = yield* recomputeReputation(agentId)
        // A base score that did not move changes no trust adjustment downstream.
        const downstream = done.base_changed
          ? downstreamOf(agentId, yield* (yield* TrustEdgeRepo).outgoingGraph(agentId))
          : []
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
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("complianceExport", ({ path, urlParams }) =>
      Effect.gen(function* () {
        const agentId = path.agent_id
        yield* readAgent(agentId)
        yield* agentExists(agentId)
        const now = yield* Clock.currentTimeMillis
        const to = urlParams.to ?? new Date(now).toISOString()
        const from = urlParams.from ?? new Date(Date.parse(to) - 30 * DAY_MS).toISOString()
        const span = Date.parse(to) - Date.parse(from)
        if (!(span > 0)) return yield* new BadRequest({ error: "from: must be before to" })
        if (span > COMPLIANCE_EXPORT_MAX_DAYS * DAY_MS)
          return yield* new BadRequest({
            error: `from, to: the window spans at most ${COMPLIANCE_EXPORT_MAX_DAYS} days`
          })
        const items = yield* (yield* ReclassificationRepo.make).exportRows(
          agentId,
          from,
          to,
          COMPLIANCE_EXPORT_MAX_ROWS + 1
        )
        if (items.length > COMPLIANCE_EXPORT_MAX_ROWS)
          return yield* new BadRequest({
            error: `from, to: the window holds more than ${COMPLIANCE_EXPORT_MAX_ROWS} checkpoints; narrow it`
          })
        if (urlParams.format === "csv")
          return HttpServerResponse.text(complianceCsv(items), {
            contentType: "text/csv; charset=utf-8; header=present",
            headers: { "cache-control": "no-store" }
          })
        return {
          agent_id: agentId,
          from: new Date(from).toISOString(),
          to: new Date(to).toISOString(),
          checkpoints: items
        }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
)
