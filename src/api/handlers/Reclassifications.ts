/**
 * Reclassification routes (docs/reclassification.md). A reclassification is written by the
 * Reclassifications service (services/Reclassifications.ts): its governance entry, the record and
 * the card amendment in one transaction, with the scores before and after.
 *
 * Writes are Owner/Admin (`writeAgent`), reads any reader of the agent; an agent the caller may not
 * see, or that does not exist, is a 404.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { actorOf, CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { BadRequest, NotFound } from "../../../adapters/http/ApiErrors.js"
import * as ReclassificationRepo from "../../../adapters/store/ReclassificationRepo.js"
import { ReputationRepo } from "../../../adapters/store/ReputationRepo.js"
import { TrustEdgeRepo } from "../../../adapters/store/TrustEdgeRepo.js"
import {
  COMPLIANCE_EXPORT_MAX_DAYS,
  COMPLIANCE_EXPORT_MAX_ROWS,
  complianceCsv
} from "../../../core/Reclassification.js"
import { downstreamOf, TRUST_DECAY, TRUST_MAX_DEPTH } from "../../../core/TrustPropagation.js"
import { Reclassifications } from "../../../services/Reclassifications.js"
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

/** The card gaps a stored score excludes (its compliance inputs' `card_gap_checkpoints`). */
const cardGapsApplied = (record: { readonly components: ReadonlyArray<{ key: string; inputs: object }> }) => {
  const inputs = record.components.find((c) => c.key === "compliance")?.inputs as
    { card_gap_checkpoints?: ReadonlyArray<string> } | undefined
  return inputs?.card_gap_checkpoints?.length ?? 0
}

export const ReclassificationsLive = HttpApiBuilder.group(CandorApi, "reclassifications", (handlers) =>
  Effect.map(Reclassifications, (reclassifications) =>
    handlers
      .handle("reclassify", ({ path, payload }) =>
        Effect.gen(function* () {
          yield* writeAgent(path.agent_id)
          yield* agentExists(path.agent_id)
          const actor = actorOf(yield* CurrentPrincipal)
          return yield* reclassifications.reclassify(path.agent_id, payload, actor)
        })
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
)
