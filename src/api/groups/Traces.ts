/** GET /v1/traces/{trace_id}: one AP-Trace, for callers who may see its agent. */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import { APTrace } from "../../../core/schema/Trace.js"

export class TracesApi extends HttpApiGroup.make("traces")
  .add(
    HttpApiEndpoint.get("getTrace", "/traces/:trace_id")
      .setPath(Schema.Struct({ trace_id: Schema.String }))
      .addSuccess(APTrace)
  )
  .addError(NotFound)
  .addError(InternalError)
  .middleware(Authentication) {}
