/**
 * An agent's enforcement records (docs/api.md, "Agent data"; core/schema/EnforcementRecord.ts):
 * every 403 the gateway answered, every nudge it injected, every containment change, newest first,
 * with `kind`, `from` (at or after) and `to` (before) filters, `limit` 1..1000 (default 100),
 * `offset` >= 0 and the `total` of the filtered set.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { BadRequest, InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import { EnforcementKind, EnforcementRecordList } from "../../../core/schema/EnforcementRecord.js"
import { DateTimeString } from "../../../core/schema/Ids.js"
import { AgentPath, IntParam } from "./Checkpoints.js"

export const ENFORCEMENT_RECORD_LIMIT = { min: 1, max: 1000, default: 100 } as const

export const EnforcementRecordParams = Schema.Struct({
  kind: Schema.optionalWith(EnforcementKind, { exact: true }),
  from: Schema.optionalWith(DateTimeString, { exact: true }).annotations({
    description: "Records at or after this time (RFC 3339)"
  }),
  to: Schema.optionalWith(DateTimeString, { exact: true }).annotations({
    description: "Records before this time (RFC 3339)"
  }),
  limit: Schema.optionalWith(IntParam(ENFORCEMENT_RECORD_LIMIT.min, ENFORCEMENT_RECORD_LIMIT.max), {
    default: () => ENFORCEMENT_RECORD_LIMIT.default,
    exact: true
  }),
  offset: Schema.optionalWith(IntParam(0, Number.MAX_SAFE_INTEGER), { default: () => 0, exact: true })
})

export class EnforcementRecordsApi extends HttpApiGroup.make("enforcementRecords")
  .add(
    HttpApiEndpoint.get("listEnforcementRecords", "/agents/:agent_id/enforcement-records")
      .setPath(AgentPath)
      .setUrlParams(EnforcementRecordParams)
      .addSuccess(EnforcementRecordList)
  )
  .addError(BadRequest)
  .addError(NotFound)
  .addError(InternalError)
  .middleware(Authentication) {}
