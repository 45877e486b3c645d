/**
 * Reclassification routes (docs/reclassification.md). A reclassification is written by the
 * Reclassifications service (services/Reclassifications.ts): its governance entry, the record and
 * the card amendment in one transaction, with the scores before and after; the reads go through it too.
 *
 * Writes are Owner/Admin (`writeAgent`), reads any reader of the agent; an agent the caller may not
 * see, or that does not exist, is a 404.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { actorOf, CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { BadRequest } from "../../../adapters/http/ApiErrors.js"
import {
  COMPLIANCE_EXPORT_MAX_DAYS,
  COMPLIANCE_EXPORT_MAX_ROWS,
  complianceCsv
} from "../../../core/Reclassification.js"
import { Reclassifications } from "../../../services/Reclassifications.js"
import { CandorApi } from "../Api.js"
import { readAgent, writeAgent } from "./AgentAccess.js"

const DAY_MS = 86_400_000

export const ReclassificationsLive = HttpApiBuilder.group(CandorApi, "reclassifications", (handlers) =>
  Effect.map(Reclassifications, (reclassifications) =>
    handlers
      .handle("reclassify", ({ path, payload }) =>
        Effect.gen(function* () {
          yield* writeAgent(path.agent_id)
          yield* reclassifications.agentExists(path.agent_id)
          const actor = actorOf(yield* CurrentPrincipal)
          return yield* reclassifications.reclassify(path.agent_id, payload, actor)
        })
      )
      .handle("listReclassifications", ({ path }) =>
        Effect.gen(function* () {
          yield* readAgent(path.agent_id)
          yield* reclassifications.agentExists(path.agent_id)
          const list = yield* reclassifications.list(path.agent_id)
          return { agent_id: path.agent_id, reclassifications: list }
        })
      )
      .handle("listCardAmendments", ({ path }) =>
        Effect.gen(function* () {
          yield* readAgent(path.agent_id)
          yield* reclassifications.agentExists(path.agent_id)
          const amendments = yield* reclassifications.amendments(path.agent_id)
          return { agent_id: path.agent_id, card_amendments: amendments }
        })
      )
      .handle("recomputeReputation", ({ path }) =>
        Effect.gen(function* () {
          yield* writeAgent(path.agent_id)
          yield* reclassifications.agentExists(path.agent_id)
          return yield* reclassifications.recompute(path.agent_id)
        })
      )
      .handle("complianceExport", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const agentId = path.agent_id
          yield* readAgent(agentId)
          yield* reclassifications.agentExists(agentId)
          const now = yield* Clock.currentTimeMillis
          const to = urlParams.to ?? new Date(now).toISOString()
          const from = urlParams.from ?? new Date(Date.parse(to) - 30 * DAY_MS).toISOString()
          const span = Date.parse(to) - Date.parse(from)
          if (!(span > 0)) return yield* new BadRequest({ error: "from: must be before to" })
          if (span > COMPLIANCE_EXPORT_MAX_DAYS * DAY_MS)
            return yield* new BadRequest({
              error: `from, to: the window spans at most ${COMPLIANCE_EXPORT_MAX_DAYS} days`
            })
          const items = yield* reclassifications.exportRows(agentId, from, to, COMPLIANCE_EXPORT_MAX_ROWS + 1)
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
        })
      )
  )
)
