/**
 * GET /v1/agents/{agent_id}/export: the evidence export (docs/api.md "Evidence export", lines in
 * docs/formats.md), for callers who may read the agent. Streamed: the body is JSON Lines or CSV,
 * never one JSON document.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { BadRequest, InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import { EXPORT_FORMATS } from "../../../core/schema/Export.js"
import { AgentId, DateTimeString } from "../../../core/schema/Ids.js"

export const ExportParams = Schema.Struct({
  from: Schema.optionalWith(DateTimeString, { exact: true }).annotations({
    description: "Checkpoints at or after this time (RFC 3339)"
  }),
  to: Schema.optionalWith(DateTimeString, { exact: true }).annotations({
    description: "Checkpoints before this time (RFC 3339)"
  }),
  format: Schema.optionalWith(Schema.Literal(...EXPORT_FORMATS), { default: () => "jsonl" as const, exact: true })
})

export class ExportApi extends HttpApiGroup.make("export")
  .add(
    HttpApiEndpoint.get("exportAgent", "/agents/:agent_id/export")
      .setPath(Schema.Struct({ agent_id: AgentId }))
      .setUrlParams(ExportParams)
      .addSuccess(
        HttpApiSchema.Text({ contentType: "application/x-ndjson" }).annotations({
          description: "One checkpoint per line in log order, the signed tree head last (format=jsonl)"
        })
      )
      .addSuccess(
        HttpApiSchema.Text({ contentType: "text/csv" }).annotations({
          description: "One row per checkpoint, the tree head last (format=csv)"
        })
      )
  )
  .addError(BadRequest)
  .addError(NotFound)
  .addError(InternalError)
  .middleware(Authentication) {}
