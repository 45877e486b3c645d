/**
 * A store failure as the API answers it: 503 with Retry-After when the database cannot be reached
 * right now (clients try again), else 500 "internal error". Logged with its operation, never with
 * request data; the driver's message only where it cannot quote a credential.
 *
 * `StoreFailureErrors` are the two answers as HttpApi error schemas of the whole API (src/api/Api.ts):
 * a handler that calls a domain service (services/) lets its `StoreError` through, and HttpApi encodes
 * it here, once for every route: handlers do not catch it. `storeFailure` is the same answer where
 * no API error schema applies: routes outside HttpApi (src/http/ReputationPageRoute.ts), a middleware
 * whose declared failures hold no `StoreError` (adapters/auth/CredentialAuthentication.ts), a
 * service answering with its own log line (services/McpServers.ts).
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { StoreError } from "../store/Store.js"
import { isUnavailable } from "../store/Unavailable.js"
import { InternalError, ServiceUnavailable } from "./ApiErrors.js"

const UNAVAILABLE = "the database cannot be reached right now; try again shortly"
const INTERNAL = "internal error"

const logUnavailable = (message: string, error: StoreError) =>
  Effect.logWarning(`${message}: database unreachable`).pipe(Effect.annotateLogs({ operation: error.operation }))

const logInternal = (message: string, error: StoreError, logCause: boolean) =>
  Effect.logError(message).pipe(
    Effect.annotateLogs({ operation: error.operation, ...(logCause ? { cause: String(error.cause) } : {}) })
  )

export const storeFailure =
  (message: string, options: { readonly logCause: boolean }) =>
  (error: StoreError): Effect.Effect<never, InternalError | ServiceUnavailable> =>
    isUnavailable(error)
      ? Effect.zipRight(logUnavailable(message, error), Effect.fail(new ServiceUnavailable({ error: UNAVAILABLE })))
      : Effect.zipRight(
          logInternal(message, error, options.logCause),
          Effect.fail(new InternalError({ error: INTERNAL }))
        )

const encodeOnly = (input: unknown, _: unknown, ast: Schema.Schema.AnyNoContext["ast"]) =>
  ParseResult.fail(new ParseResult.Forbidden(ast, input, "a store failure is only ever answered, never read"))

/**
 * One answer to a `StoreError`: the errors it applies to, and the body it is encoded as (tagged as the
 * ApiErrors answer of the same status, so src/api/ErrorBodies.ts gives the 503 its Retry-After). The
 * log line is written while the error is encoded: that is the one place every route's store failure
 * passes through.
 */
const answer = <Tag extends string>(
  tag: Tag,
  status: number,
  applies: (error: StoreError) => boolean,
  respond: (error: StoreError) => Effect.Effect<string>
) =>
  Schema.transformOrFail(
    Schema.Struct({ _tag: Schema.Literal(tag), error: Schema.String }),
    Schema.declare((input: unknown): input is StoreError => input instanceof StoreError && applies(input)),
    {
      strict: true,
      decode: encodeOnly,
      encode: (error) => Effect.map(respond(error), (message) => ({ _tag: tag, error: message }))
    }
  ).annotations(HttpApiSchema.annotations({ status }))

/** The store's failures as every route answers them: 503 (unreachable), else 500. */
export const StoreFailureErrors = [
  answer("ServiceUnavailable", 503, isUnavailable, (error) =>
    Effect.as(logUnavailable("store failure", error), UNAVAILABLE)
  ),
  answer(
    "InternalError",
    500,
    (error) => !isUnavailable(error),
    (error) => Effect.as(logInternal("store failure", error, true), INTERNAL)
  )
] as const
