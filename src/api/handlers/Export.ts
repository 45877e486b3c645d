/**
 * GET /v1/agents/{agent_id}/export: the agent's evidence export (services/EvidenceExport.ts), for
 * readers of the agent, streamed as JSONL or CSV (docs/api.md "Evidence export"). A store failure
 * after the first bytes can no longer change the status: the connection is cut, and the file,
 * missing its final tree head line, does not verify (`candor verify --export` says so).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { ExportFormat } from "../../../core/schema/Export.js"
import { EvidenceExport } from "../../../services/EvidenceExport.js"
import { CandorApi } from "../Api.js"
import { readAgent } from "./AgentAccess.js"

const CONTENT_TYPES: Record<ExportFormat, string> = {
  jsonl: "application/x-ndjson; charset=utf-8",
  csv: "text/csv; charset=utf-8; header=present"
}

/** Agent ids may hold any non-space character; the file name keeps the safe ones. */
const fileName = (agentId: string, format: ExportFormat) => `${agentId.replace(/[^\w.-]/g, "_")}-export.${format}`

export const ExportLive = HttpApiBuilder.group(CandorApi, "export", (handlers) =>
  Effect.map(EvidenceExport, (evidence) =>
    handlers.handle("exportAgent", ({ path, urlParams }) =>
      Effect.gen(function* () {
        const agentId = path.agent_id
        yield* readAgent(agentId)
        const { from, to, format } = urlParams
        const text = yield* evidence.open(agentId, { format, from, to })
        const body = text.pipe(
          Stream.tapError((error) => Effect.logError("evidence export cut short", error)),
          Stream.encodeText
        )
        return HttpServerResponse.stream(body, {
          contentType: CONTENT_TYPES[format],
          headers: {
            "content-disposition": `attachment; filename="${fileName(agentId, format)}"`,
            "cache-control": "no-store"
          }
        })
      })
    )
  )
)
