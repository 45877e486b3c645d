/**
 * GET /v1/stream: the live alert stream (docs/stream.md), for any authenticated caller, of the
 * events it may read. Streamed: the body is Server-Sent Events or NDJSON, never one JSON document.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import {
  BadRequest,
  Forbidden,
  InternalError,
  NotFound,
  ServiceUnavailable,
  TooManyRequests
} from "../../../adapters/http/ApiErrors.js"
import { AgentId, Identifier } from "../../../core/schema/Ids.js"

export const STREAM_FORMATS = ["sse", "ndjson"] as const
export type StreamFormat = (typeof STREAM_FORMATS)[number]

export const StreamParams = Schema.Struct({
  format: Schema.optionalWith(Schema.Literal(...STREAM_FORMATS), { default: () => "sse" as const, exact: true }),
  types: Schema.optionalWith(Schema.String.pipe(Schema.maxLength(2_048)), { exact: true }).annotations({
    description: "Comma-separated event types or prefixes ending in `*` (`verdict.*`); default: every type"
  }),
  agent_id: Schema.optionalWith(AgentId, { exact: true }).annotations({ description: "Only this agent's events" }),
  org_id: Schema.optionalWith(Identifier, { exact: true }).annotations({
    description: "Only this organization's events"
  }),
  since: Schema.optionalWith(Schema.String.pipe(Schema.maxLength(64)), { exact: true }).annotations({
    description: "Resume after this event id, or from this RFC 3339 time (Last-Event-ID wins when both are sent)"
  })
})

export const StreamHeaders = Schema.Struct({
  "last-event-id": Schema.optionalWith(Schema.String.pipe(Schema.maxLength(64)), { exact: true }).annotations({
    description: "The id of the last event received: the stream resumes after it"
  })
})

export class StreamApi extends HttpApiGroup.make("stream")
  .add(
    HttpApiEndpoint.get("stream", "/stream")
      .setUrlParams(StreamParams)
      .setHeaders(StreamHeaders)
      .addSuccess(
        HttpApiSchema.Text({ contentType: "text/event-stream" }).annotations({
          description: "`id:`, `event:`, `data:` (the event envelope as JSON) per event; `: heartbeat` every 15 s"
        })
      )
      .addSuccess(
        HttpApiSchema.Text({ contentType: "application/x-ndjson" }).annotations({
          description: "One event envelope per line (format=ndjson); an empty line as the heartbeat"
        })
      )
  )
  .addError(BadRequest)
  .addError(Forbidden)
  .addError(NotFound)
  .addError(TooManyRequests)
  .addError(ServiceUnavailable)
  .addError(InternalError)
  .middleware(Authentication) {}
