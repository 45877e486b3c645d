/**
 * The API's errors: every body is `{"error": "<human-readable>"}` with the status codes
 * of docs/api.md, "Errors". Handlers fail with these; anything else becomes a 500 without details.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as Schema from "effect/Schema"

const body = { error: Schema.String }

export class BadRequest extends Schema.TaggedError<BadRequest>()(
  "BadRequest",
  body,
  HttpApiSchema.annotations({ status: 400 })
) {}
export class Unauthorized extends Schema.TaggedError<Unauthorized>()(
  "Unauthorized",
  body,
  HttpApiSchema.annotations({ status: 401 })
) {}
export class Forbidden extends Schema.TaggedError<Forbidden>()(
  "Forbidden",
  body,
  HttpApiSchema.annotations({ status: 403 })
) {}
export class NotFound extends Schema.TaggedError<NotFound>()(
  "NotFound",
  body,
  HttpApiSchema.annotations({ status: 404 })
) {}
/** The request contradicts what is stored (a name already taken, a limit reached). */
export class Conflict extends Schema.TaggedError<Conflict>()(
  "Conflict",
  body,
  HttpApiSchema.annotations({ status: 409 })
) {}
export class TooManyRequests extends Schema.TaggedError<TooManyRequests>()(
  "TooManyRequests",
  { ...body, retry_after_seconds: Schema.Int },
  HttpApiSchema.annotations({ status: 429 })
) {}
export class InternalError extends Schema.TaggedError<InternalError>()(
  "InternalError",
  body,
  HttpApiSchema.annotations({ status: 500 })
) {}
export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()(
  "ServiceUnavailable",
  body,
  HttpApiSchema.annotations({ status: 503 })
) {}
